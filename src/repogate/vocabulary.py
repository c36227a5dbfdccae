"""The names repogate's records use, defined once: hard checks and gate ids.

A check name or gate id is a ``Literal`` type, so a misspelt name anywhere in the code is a type
error rather than "no receipt reports this check". Each name is documented below, beside its
definition: what it observes and which of the seed's gates it belongs to (R requirements,
E environment, I integrity, V verification, A authority, S sentinel; the identity checks bind the
evidence chain and belong to gate I).
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

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
"""A check, as receipts name it and profiles list it (see :data:`CHECKS`)."""

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
    "A",
    "release",
    "R",
    "S",
    "stop",
]
"""The id a receipt names its gate by (see :data:`GATES`)."""


class Doc(NamedTuple):
    """What a name observes, and the seed gate it belongs to."""

    seed_gate: Literal["R", "E", "I", "V", "A", "S", "-"]
    observes: str


CHECKS: dict[CheckName, Doc] = {
    "base_commit_recorded": Doc("I", "the attempt names the authorised base commit S0"),
    "patch_is_a_new_state": Doc("I", "the candidate differs from the base (a non-empty patch)"),
    "evidence_bound_to_patch": Doc(
        "I", "every receipt names the candidate's state id (no result from another state)"
    ),
    "patch_digest_verified": Doc(
        "I", "the stored patch's sha256 equals the digest the candidate state was built from"
    ),
    "edits_permitted": Doc("I", "every changed path is editable and none is forbidden"),
    "oracle_untouched": Doc(
        "I", "no edit to the tests, their configuration or the test runner's reach"
    ),
    "harness_untampered": Doc(
        "I",
        "the harness's guard inside each test session saw no change by the candidate's code to"
        " pytest's test-running machinery or its hook implementations (observed at gate V; an"
        " in-process check that raises the bar, not a boundary)",
    ),
    "requirements_recovered": Doc(
        "R", "every criterion, stated or implicit, is met by its linked oracles"
    ),
    "environment_reproduced": Doc(
        "E", "the environment built from the base's recipe and the base behaves as the task says"
    ),
    "focused_tests_passed": Doc("V", "FAIL_TO_PASS tests pass on the candidate"),
    "regression_tests_passed": Doc(
        "V",
        "tests passing at the base (PASS_TO_PASS, and every base-passing test unless the contract"
        " narrows it) and oracle commands still pass",
    ),
    "dependency_policy_passed": Doc(
        "V", "lockfiles changed only as their manager writes them, new names allowed"
    ),
    "generated_artifacts_fresh": Doc(
        "V", "regenerating in a clean tree changes nothing (derived files match their sources)"
    ),
    "code_owner_approved": Doc(
        "A", "CODEOWNERS of the changed paths approved this patch digest (not its author)"
    ),
    "review_threads_resolved": Doc("A", "no review thread is left open"),
    "post_merge_sentinel_passed": Doc(
        "S", "the merged change survives regeneration and the real follow-up commits"
    ),
    "release_receipt_present": Doc("A", "the patch adds a release-notes entry"),
    "behaviour_matches_reference": Doc(
        "V",
        "the functions the candidate or the reference changed, called in separate sandboxed"
        " processes on Hypothesis-generated inputs, return, raise and mutate their arguments as"
        " the reference does (reported in every profile; hard only where the contract sets"
        ' oracles.differential = "hard")',
    ),
}
"""Every check, documented (hard in a profile, or reported beside the verdict)."""

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
