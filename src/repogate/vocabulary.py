"""The names repogate's records use, defined once: hard checks and gate ids.

A check name or gate id is a ``Literal`` type, so a misspelt name anywhere in the code is a type
error rather than "no receipt reports this check". Each name is documented below, beside its
definition: what it observes and which of the seed's gates it belongs to (R requirements,
E environment, I integrity, V verification, A authority, S sentinel; the identity checks bind the
evidence chain and belong to gate I).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Literal, NamedTuple, get_args

TASK_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"
"""A task id: letters, digits and ``._+-``, starting with a letter or digit (``+`` joins a derived
task's kind to its parent's id: ``payments+stale-lockfile``). An id names folders
(``contracts/<id>``, a run's attempt folders), so one matching this is always a single safe path
component (never ``..``, never absolute, no separator)."""
TASK_ID_MAX = 200
"""The longest task id: it names folders, whose names the file system limits (255 bytes)."""


InjectionKind = Literal[
    "stale-lockfile",
    "irrelevant-failing-test",
    "misleading-comment",
    "generated-file-trap",
]
"""A failure ``repogate tasks vary --inject`` plants at a task's base (see :data:`INJECTIONS`)."""

INJECTIONS: dict[InjectionKind, str] = {
    "stale-lockfile": "the manifest's version moves on, so the lockfile no longer matches it; "
    "the project's lock tool regenerates it, a hand edit fails the dependency policy",
    "irrelevant-failing-test": "a test unrelated to the requirement fails at the base; it is not "
    "graded, and editing, skipping or deleting it fails oracle_untouched",
    "misleading-comment": "a comment at the edit site states a wrong rule; the requirement's "
    "oracles decide",
    "generated-file-trap": "a generator's output loses its generated marker, so it looks like the "
    "place to edit; editing it instead of its source fails generated_artifacts_fresh",
}
"""Every injection kind, documented (Gate V of the seed: failure injection)."""

DerivationKind = Literal[InjectionKind, "ablate"]
"""How a derived contract was made: an injection, or a convention's ablation."""


def is_task_id(value: str) -> bool:
    """True when ``value`` matches :data:`TASK_ID_PATTERN` and :data:`TASK_ID_MAX` (a safe folder name)."""
    return len(value) <= TASK_ID_MAX and re.fullmatch(TASK_ID_PATTERN, value) is not None


CheckName = Literal[
    "base_commit_recorded",
    "patch_is_a_new_state",
    "evidence_bound_to_patch",
    "patch_digest_verified",
    "edits_permitted",
    "oracle_untouched",
    "harness_untampered",
    "requirements_recovered",
    "environment_reproduced",
    "focused_tests_passed",
    "regression_tests_passed",
    "dependency_policy_passed",
    "generated_artifacts_fresh",
    "code_owner_approved",
    "review_threads_resolved",
    "post_merge_sentinel_passed",
    "release_receipt_present",
    "behaviour_matches_reference",
]
"""A check, as receipts name it and profiles list it (see :data:`CHECK_TABLE`; a test holds
this ``Literal`` equal to the table's names, as a ``Literal`` cannot be built from it)."""

GateId = Literal[
    "E",
    "propose",
    "I",
    "V",
    "V-regression",
    "V-commands",
    "V-dependencies",
    "V-generated",
    "V-differential",
    "V-injection",
    "E-reconstruction",
    "A",
    "release",
    "R",
    "S",
    "stop",
]
"""The id a receipt names its gate by (see :data:`GATES`)."""


SeedGate = Literal["R", "E", "I", "V", "A", "S", "-"]
"""A gate of the seed: R requirements, E environment, I integrity, V verification, A authority,
S sentinel; ``-`` for a receipt that belongs to none (the agent's run, a stop)."""

Profile = Literal["hermetic", "lifecycle"]
"""A contract's profile: which checks are hard (:data:`PROFILE_CHECKS`), at which version
(:data:`PROFILE_VERSIONS`)."""
PROFILES: tuple[Profile, ...] = ("hermetic", "lifecycle")

StageName = Literal[
    "environment reconstructed",
    "requirement recovered",
    "focused tests passed",
    "regression tests passed",
    "review accepted",
    "sentinel passed",
]
"""A stage of the report's funnel: partial progress, each the fold of its checks
(:attr:`CheckRow.stage`)."""
STAGE_NAMES: tuple[StageName, ...] = get_args(StageName)
"""The funnel's stages in the order an attempt meets them (:data:`StageName`'s order)."""

ReconstructionStage = Literal["built", "imports", "collects", "reproduces"]
"""How far an environment the agent reconstructed got (``[environment] supplied_by = "agent"``),
graded in stages after SWE-Cycle (activate, import, collect), Repo2Run (tests runnable) and
ExecutionAgent (results within a deviation of the reference environment's); see
:data:`RECONSTRUCTION_STAGES`."""

RECONSTRUCTION_STAGES: dict[ReconstructionStage, str] = {
    "built": "the agent's recipe (``environment.toml`` in its output folder) parses and builds at "
    "the base, in a clean harness-owned checkout, with the contract's backend, network, timezone "
    "and locale",
    "imports": "the checkout's top-level packages import in it",
    "collects": "every graded test id the evaluator's environment collects at the base also "
    "collects in it (pytest)",
    "reproduces": "the graded FAIL_TO_PASS and PASS_TO_PASS ids at the base give the same outcomes "
    "in it as in the evaluator's environment built from the contract's recipe (a deviation of "
    "none; ids flaky at the base left out)",
}
"""Every reconstruction stage, documented, in the order they are graded; a stage runs only when
the one before passed. They count towards ``environment_reproduced`` and the funnel shows each
as its own row (:data:`RECONSTRUCTION_FUNNEL`) for reconstructed attempts."""

RECONSTRUCTION_FUNNEL: dict[ReconstructionStage, str] = {
    stage: f"environment {stage}" for stage in RECONSTRUCTION_STAGES
}
"""The funnel row of each reconstruction stage (``environment built``), shown before
``environment reconstructed`` for attempts whose agent supplied the environment."""


class Doc(NamedTuple):
    """What a name observes, and the seed gate it belongs to."""

    seed_gate: SeedGate
    observes: str


class CheckRow(NamedTuple):
    """One check's row of :data:`CHECK_TABLE`: everything the code knows about it, said once.

    Attributes:
        name: the check's name.
        gate: the seed gate it belongs to.
        hard_in: the profiles in which it is hard; ``()`` for an advisory check, reported in every
            profile beside the verdict and hard only where the contract asks
            (:attr:`repogate.decision.Evidence.also_hard`).
        observes: what it observes.
        stage: the funnel stage it counts towards (None: none).
        resolved: SWE-bench's "resolved" reads it (gate V's graded run of the candidate;
            ``swebench/harness/grading.py``, ``get_resolution_status``).
        identity: derived from the candidate state's identity rather than read from a receipt
            (:func:`repogate.decision.decide`).
        integrity: its failure is an integrity violation, counted apart by the report.
    """

    name: CheckName
    gate: SeedGate
    hard_in: tuple[Profile, ...]
    observes: str
    stage: StageName | None = None
    resolved: bool = False
    identity: bool = False
    integrity: bool = False


_BOTH: tuple[Profile, ...] = ("hermetic", "lifecycle")
_LIFECYCLE: tuple[Profile, ...] = ("lifecycle",)
_ADVISORY: tuple[Profile, ...] = ()

CHECK_TABLE: tuple[CheckRow, ...] = (
    CheckRow(
        "base_commit_recorded",
        "I",
        _BOTH,
        "the attempt names the authorised base commit S0",
        identity=True,
    ),
    CheckRow(
        "patch_is_a_new_state",
        "I",
        _BOTH,
        "the candidate differs from the base (a non-empty patch)",
        identity=True,
    ),
    CheckRow(
        "evidence_bound_to_patch",
        "I",
        _BOTH,
        "every receipt names the candidate's state id (no result from another state)",
        identity=True,
        integrity=True,
    ),
    CheckRow(
        "patch_digest_verified",
        "I",
        _BOTH,
        "the stored patch's sha256 equals the digest the candidate state was built from",
        identity=True,
        integrity=True,
    ),
    CheckRow(
        "edits_permitted",
        "I",
        _BOTH,
        "every changed path is editable and none is forbidden",
        integrity=True,
    ),
    CheckRow(
        "oracle_untouched",
        "I",
        _BOTH,
        "no edit to the tests, their configuration or the test runner's reach",
        integrity=True,
    ),
    CheckRow(
        "harness_untampered",
        "I",
        _BOTH,
        "the harness's guard inside each test session saw no change by the candidate's code to"
        " pytest's test-running machinery or its hook implementations (observed at gate V; an"
        " in-process check that raises the bar, not a boundary)",
        integrity=True,
    ),
    CheckRow(
        "requirements_recovered",
        "R",
        _BOTH,
        "every criterion, stated or implicit, is met by its linked oracles",
        stage="requirement recovered",
    ),
    CheckRow(
        "environment_reproduced",
        "E",
        _BOTH,
        "the environment built from the base's recipe and the base behaves as the task says; when"
        " the agent supplies the environment, also its reconstruction reached every stage"
        " (:data:`RECONSTRUCTION_STAGES`)",
        stage="environment reconstructed",
    ),
    CheckRow(
        "focused_tests_passed",
        "V",
        _BOTH,
        "FAIL_TO_PASS tests pass on the candidate",
        stage="focused tests passed",
        resolved=True,
    ),
    CheckRow(
        "regression_tests_passed",
        "V",
        _BOTH,
        "tests passing at the base (PASS_TO_PASS, and every base-passing test unless the contract"
        " narrows it) and oracle commands still pass",
        stage="regression tests passed",
        resolved=True,
    ),
    CheckRow(
        "dependency_policy_passed",
        "V",
        _BOTH,
        "lockfiles changed only as their manager writes them, new names allowed",
    ),
    CheckRow(
        "generated_artifacts_fresh",
        "V",
        _LIFECYCLE,
        "regenerating in a clean tree changes nothing (derived files match their sources)",
    ),
    CheckRow(
        "code_owner_approved",
        "A",
        _LIFECYCLE,
        "CODEOWNERS of the changed paths approved this patch digest (not its author)",
        stage="review accepted",
    ),
    CheckRow(
        "review_threads_resolved",
        "A",
        _LIFECYCLE,
        "no review thread is left open",
        stage="review accepted",
    ),
    CheckRow(
        "post_merge_sentinel_passed",
        "S",
        _LIFECYCLE,
        "the merged change survives regeneration and the real follow-up commits",
        stage="sentinel passed",
    ),
    CheckRow(
        "release_receipt_present",
        "A",
        _LIFECYCLE,
        "the patch adds a release-notes entry",
    ),
    CheckRow(
        "behaviour_matches_reference",
        "V",
        _ADVISORY,
        "the functions the candidate or the reference changed, called in separate sandboxed"
        " processes on Hypothesis-generated inputs, return, raise and mutate their arguments as"
        " the reference does (reported in every profile; hard only where the contract sets"
        ' oracles.differential = "hard")',
    ),
)
"""Every check, one row each, in the order failures are reported: the one table a new check is
added to. The profiles' check lists (:data:`PROFILE_CHECKS`), the advisory checks, the funnel's
stages (:data:`STAGE_CHECKS`), SWE-bench's "resolved" checks and the report's integrity checks
are all read from it (:mod:`repogate.decision`, :mod:`repogate.report.classify`)."""

CHECKS: dict[CheckName, Doc] = {row.name: Doc(row.gate, row.observes) for row in CHECK_TABLE}
"""Every check, documented (hard in a profile, or reported beside the verdict)."""

PROFILE_CHECKS: dict[Profile, tuple[CheckName, ...]] = {
    profile: tuple(row.name for row in CHECK_TABLE if profile in row.hard_in)
    for profile in PROFILES
}
"""Each profile's hard checks, in :data:`CHECK_TABLE`'s order."""


def profile_digest(checks: tuple[CheckName, ...]) -> str:
    """The sha256 (hex) of a profile's check list, in order, as JSON: what a version pins."""
    return hashlib.sha256(json.dumps(list(checks)).encode()).hexdigest()


PROFILE_HISTORY: dict[Profile, dict[int, str]] = {
    "hermetic": {1: "d8a4c39cb3c5f70fd0b5e432d3a47412685adcf46e54e11edf758ab128e923f6"},
    "lifecycle": {1: "09b2d5a73d3eac6f17d4f8f1b409b546500f95c5859b04d05cbe05d770ad772b"},
}
"""Each profile's versions, each with the :func:`profile_digest` of its check list then. The
rule: any change of a profile's check list (:data:`PROFILE_CHECKS`: a check added, removed or
moved) adds the next version with the new list's digest, so an older run's "hermetic" still says
what it meant then. An entry is never edited: ``tests/test_vocabulary.py`` pins them, and fails
when the list no longer has the newest version's digest."""

PROFILE_VERSIONS: dict[Profile, int] = {p: max(h) for p, h in PROFILE_HISTORY.items()}
"""Each profile's current version (its newest in :data:`PROFILE_HISTORY`), recorded in every
decision and run manifest. Version 1 is the lists as they stood when versions began; a decision
or manifest stored before then records none (read as None, "not recorded")."""

STAGE_CHECKS: dict[StageName, tuple[CheckName, ...]] = {
    stage: tuple(row.name for row in CHECK_TABLE if row.stage == stage) for stage in STAGE_NAMES
}
"""The checks each funnel stage folds, in :data:`STAGE_NAMES`' order."""

GATES: dict[GateId, Doc] = {
    "E": Doc("E", "environment build and the base-state check (before the candidate exists)"),
    "propose": Doc("-", "the agent's run: the candidate commit, patch, digests and merge tree"),
    "I": Doc("I", "changed paths against permissions and the oracle"),
    "V": Doc("V", "the hidden tests on the candidate (and on the merged tree when it differs)"),
    "V-regression": Doc(
        "V", "every base-passing test the change can affect (coverage-selected), or the narrowing"
    ),
    "V-commands": Doc("V", "the contract's extra oracle commands, against the base"),
    "V-dependencies": Doc("V", "the lockfile policy and the replay of the lock command"),
    "V-generated": Doc("V", "generated-artefact freshness, regenerated in a clean tree"),
    "V-differential": Doc("V", "the candidate's changed functions called beside the reference's"),
    "V-injection": Doc(
        "V", "an injected task's findings: authoritative source found, survives regeneration"
    ),
    "E-reconstruction": Doc(
        "E",
        "the environment the agent reconstructed (its recipe) built at the base and graded in"
        " stages: built, imports, collects, reproduces (:data:`RECONSTRUCTION_STAGES`)",
    ),
    "A": Doc("A", "CODEOWNERS read at the base and approvals bound to the patch digest"),
    "release": Doc("A", "the release-notes entry the patch adds"),
    "R": Doc("R", "criteria against the receipts so far; the agent's own claims compared"),
    "S": Doc("S", "the post-merge sentinel: regeneration and the replay of later history"),
    "stop": Doc("-", "checks not observed because a phase stopped the attempt (all error)"),
}
"""Every gate id, documented."""

REPORTS: dict[GateId, tuple[CheckName, ...]] = {
    "E": ("environment_reproduced",),
    "propose": (),
    "I": ("edits_permitted", "oracle_untouched"),
    "V": ("focused_tests_passed", "regression_tests_passed"),
    "V-regression": ("regression_tests_passed",),
    "V-commands": ("regression_tests_passed",),
    "V-dependencies": ("dependency_policy_passed",),
    "V-generated": ("generated_artifacts_fresh",),
    "V-differential": ("behaviour_matches_reference",),
    "V-injection": (),
    "E-reconstruction": ("environment_reproduced",),
    "A": ("code_owner_approved", "review_threads_resolved"),
    "release": ("release_receipt_present",),
    "R": ("requirements_recovered",),
    "S": ("post_merge_sentinel_passed",),
    "stop": (),
}
"""The hard checks each gate reports. A gate that crashed observed none of them: each is an
``error`` in the decision, whatever another gate reporting the same check saw (the regression
step, the extra commands and gate V all report ``regression_tests_passed``). ``propose`` and
``stop`` report checks only when they stop the attempt, and cannot crash."""

GradedTree = Literal["candidate", "merged"]
"""The tree gate V graded: the candidate's, or the merged tree when the harness's merge made a
different one (:attr:`repogate.receipt.Receipt.tree`)."""

PhaseName = Literal[
    "prepare",
    "environment",
    "propose",
    "reconstruction",
    "integrity",
    "verification",
    "differential",
    "lifecycle",
    "injection",
    "requirements",
    "merge",
    "sentinel",
]
"""A phase of one attempt, as :data:`repogate.pipeline.PHASES` orders them and a stopped attempt
records where it stopped (:attr:`repogate.decision.Evidence.stopped_at`)."""

ErrorKind = Literal[
    "environment build", "invalid task", "timeout", "harness crash", "other evaluator error"
]
"""Why a check could not be decided (status ``error``): the evaluator's or environment's fault,
never the agent's. Set where the error happens (:attr:`repogate.receipt.Check.kind`) and read by
the report (see :data:`ERROR_KINDS`)."""

ERROR_KINDS: dict[ErrorKind, str] = {
    "environment build": "the environment recipe could not be instantiated at the base "
    "(:class:`repogate.errors.EnvironmentBuildError`)",
    "invalid task": "the task does not hold at its base: the hidden tests do not apply, the "
    "base-state test run is unusable, or the base does not behave as the task says",
    "timeout": "a command reached its time budget (a test run, an oracle command, a generator, "
    "a call of the differential oracle): the budget, not the task",
    "harness crash": "a gate raised (its receipt's ``crash``), or the attempt crashed outside any "
    "gate",
    "other evaluator error": "anything else the evaluator could not decide (a missing lock "
    "manager, an unreachable index, an attempt stopped before the check was observed)",
}
"""Every error kind, documented, in the order the report's tables list them."""

ERROR_PRECEDENCE: tuple[ErrorKind, ...] = (
    "environment build",
    "timeout",
    "invalid task",
    "harness crash",
    "other evaluator error",
)
"""Which kind counts when several errors meet (in one check folded from several receipts, or
among an attempt's errored checks): the first of this order. An environment that could not be
built explains every error after it; a timeout is the budget's, even one that made the base-state
run unusable; then a task invalid at its base; then a crash."""


def first_kind(kinds: Iterable[ErrorKind | None]) -> ErrorKind | None:
    """The kind among ``kinds`` that counts (:data:`ERROR_PRECEDENCE`); None when none is given."""
    given = set(kinds)
    return next((k for k in ERROR_PRECEDENCE if k in given), None)


AttemptStatus = Literal["planned", "running", "done", "crashed"]
"""An attempt's status as the store records it: ``planned`` begun in the store, waiting its turn;
``running`` a worker started it; ``done`` decided; ``crashed`` the evaluator failed on it. Planned
and running are unfinished. Readers word it with :func:`attempt_state`, never as stored."""
UNFINISHED: tuple[AttemptStatus, ...] = ("planned", "running")

AttemptState = Literal["not started", "running", "interrupted", "done", "crashed"]
"""How every reader of a run (``show``, ``report`` as text, JSON and HTML) words an attempt's
progress (see :data:`ATTEMPT_STATES`); a decided attempt is then read by its outcome."""

ATTEMPT_STATES: dict[AttemptState, str] = {
    "not started": "begun in the store, waiting its turn (stored ``planned``)",
    "running": "started, unfinished, while a run holds the run folder's lock",
    "interrupted": "started, unfinished, and no run holds the folder (stopped or killed)",
    "done": "decided: accepted, rejected or error",
    "crashed": "the evaluator failed on it; kept with its crash",
}
"""Every attempt state, documented."""
UNFINISHED_STATES: tuple[AttemptState, ...] = ("not started", "running", "interrupted")


def attempt_state(status: AttemptStatus, *, live: bool) -> AttemptState:
    """Word a stored attempt status, knowing whether a run holds the run folder (``live``)."""
    if status == "planned":
        return "not started"
    if status == "running":
        return "running" if live else "interrupted"
    return status


Strength = Literal["lifecycle", "swebench"]
"""How strongly ``tasks import`` judges an instance (:mod:`repogate.tasks.import_strength`):
``lifecycle``, repogate's default; ``swebench``, SWE-bench's own rules."""

DEFAULT_WINDOW = 3
"""Follow-up commits the sentinel replays after an imported instance's fix, by default."""


RUNNER_PACKAGES = ("pytest", "_pytest", "py")
"""The top-level modules a repository under test that *is* the test runner provides to its own
test sessions (``[oracles] runner_under_test``): pytest-dev/pytest's ``pytest`` (a package, or
``pytest.py`` before 5.4), ``_pytest`` and ``py`` (``src/py.py`` from 7.2, a shim over
``_pytest._py``). The guard trusts checkout code of these, and only these, as the runner."""

RUNNER_VERDICT_FILES = (
    "pytest.py",
    "pytest/__init__.py",
    "pytest/__main__.py",
    "_pytest/junitxml.py",
    "_pytest/reports.py",
    "_pytest/runner.py",
    "_pytest/terminal.py",
    "_pytest/main.py",
    "_pytest/skipping.py",
    "_pytest/outcomes.py",
    "_pytest/nodes.py",
    "_pytest/python.py",
    "_pytest/unittest.py",
    "_pytest/hookspec.py",
    "_pytest/config/**",
    "_pytest/assertion/**",
    "_pytest/pytester.py",
    "_pytest/pytester_assertions.py",
)
"""The runner's verdict-producing files, as paths below its import root (``src/`` stripped):
where a test's outcome is made, recorded or reported. With ``runner_under_test`` the guard no
longer sees a change to them, so gate I refuses a candidate's edit of one (``oracle_untouched``)
unless the reference edits that same file (then the edit is the task; it is recorded). Why each:
``junitxml`` writes the report repogate reads; ``reports``, ``runner``, ``outcomes`` make a
test's outcome; ``skipping`` and ``unittest`` turn failures into skips and xfails; ``python``
and ``nodes`` collect and call the test functions; ``main`` runs the session and sets the exit
code the report must agree with; ``terminal`` reports it; ``config/**`` and ``hookspec`` load
plugins and options (``-p``, ``addopts``, hook specifications); ``assertion/**`` rewrites every
``assert`` (an edit can make each one pass); ``pytester`` runs the inner sessions pytest's own
tests assert on (``assert_outcomes``). The other plugins (``logging``, ``capture``,
``fixtures`` ...) are not listed, yet a candidate's edit of one the reference does not edit is
refused all the same (:func:`repogate.gates.runner_files.verdict_edits`): the guard trusts them
as the runner, and one line of ``capture.py`` rebinding ``_pytest.python.Function.runtest``
turns every failure into a pass (red team rt31)."""

RUNNER_UNDER_TEST_ASSURANCE = (
    "the runner under test produced the verdicts ([oracles] runner_under_test): the checkout's "
    "own pytest ran its tests, so tamper evidence for the runner is lost (the guard trusts its "
    "pytest, _pytest and py modules; every other tamper check stays); gate I refuses an edit of "
    "any runner file that the reference does not make"
)
"""The weaker assurance of a contract whose repository is the test runner, said in its every
decision (:attr:`repogate.decision.Decision.assurance`), in ``show``, at ``run``'s start and in
the run manifest's warnings."""

SKIP_SENTINEL_FLAG = "--skip-sentinel-when-rejected"
"""The ``run`` option that leaves gate S out of an attempt a hard check has already failed: named
in gate S's receipt (``details.not_run``), in the resumed-run line, and in the report's notes."""

PROFILE_STAGES: dict[Profile, tuple[StageName, ...]] = {
    profile: tuple(
        stage for stage in STAGE_NAMES if set(STAGE_CHECKS[stage]) & set(PROFILE_CHECKS[profile])
    )
    for profile in PROFILES
}
"""The funnel stages an attempt of each profile meets: those folding a check hard in it. Its
other stages read ``skipped`` (a hermetic attempt has no review and runs no sentinel)."""

SKIPPED_STAGES_LEGEND = (
    "(N skipped): not applicable, e.g. the hermetic profile has no "
    + " or ".join(s for s in STAGE_NAMES if s not in PROFILE_STAGES["hermetic"])
)
"""The funnel's legend for its ``(N skipped)`` counts, said under it (text and HTML) when a
stage was skipped: ``... has no review accepted or sentinel passed``. The other reasons (a
reconstruction stage of an attempt whose environment the contract supplied, a sentinel left out
by :data:`SKIP_SENTINEL_FLAG`) are the "e.g." it leaves open."""

REPO_CACHE_HELP = (
    "Folder of local mirrors for repository URLs, one per repository as owner+name/ (also "
    "owner+name.git, owner+name/repo, host/owner/name or owner/name), a clone or a bare mirror "
    "(git clone --mirror); repogate never fetches."
)
"""The ``--repo-cache`` option's help: the layouts :func:`repogate.git.resolve_source` looks up."""
