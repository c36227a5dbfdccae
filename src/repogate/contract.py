"""The transition contract: one task, written by a person as TOML and validated here.

A contract names the authorised base state S0 and everything that decides whether a proposed change
makes an accepted successor S1: the requirement, the environment recipe, what the agent may do, the
oracles, who holds authority, what the sentinel replays afterwards, and the profile that selects the
hard gates. Paths inside a contract are relative to the contract file.

Patches (hidden tests, the reference patch) are either a file or derived from the repository's own
history as ``git diff <base> <commit> -- <paths>``, so a contract for a public repository carries
identifiers only.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from repogate._files import read_text
from repogate._model import FrozenModel, SchemaVersion
from repogate._problems import every_problem, what_to_fix
from repogate._version import __version__
from repogate.errors import ContractError
from repogate.vocabulary import TASK_ID_MAX, TASK_ID_PATTERN, DerivationKind
from repogate.vocabulary import Profile as Profile  # defined beside the check table; kept here

SHA_RE = re.compile(r"^[0-9a-f]{7,40}$")

CriterionSource = Literal[
    "ticket", "issue", "commit message", "doc", "compatibility", "convention", "inferred"
]
CriterionKind = Literal["stated", "implicit"]
ReleasePolicy = Literal["file", "fragments", "none"]
"""A project's release-notes practice: a changelog file, a fragments folder, or none."""


class _Model(FrozenModel):
    # Attribute docstrings become the JSON Schema's descriptions: the contract author's reference.
    model_config = ConfigDict(use_attribute_docstrings=True)


def _check_sha(value: str) -> str:
    lowered = value.strip().lower()
    if not SHA_RE.match(lowered):
        raise ValueError(f"{value!r} is not a commit SHA: give 7 to 40 hex digits")
    return lowered


class PatchSource(_Model):
    """Where a patch comes from: a file, or ``git diff <base> <commit> -- <paths>`` minus ``exclude``.

    Exactly one of ``file`` and ``commit`` is set. Examples (TOML)::

        reference = { file = "gold.diff" }
        hidden_tests = { commit = "09161fc9", paths = ["tests/"] }
        reference = { commit = "09161fc9", exclude = ["tests/**", "*.md"] }
    """

    file: str | None = None
    """A patch file (``git diff --binary`` output), relative to the contract file."""
    commit: str | None = None
    """A commit of the repository (7-40 hex digits): the patch is ``git diff <base> <commit>``."""
    paths: tuple[str, ...] = ()
    """With ``commit``: only these paths (contract globs: ``*`` stays in one folder, ``**`` crosses
    folders, a folder selects everything below it); empty selects every path."""
    exclude: tuple[str, ...] = ()
    """With ``commit``: paths to leave out (contract globs, as ``paths``)."""

    @field_validator("commit")
    @classmethod
    def _sha(cls, value: str | None) -> str | None:
        return None if value is None else _check_sha(value)

    @model_validator(mode="after")
    def _one_source(self) -> PatchSource:
        if (self.file is None) == (self.commit is None):
            raise ValueError("give exactly one of 'file' or 'commit'")
        return self


class Criterion(_Model):
    """One acceptance criterion: a claim, where it comes from, and the oracles that check it.

    ``oracles`` names test ids (``path::name``), ``generator:<name>``, ``command:<name>``,
    ``lockfile`` or ``release_notes``. Example (TOML)::

        [[requirement.criteria]]
        id = "R1"
        claim = "retries honour the configured timeout"
        source = "ticket"
        oracles = ["tests/test_retry.py::test_timeout", "generator:client"]
    """

    id: str
    """A short id, unique in the contract (``R1``)."""
    claim: str
    """What must hold, in one sentence."""
    source: CriterionSource = "ticket"
    """Where the claim comes from: the ticket, documentation, a compatibility rule, a repository
    convention, or inferred by the task author."""
    kind: CriterionKind = "stated"
    """``stated`` in the ticket, or ``implicit`` (a requirement the agent must recover)."""
    oracles: tuple[str, ...] = ()
    """The oracles that check the claim: test ids, ``generator:<name>``, ``command:<name>``,
    ``lockfile`` or ``release_notes``. A criterion with no oracle cannot be met."""


class Convention(_Model):
    """A repository convention a task relies on (``AGENTS.md``, a codegen README, a tool config).

    Example (TOML)::

        [[requirement.conventions]]
        path = "AGENTS.md"
        criteria = ["R2"]
    """

    path: str
    """The file, relative to the repository root, as it exists at the base."""
    criteria: tuple[str, ...] = ()
    """The ids of the criteria that depend on it (``repogate tasks vary --ablate`` hides it)."""


class Requirement(_Model):
    """The requirement: a statement, typed criteria, exclusions and open questions."""

    statement: str
    """The ticket's text, as the agent sees it."""
    criteria: tuple[Criterion, ...] = ()
    """The typed acceptance criteria (gate R checks each against its oracles)."""
    exclusions: tuple[str, ...] = ()
    """What the change must not do or need not cover."""
    open_questions: tuple[str, ...] = ()
    """Questions the ticket leaves open, recorded for the requirement receipt."""
    conventions: tuple[Convention, ...] = ()
    """Repository conventions the task relies on, for convention ablation."""


class Service(_Model):
    """A service the tests need (an HTTP server, a database), started on loopback inside the sandbox.

    It starts before every test run, in the same sandbox as the tests (loopback only: no network
    beyond the machine's own ``127.0.0.1`` in that sandbox), and is stopped after the run. One that
    does not become ready in time is an environment error (the evaluator's), never the agent's.
    Example (TOML)::

        [[environment.services]]
        name = "httpbin"
        start = "python -m gunicorn -b 127.0.0.1:8765 httpbin:app"
        ready = '''python -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8765/get')"'''
        env = { HTTPBIN_URL = "http://127.0.0.1:8765/" }
    """

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """A short name, unique in the recipe (shown in receipts and errors)."""
    start: str = Field(min_length=1)
    """The shell command that starts it (run with ``sh -c`` in the checkout, the environment
    activated); it keeps running in the background while the tests run."""
    ready: str = Field(min_length=1)
    """A shell command that exits 0 once the service answers; polled until ``ready_timeout_s``."""
    stop: str = ""
    """A shell command run after the tests; the service's process is then terminated anyway."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables the tests see that point them at the service (``HTTPBIN_URL``)."""
    ready_timeout_s: StrictFloat = Field(default=30.0, gt=0, le=600)
    """How long the service may take to become ready, in seconds."""
    tls: StrictBool = Field(default=False, exclude_if=lambda value: not value)
    """Answer TLS as well as plain HTTP on ``port`` (tests that swap ``http://`` for ``https://``
    on the service's address): per test run the harness makes a throwaway CA and a certificate
    for ``127.0.0.1`` and ``localhost`` (:mod:`repogate.oracles.service_tls`), and a front on
    ``port`` inside the sandbox ends TLS or passes plain bytes through to the service, which
    listens on the loopback port given in ``REPOGATE_SERVICE_PORT``. The tests trust the CA
    through ``REQUESTS_CA_BUNDLE``, ``SSL_CERT_FILE``, ``CURL_CA_BUNDLE`` and ``ca_bundles``.
    For protocols whose client speaks first (HTTP): the front waits for that first byte. Left
    out of dumps while false, so digests stay as they were."""
    port: StrictInt | None = Field(
        default=None, ge=1, le=65535, exclude_if=lambda value: value is None
    )
    """With ``tls``: the loopback port the tests reach (the front's); the ``start`` command binds
    ``$REPOGATE_SERVICE_PORT`` instead."""
    ca_bundles: tuple[str, ...] = Field(default=(), exclude_if=lambda value: not value)
    """With ``tls``: checkout files a client reads as its CA bundle whatever the variables say
    (``requests/cacert.pem``: old requests' ``Session.send`` reads it); each is shown to the
    test run with the harness CA appended, through a read-only bind over it (the file in the
    tree is unchanged; a file the tree lacks is left out)."""

    @model_validator(mode="after")
    def _tls_fields_together(self) -> Service:
        if self.tls and self.port is None:
            raise ValueError("tls = true needs port = <the loopback port the tests reach>")
        if not self.tls and (self.port is not None or self.ca_bundles):
            raise ValueError("port and ca_bundles are read with tls = true only; add tls = true")
        for path in self.ca_bundles:
            parts = PurePosixPath(path).parts
            if not parts or path.startswith("/") or ".." in parts:
                raise ValueError(f"ca_bundles entry {path!r} must be a path inside the checkout")
        return self


class EnvironmentRecipe(_Model):
    """How the environment is built, and who supplies it (the evaluator, or the agent as a task).

    A test's result must not depend on who runs repogate: every command runs under the recipe's
    ``timezone`` and ``locale``, never the caller's.
    """

    supplied_by: Literal["evaluator", "agent"] = "evaluator"
    """Who builds the environment: the evaluator (from this recipe) or the agent (as part of the
    task). With ``agent``, the agent gets no prepared environment and must leave
    ``environment.toml`` (``python``, ``install``, ``lock_inputs``) in ``$REPOGATE_OUTPUT``
    (:mod:`repogate.environments.agent_recipe`, ``docs/agents.md``); gate E builds it at the base
    with this recipe's backend, network, timezone and locale and grades it in stages (built,
    imports, collects, reproduces), a failure failing ``environment_reproduced``. The evaluator
    still builds this recipe: the hidden tests and every later gate run in it, never in the
    agent's."""
    backend: Literal["uv", "image"] = Field(default="uv", exclude_if=lambda name: name == "uv")
    """How the environment is made (:data:`repogate.environments.BACKENDS`): ``uv``, a uv virtual
    environment from an interpreter on this machine; ``image``, every command in a container
    image's root file system under bubblewrap (``image`` names it). Left out of the contract's
    dumps (so of its digests and the environment cache key) while ``uv``, so they stay as they
    were before."""
    image: str | None = Field(default=None, exclude_if=lambda value: value is None)
    """The ``image`` backend's image: a ``docker save``/``podman save`` archive (Docker or OCI
    layout) or a root file system tarball, relative to the task set or absolute. Left out of the
    contract's dumps while unset."""
    python: str = "3.11"
    """The interpreter version for the virtual environment (``3.11``, ``3.8``), found as uv finds it;
    with ``backend = "image"``, the version the image's ``python3`` must have, or the absolute path
    of the image's interpreter (``/opt/miniconda3/envs/testbed/bin/python``)."""
    install: tuple[str, ...] = ()
    """Install commands run in the checkout of the base commit, in order (``uv pip install -e .``);
    empty installs the project from its own files."""
    network: StrictBool = True
    """Whether the install commands may reach the package index."""
    lock_inputs: tuple[str, ...] = ()
    """Repository files whose content keys the environment cache (lockfiles, requirement files)."""
    timezone: str = Field(default="UTC", pattern=r"^[A-Za-z0-9_+:/.,-]+$")
    """``TZ`` for every command in the environment (tests, installs, the agent), whoever runs it."""
    locale: str = Field(default="C.UTF-8", pattern=r"^[A-Za-z0-9_.@-]+$")
    """``LANG`` and ``LC_ALL`` for every command in the environment, whoever runs it."""
    resolve_as_of: Literal["now", "base_commit"] = "now"
    """``base_commit`` resolves open requirements as of the base commit's committer date
    (``UV_EXCLUDE_NEWER``, uv commands only); the bound used is recorded in the receipt."""
    services: tuple[Service, ...] = ()
    """Services the tests need, started on loopback in the sandbox around every test run; part
    of the environment digest and of the environment's receipt."""

    _base_dir: Path | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _image_with_its_backend(self) -> EnvironmentRecipe:
        if self.backend == "image" and not self.image:
            raise ValueError('backend "image" needs image = "<saved image or root tarball>"')
        if self.backend != "image" and self.image is not None:
            raise ValueError('image is read by backend "image" only; add backend = "image"')
        return self

    def image_archive(self) -> Path | None:
        """Return ``image`` as a path on this machine (relative ones against the task set), or None."""
        if self.image is None:
            return None
        return ((self._base_dir or Path.cwd()) / self.image).resolve()

    @field_validator("services")
    @classmethod
    def _unique_services(cls, values: tuple[Service, ...]) -> tuple[Service, ...]:
        names = [s.name for s in values]
        if len(set(names)) != len(names):
            raise ValueError(f"service names must be unique (got {', '.join(names)})")
        return values


_LATER_BUDGETS = ("cost_budget_usd", "sample_budget")
"""Permissions added after contracts were first digested: left out of the digest while unset."""


class Permissions(_Model):
    """What the agent may do: editable and forbidden path globs, commands, budgets, network.

    The three ``max_*`` limits bound what the agent may leave behind; passing one fails the
    agent's ``edits_permitted`` check with the figure, measured without reading file contents
    (sizes from ``lstat``, the patch read only up to its limit).
    """

    editable: tuple[str, ...] = ("**",)
    """Globs of the paths the agent may change (``src/**``); a change elsewhere fails ``edits_permitted``."""
    forbidden: tuple[str, ...] = ()
    """Globs the agent must not change even where ``editable`` allows it."""
    commands: tuple[str, ...] = ()
    """Commands the agent may ask the harness to run for it (recorded in the task view)."""
    time_budget_s: StrictFloat = Field(default=600.0, gt=0)
    """The agent's wall-clock budget, in seconds; at the budget it is stopped and judged on its files."""
    token_budget: StrictInt | None = Field(default=None, ge=0)
    """The agent's token budget (None: unlimited). A model-driven agent (``baseline:``, ``mini:``)
    stops with status ``budget_exceeded`` on reaching it; for others it is reported only."""
    cost_budget_usd: StrictFloat | None = Field(default=None, ge=0)
    """The agent's budget in US dollars (None: unlimited); enforced for model-driven agents."""
    sample_budget: StrictInt | None = Field(default=None, gt=0)
    """Most repair samples the ``baseline:`` agent may draw (None: its own setting, 4)."""
    network: StrictBool = False
    """Whether the agent may reach the network."""
    max_workspace_bytes: StrictInt = Field(default=2 * 1024**3, gt=0)
    """Most bytes (apparent sizes, every ``.git`` left out) the agent's workspace may hold when it
    stops; passing it fails ``edits_permitted`` with the figure. Default 2 GiB."""
    max_workspace_files: StrictInt = Field(default=200_000, gt=0)
    """Most files and folders (every ``.git`` left out) the agent's workspace may hold when it
    stops; passing it fails ``edits_permitted`` with the figure. Default 200,000."""
    max_patch_bytes: StrictInt = Field(default=10 * 1024**2, gt=0)
    """Most bytes the candidate's binary diff against the base may have; passing it fails
    ``edits_permitted`` with the figure. Default 10 MiB."""


class OracleCommand(_Model):
    """An extra oracle command (lint, type check, schema compatibility) run on base and candidate."""

    name: str
    """The name criteria link to as ``command:<name>``."""
    run: str
    """The shell command, run in the candidate's tree with its environment activated; a failure
    the base does not have fails ``regression_tests_passed``."""


class Generator(_Model):
    """A generator: the command that derives ``outputs`` from the authoritative ``inputs``."""

    name: str
    """The name criteria link to as ``generator:<name>``."""
    command: str
    """The command that regenerates ``outputs`` (run in a clean tree; ``git status`` must then be empty)."""
    inputs: tuple[str, ...] = ()
    """Globs of the authoritative files the outputs derive from."""
    outputs: tuple[str, ...] = ()
    """Globs of the derived files; a hand edit to them that regeneration undoes fails freshness."""
    program: tuple[str, ...] = ()
    """Globs of the generator's own code (script, templates). Empty: the files its command names
    (``python tools/gen.py``, ``python -m tools.gen``). A patch that changes one is regenerated
    with the base's generator too, and the change is reported as needing its owner's review."""
    network: StrictBool = False
    """Whether the generator may reach the network."""


class Lockfile(_Model):
    """The dependency manager whose lockfile policy applies, and an optional new-dependency allowlist."""

    manager: Literal["uv", "pip-tools", "poetry"]
    """The tool that writes the lockfile; its lock command is replayed to check the lockfile."""
    manifest: str = "pyproject.toml"
    """The manifest that declares the dependencies."""
    lockfile: str = "uv.lock"
    """The lockfile, repository-relative (the manager's default name when left as ``uv.lock``)."""
    allow_new: tuple[str, ...] | None = None
    """Distribution names a patch may add (PEP 503 normalised); None allows any, empty allows none."""


class Oracles(_Model):
    """The test oracles: the test command, hidden tests, FAIL_TO_PASS and PASS_TO_PASS ids, and more.

    FAIL_TO_PASS and PASS_TO_PASS follow SWE-bench: tests that must go from failing at the base to
    passing on the candidate, and tests that passed at the base and must still pass.

    ``regression`` says which tests must keep passing: ``base-passing`` (the default) every test
    that passed in the base's whole-suite run, ``declared`` only the PASS_TO_PASS ids (SWE-bench's
    rule, whose task sets list only the tests of the touched test files). Narrowing is recorded in
    the ``V-regression`` receipt and shown in ``regression_tests_passed``'s detail.
    """

    test_command: str = "python -m pytest -p no:cacheprovider"
    """The pytest command; the harness adds its JUnit XML report and the test ids."""
    hidden_tests: PatchSource | None = None
    """The tests the agent never sees, applied on top of the base and of the candidate."""
    fail_to_pass: tuple[str, ...] = ()
    """Test ids (``path::name``, as pytest prints them) that fail at the base and must pass."""
    pass_to_pass: tuple[str, ...] = ()
    """Test ids that pass at the base and must still pass."""
    commands: tuple[OracleCommand, ...] = ()
    """Extra oracle commands (lint, type check, schema compatibility)."""
    generators: tuple[Generator, ...] = ()
    """Generators whose outputs must be fresh (gate V, ``generated_artifacts_fresh``)."""
    lockfile: Lockfile | None = None
    """The lockfile policy (``dependency_policy_passed``); lockfiles are detected by name without it."""
    release_notes: tuple[str, ...] = ()
    """Globs of release-notes files or folders where the patch must add an entry."""
    release_policy: ReleasePolicy | None = None
    """The project's release-notes practice: ``file`` (lines added to a changelog such as
    ``CHANGES.rst``), ``fragments`` (a new file in a folder such as towncrier's ``changelog.d/``),
    or ``none`` (it keeps no per-change notes: ``release_receipt_present`` is not required and
    passes saying so). Unset: an entry is any new line under ``release_notes``."""
    repeat: StrictInt = Field(default=1, ge=1, le=10)
    """How many times the candidate's tests run; a test must pass in every run."""
    timeout_s: StrictFloat = Field(default=1800.0, gt=0)
    """The budget of one test run, in seconds; a run past it is killed with its processes."""
    regression: Literal["base-passing", "declared"] = "base-passing"
    """Which tests must keep passing: ``base-passing`` (every test that passed in the base's
    whole-suite run; the default) or ``declared`` (only the PASS_TO_PASS ids, SWE-bench's rule).
    Narrowing is recorded in the ``V-regression`` receipt and shown in the check's detail."""
    differential: Literal["off", "soft", "hard"] = "soft"
    """The differential oracle (``behaviour_matches_reference``): the functions the candidate or
    the reference changed, called on Hypothesis-generated inputs at both states in separate
    sandboxed processes. ``soft`` (the default) reports it beside the verdict in every profile,
    ``hard`` makes it a hard check (a difference, or no function it could call, rejects or
    errors the attempt), ``off`` does not run it."""
    strategies: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Hypothesis strategies for the differential oracle, by function (``module.function`` or
    ``module.Class.method``) and parameter name: the name of a function of
    ``hypothesis.strategies`` that takes no argument (``text``, ``integers``, ``booleans`` ...).
    Parameters not named are drawn from their annotations and the literals the tests pass."""
    runner_under_test: StrictBool = Field(default=False, exclude_if=lambda value: not value)
    """The repository is the test runner itself (pytest-dev/pytest: its ``pytest``, ``_pytest``
    and ``py`` modules run its own tests). With it, the guard (``harness_untampered``) trusts
    those modules of the checkout as the runner, and only those; every other tamper check
    stays. The assurance is weaker and said so in every decision, the terminal and the
    manifest: the runner under test produced the verdicts, and tamper evidence for the runner
    is lost. Gate I compensates: a candidate that edits one of the runner's files (its
    verdict-producing ones, :data:`repogate.vocabulary.RUNNER_VERDICT_FILES`, or any other the
    guard trusts) fails ``oracle_untouched`` unless the reference edits that file too.
    ``tasks import`` sets it when the base tree holds the ``_pytest`` package beside ``pytest``
    (``src/`` or the top). Left out of the
    contract's dump while False, so the digest of every other contract is as it was."""

    @field_validator("strategies")
    @classmethod
    def _known_strategies(cls, value: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        if value:
            for function, params in value.items():
                for param, name in params.items():
                    if not valid_strategy_name(name):
                        raise ValueError(
                            f"{function}.{param} = {name!r} is not a function of "
                            "hypothesis.strategies taking no argument (e.g. 'text', 'integers')"
                        )
        return value


class Authority(_Model):
    """Who may let the change land: CODEOWNERS (read at the base), review evidence, approvals needed."""

    codeowners: str | None = None
    """The CODEOWNERS file read at the base; None looks where GitHub does (``.github/``, root,
    ``docs/``; https://docs.github.com/en/repositories/managing-your-repositorys-settings-and-features/customizing-your-repository/about-code-owners)."""
    reviews: str | None = None
    """A review-evidence JSON file (``repogate schema reviews``), relative to the contract;
    ``{agent}`` is replaced by the agent's name."""
    min_approvals: StrictInt = Field(default=1, ge=0)
    """Approvals needed, each bound to the candidate's patch digest."""
    author: str = "agent"
    """The change's author, who can never approve it."""
    branch_protection: str | None = None
    """GitHub's ``branches/B/protection`` JSON for the target branch, relative to the contract:
    its required approving review count applies when higher than ``min_approvals``."""
    simulated_reviews: StrictBool = False
    """For demonstrations only: the review file was written before any candidate existed, and a
    ``{{candidate}}`` patch digest in it stands for the digest the candidate gets. Real review
    evidence names digests, and the placeholder is refused without this switch."""


class Sentinel(_Model):
    """The bounded post-merge observation: follow-up commits (or a count), regeneration, matrix.

    ``changelog_policy`` resolves replay conflicts confined to ``changelog_paths``: ``union`` keeps
    both sides' lines, ``theirs`` takes the follow-up's version.
    """

    follow_ups: tuple[str, ...] = ()
    """The real follow-up commits to replay after the merge, oldest first."""
    after: str | None = None
    """The commit the window starts after (an imported instance's fix as it landed on the target
    branch): the first follow-up's change is taken from it, so the real commits between it and the
    first follow-up replay too. None: the reference commit when the reference names one, else the
    base."""
    follow_up_count: StrictInt = Field(default=0, ge=0)
    """Without ``follow_ups``: replay this many commits after the base on the target branch."""
    first_parent: StrictBool = True
    """Walk the target branch's first parents only when counting follow-ups."""
    regenerate: StrictBool = True
    """Rerun the generators on the merged state before replaying."""
    python_matrix: tuple[str, ...] = ()
    """Extra interpreter versions the merged state's tests run on."""
    window: str = ""
    """The observation window, in words, for the sentinel receipt."""
    residual_unknowns: tuple[str, ...] = ()
    """What the sentinel cannot observe, recorded in its receipt."""
    changelog_policy: Literal["union", "theirs"] = "union"
    """How replay conflicts confined to ``changelog_paths`` are resolved."""
    changelog_paths: tuple[str, ...] = (
        "CHANGES.rst",
        "CHANGES.md",
        "CHANGELOG.md",
        "CHANGELOG.rst",
        "NEWS.rst",
        "NEWS.md",
        "changelog.d/**",
        "newsfragments/**",
    )
    """Globs of changelog files whose replay conflicts ``changelog_policy`` resolves."""

    @field_validator("follow_ups")
    @classmethod
    def _shas(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_sha(v) for v in values)

    @field_validator("after")
    @classmethod
    def _after_sha(cls, value: str | None) -> str | None:
        return None if value is None else _check_sha(value)


class Derivation(_Model):
    """How ``repogate tasks vary`` derived this contract from another: an intervention.

    The derived base is the parent's base plus one commit (``injected_commit``) made in a copy of
    the parent's repository, never in its real history.
    """

    kind: DerivationKind
    """The injection kind, or ``ablate`` for a convention hidden from the agent."""
    parent_id: str
    """The id of the contract it was derived from (the pairing key of reports)."""
    parent_base_commit: str
    """The parent's base commit, the injected commit's parent."""
    paths: tuple[str, ...] = ()
    """The paths the injected commit adds, changes or removes."""
    trap_paths: tuple[str, ...] = ()
    """Paths an agent should leave alone (the injected test, the unmarked derived output)."""
    authoritative_paths: tuple[str, ...] = ()
    """Globs of the files where the fix belongs instead (the generator's inputs, the lockfile)."""
    parameters: dict[str, str] = Field(default_factory=dict)
    """What the injection chose (which file, which line, which version), for a rebuild."""
    description: str = ""
    """One sentence: what was planted."""


class TransitionContract(_Model):
    """One task: the authorised base state and every condition for an accepted successor state.

    Load one with :func:`load_contract`. ``repo`` is a local path (relative to the contract file) or
    a URL. Raises nothing itself; :func:`load_contract` turns validation errors into
    :class:`~repogate.errors.ContractError`.
    """

    schema_version: SchemaVersion = 1
    """The contract format's version."""
    id: str = Field(pattern=TASK_ID_PATTERN, max_length=TASK_ID_MAX)
    """The task's id, unique in a run (letters, digits, ``._-``)."""
    repo: str
    """The repository: a local path (relative to the contract file) or a URL looked up in
    ``--repo-cache``."""
    base_commit: str
    """The authorised base state S0 (7-40 hex digits)."""
    target_branch: str = "main"
    """The branch the change would land on (merge and sentinel follow it)."""
    target_commit: str | None = None
    """The target branch's head to merge into; None merges into the base commit."""
    profile: Profile = "hermetic"
    """Which hard checks decide: ``hermetic`` (tests, integrity, requirements, environment,
    dependencies) or ``lifecycle`` (adds generated artefacts, authority, sentinel, release notes)."""
    cohort: dict[str, str] = Field(default_factory=dict)
    """Free-form tags reports group by (``coupling = "high"``); they never change a verdict."""
    requirement: Requirement
    """What the change must achieve."""
    environment: EnvironmentRecipe = EnvironmentRecipe()
    """How the environment is reconstructed from the base commit."""
    permissions: Permissions = Permissions()
    """What the agent may change and use."""
    oracles: Oracles = Oracles()
    """How the candidate is verified."""
    authority: Authority = Authority()
    """Who may let the change land."""
    sentinel: Sentinel = Sentinel()
    """What is replayed after the merge."""
    reference: PatchSource | None = None
    """The reference (gold) patch; the ``gold`` agent submits it."""
    derivation: Derivation | None = None
    """Set on a contract ``repogate tasks vary`` derived (an injection or an ablation)."""

    _base_dir: Path = PrivateAttr(default=Path())
    _file: Path | None = PrivateAttr(default=None)

    @field_validator("base_commit", "target_commit")
    @classmethod
    def _sha(cls, value: str | None) -> str | None:
        return None if value is None else _check_sha(value)

    @property
    def base_dir(self) -> Path:
        """The folder the contract's relative paths are resolved against."""
        return self._base_dir

    @property
    def source_file(self) -> Path | None:
        """The file the contract was loaded from (None when it was built in memory)."""
        return self._file

    def private_files(self) -> tuple[Path, ...]:
        """Return the files an agent must never read: this contract and its patch files."""
        files = [self._file] if self._file else []
        for source in (self.oracles.hidden_tests, self.reference):
            if source is not None and source.file is not None:
                files.append(self.resolve(source.file))
        return tuple(files)

    def resolve(self, relative: str) -> Path:
        """Return ``relative`` (a path written in the contract) as a path on this machine."""
        return (self._base_dir / relative).resolve()

    def policy_json(self) -> str:
        """Return the canonical JSON :meth:`policy_digest` is taken over.

        ``{"contract": <the contract as JSON>, "evaluator": <repogate's version>}``, keys sorted,
        no spaces. A run folder keeps it, so a resumption with a changed contract can name the
        keys that changed.
        """
        dumped = self.model_dump(mode="json")
        # Budgets added later leave the digest of a contract that does not set them unchanged,
        # so runs made before them still resume.
        for key in _LATER_BUDGETS:
            if dumped["permissions"][key] is None:
                del dumped["permissions"][key]
        return json.dumps(
            {"contract": dumped, "evaluator": __version__},
            sort_keys=True,
            separators=(",", ":"),
        )

    def policy_digest(self) -> str:
        """Return sha256 over the contract's canonical JSON and the evaluator version (hex)."""
        return hashlib.sha256(self.policy_json().encode()).hexdigest()

    def with_base_dir(self, base_dir: Path) -> TransitionContract:
        """Return a copy of this contract whose relative paths resolve against ``base_dir``.

        The contract itself is frozen and left unchanged.
        """
        environment = self.environment.model_copy()
        environment._base_dir = base_dir.resolve()
        copy = self.model_copy(update={"environment": environment})
        copy._base_dir = base_dir.resolve()
        return copy


def parse_contract(data: dict[str, Any], source: str, base_dir: Path) -> TransitionContract:
    """Validate ``data`` (parsed TOML) as a contract; ``source`` names it in errors.

    Raises:
        ContractError: naming ``source``, every bad key and what is expected
            (:func:`repogate._problems.every_problem`).
    """
    try:
        contract = TransitionContract.model_validate(data)
    except ValidationError as exc:
        raise ContractError(
            f"contract {source}: {every_problem(exc, TransitionContract)}",
            f"{what_to_fix(exc)} and run again; `repogate schema contract` prints every valid "
            "key and what it takes",
        ) from None
    return contract.with_base_dir(base_dir)


def load_contract(path: Path) -> TransitionContract:
    """Read and validate a contract TOML file.

    Args:
        path: the ``.toml`` file.

    Returns:
        The validated, frozen contract, its relative paths resolved against ``path``'s folder.

    Raises:
        ContractError: the file is missing, is not TOML, or does not validate; the message names
            the file, the key and what is expected.
    """
    text = read_text(path, "contract", ContractError, "give the path of a .toml contract")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ContractError(
            f"contract {path} is not valid TOML: {exc}", "fix the TOML syntax at that line"
        ) from None
    contract = parse_contract(data, str(path), path.parent)
    contract._file = path.resolve()  # set once, on the copy this function made and owns
    return contract


def contract_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of a contract, for editors and validators."""
    return TransitionContract.model_json_schema()


def valid_strategy_name(name: str) -> bool:
    """True when ``name`` is a function of ``hypothesis.strategies`` callable with no argument.

    The rule for ``oracles.strategies`` values; Hypothesis is imported on first use only.
    """
    from hypothesis import strategies as st

    function = getattr(st, name, None)
    if not callable(function) or name.startswith("_"):
        return False
    try:
        function()
    except TypeError:
        return False
    return True
