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

import difflib
import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from repogate._files import read_text
from repogate._version import __version__
from repogate.errors import ContractError

SHA_RE = re.compile(r"^[0-9a-f]{7,40}$")

Profile = Literal["hermetic", "lifecycle"]
CriterionSource = Literal["ticket", "doc", "compatibility", "convention", "inferred"]
CriterionKind = Literal["stated", "implicit"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_sha(value: str) -> str:
    lowered = value.strip().lower()
    if not SHA_RE.match(lowered):
        raise ValueError(f"{value!r} is not a commit SHA: give 7 to 40 hex digits")
    return lowered


class PatchSource(_Model):
    """Where a patch comes from: a file, or ``git diff <base> <commit> -- <paths>`` minus ``exclude``.

    Exactly one of ``file`` and ``commit`` is set.
    """

    file: str | None = None
    commit: str | None = None
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

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
    ``lockfile`` or ``release_notes``.
    """

    id: str
    claim: str
    source: CriterionSource = "ticket"
    kind: CriterionKind = "stated"
    oracles: tuple[str, ...] = ()


class Requirement(_Model):
    """The requirement: a statement, typed criteria, exclusions and open questions."""

    statement: str
    criteria: tuple[Criterion, ...] = ()
    exclusions: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()


class EnvironmentRecipe(_Model):
    """How the environment is built, and who supplies it (the evaluator, or the agent as a task)."""

    supplied_by: Literal["evaluator", "agent"] = "evaluator"
    python: str = "3.11"
    install: tuple[str, ...] = ()
    network: bool = True
    lock_inputs: tuple[str, ...] = ()


class Permissions(_Model):
    """What the agent may do: editable and forbidden path globs, commands, budgets, network."""

    editable: tuple[str, ...] = ("**",)
    forbidden: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    time_budget_s: float = Field(default=600.0, gt=0)
    token_budget: int | None = Field(default=None, ge=0)
    network: bool = False


class OracleCommand(_Model):
    """An extra oracle command (lint, type check, schema compatibility) run on base and candidate."""

    name: str
    run: str


class Generator(_Model):
    """A generator: the command that derives ``outputs`` from the authoritative ``inputs``."""

    name: str
    command: str
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    network: bool = False


class Lockfile(_Model):
    """The dependency manager whose lockfile policy applies, and an optional new-dependency allowlist."""

    manager: Literal["uv", "pip-tools", "poetry"]
    manifest: str = "pyproject.toml"
    lockfile: str = "uv.lock"
    allow_new: tuple[str, ...] | None = None


class Oracles(_Model):
    """The test oracles: the test command, hidden tests, FAIL_TO_PASS and PASS_TO_PASS ids, and more.

    FAIL_TO_PASS and PASS_TO_PASS follow SWE-bench: tests that must go from failing at the base to
    passing on the candidate, and tests that passed at the base and must still pass.
    """

    test_command: str = "python -m pytest -p no:cacheprovider"
    hidden_tests: PatchSource | None = None
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    commands: tuple[OracleCommand, ...] = ()
    generators: tuple[Generator, ...] = ()
    lockfile: Lockfile | None = None
    release_notes: tuple[str, ...] = ()
    repeat: int = Field(default=1, ge=1, le=10)
    timeout_s: float = Field(default=1800.0, gt=0)


class Authority(_Model):
    """Who may let the change land: CODEOWNERS (read at the base), review evidence, approvals needed."""

    codeowners: str | None = None
    reviews: str | None = None
    min_approvals: int = Field(default=1, ge=0)
    author: str = "agent"


class Sentinel(_Model):
    """The bounded post-merge observation: follow-up commits (or a count), regeneration, matrix.

    ``changelog_policy`` resolves replay conflicts confined to ``changelog_paths``: ``union`` keeps
    both sides' lines, ``theirs`` takes the follow-up's version.
    """

    follow_ups: tuple[str, ...] = ()
    follow_up_count: int = Field(default=0, ge=0)
    first_parent: bool = True
    regenerate: bool = True
    python_matrix: tuple[str, ...] = ()
    window: str = ""
    residual_unknowns: tuple[str, ...] = ()
    changelog_policy: Literal["union", "theirs"] = "union"
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

    @field_validator("follow_ups")
    @classmethod
    def _shas(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_sha(v) for v in values)


class TransitionContract(_Model):
    """One task: the authorised base state and every condition for an accepted successor state.

    Load one with :func:`load_contract`. ``repo`` is a local path (relative to the contract file) or
    a URL. Raises nothing itself; :func:`load_contract` turns validation errors into
    :class:`~repogate.errors.ContractError`.
    """

    schema_version: Literal[1] = 1
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    repo: str
    base_commit: str
    target_branch: str = "main"
    target_commit: str | None = None
    profile: Profile = "hermetic"
    cohort: dict[str, str] = Field(default_factory=dict)
    requirement: Requirement
    environment: EnvironmentRecipe = EnvironmentRecipe()
    permissions: Permissions = Permissions()
    oracles: Oracles = Oracles()
    authority: Authority = Authority()
    sentinel: Sentinel = Sentinel()
    reference: PatchSource | None = None

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

    def policy_digest(self) -> str:
        """Return sha256 over the contract's canonical JSON and the evaluator version (hex)."""
        canonical = json.dumps(
            {"contract": self.model_dump(mode="json"), "evaluator": __version__},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()

    def with_base_dir(self, base_dir: Path) -> TransitionContract:
        """Return this contract with relative paths resolved against ``base_dir``."""
        self._base_dir = base_dir.resolve()
        return self


def _describe(error: Any, model: type[BaseModel]) -> str:
    loc = ".".join(str(p) for p in error["loc"]) or "(top level)"
    if error["type"] == "extra_forbidden":
        valid = _valid_keys(model, error["loc"][:-1])
        close = difflib.get_close_matches(str(error["loc"][-1]), valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown key {loc!r}{hint}; valid keys here: {', '.join(sorted(valid))}"
    return f"key {loc!r}: {error['msg']}"


def _valid_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part)) if hasattr(current, "model_fields") else None
        if field is None:
            return []
        current = _inner_model(field.annotation)
        if current is None:
            return []
    return list(current.model_fields) if hasattr(current, "model_fields") else []


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def parse_contract(data: dict[str, Any], source: str, base_dir: Path) -> TransitionContract:
    """Validate ``data`` (parsed TOML) as a contract; ``source`` names it in errors.

    Raises:
        ContractError: naming ``source``, the first bad key and what is expected.
    """
    try:
        contract = TransitionContract.model_validate(data)
    except ValidationError as exc:
        problems = [_describe(e, TransitionContract) for e in exc.errors()]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ContractError(
            f"contract {source}: {problems[0]}{more}",
            "fix the key and run again; `repogate schema contract` prints every valid key",
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
    contract._file = path.resolve()
    return contract


def contract_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of a contract, for editors and validators."""
    return TransitionContract.model_json_schema()
