"""The records of task validation: the closed rejection vocabulary, what was observed, the reason.

Kept in ``tasks.jsonl`` and ``rejected.jsonl`` (:mod:`repogate.tasks.taskset`); made by
:mod:`repogate.tasks.validate`, which re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from repogate import clock
from repogate._model import FrozenModel

RejectionReason = Literal[
    "instance_invalid",
    "repository_missing",
    "base_commit_missing",
    "patch_does_not_apply",
    "no_test_change",
    "environment_failed",
    "test_run_failed",
    "timeout",
    "no_fail_to_pass",
    "fail_to_pass_passes_at_base",
    "reference_fails",
    "flaky",
    "ids_missing",
    "ambiguous_test_id",
    "needs_network",
    "needs_service",
    "date_dependent",
    "reference_not_accepted",
    "evaluator_error",
]
"""Why a candidate is not a task. The closed vocabulary of ``rejected.jsonl``:

- ``instance_invalid``: the instance's fields do not make a valid contract (e.g. a bad id or SHA);
- ``repository_missing``: no local mirror of the instance's repository (see ``--repo-cache``);
- ``base_commit_missing``: the base commit is not in the mirror;
- ``patch_does_not_apply``: the reference or the hidden test patch does not apply at the base;
- ``no_test_change``: the change has no test part (nothing can check it) or no code part;
- ``environment_failed``: the recipe's environment could not be built;
- ``test_run_failed``: pytest gave no trustworthy report (internal or usage error, nothing collected);
- ``timeout``: a test run was stopped at the contract's timeout;
- ``no_fail_to_pass``: no test fails at the base and passes with the reference;
- ``fail_to_pass_passes_at_base``: a declared FAIL_TO_PASS test already passes at the base (in an
  import of SWE-bench instances: every declared FAIL_TO_PASS test that does not flip passes there;
  the detail names them all);
- ``reference_fails``: a declared FAIL_TO_PASS test does not pass with the reference;
- ``flaky``: every FAIL_TO_PASS test flips between repeated runs of one state;
- ``ids_missing``: a declared test id is not in the collected suite;
- ``ambiguous_test_id``: a declared bare test name exists in more than one touched file;
- ``needs_network``: a FAIL_TO_PASS test fails with the reference on a network error (tests run
  without network);
- ``needs_service``: a FAIL_TO_PASS test fails with the reference on a TLS or connection error to a
  declared service's address (the environment's service does not offer what the test asks, e.g.
  ``https://`` to one without ``tls``);
- ``date_dependent``: a FAIL_TO_PASS test passes with the reference today and fails under a clock
  ten years ahead (:mod:`repogate.tasks.dates`);
- ``reference_not_accepted``: the gold attempt is not accepted under the contract's hermetic checks;
- ``evaluator_error``: repogate itself failed on this candidate (the message is kept).
"""


class Validation(FrozenModel):
    """What validation observed for one candidate (kept in ``tasks.jsonl`` and ``rejected.jsonl``).

    Attributes:
        repeats: runs of each state (N of N must agree).
        test_files: the test files run.
        fail_to_pass: the FAIL_TO_PASS ids graded (declared and confirmed, or derived).
        pass_to_pass: the PASS_TO_PASS ids graded.
        relabelled_pass_to_pass: declared FAIL_TO_PASS ids (as declared) that passed at the base
            in every run and are graded as PASS_TO_PASS (imported SWE-bench instances only,
            when another declared id fails at the base; a fault of the instance's labels).
        flaky: ids whose outcome flipped between runs of one state (left out of grading).
        dropped: declared ids left out of grading, each with why (``fails at base``, ``needs
            network``, ``flaky``).
        resolved: declared ids mapped to the node ids found for them, where they differ: bare
            names (sympy, django), and ids SWE-bench's log parser cut at a blank
            (``test_locate_app[cliapp.factory-``), matched as SWE-bench's grading matches them
            (:func:`repogate.oracles.junit.match_ids`: the reported ids of that cut form, the
            worst-faring one standing for them all).
        environment_digest: the environment the runs used.
        environment_cold: True when this candidate built the environment.
        build_seconds: wall seconds building (or finding) the environment.
        test_seconds: wall seconds of the pytest runs themselves (as the sandbox timed them).
        validation_seconds: wall seconds of the whole state check, the build excluded.
        gold: the gold attempt's outcome under the hermetic checks (empty before it ran).
        gold_seconds: wall seconds of the gold attempt.
        date_check: what the run under a shifted clock found, or why it did not run
            (:mod:`repogate.tasks.dates`).
        handed_to_gate_e: "" when validation's runs became gate E's base-state result for the
            gold attempt (:mod:`repogate.tasks.handoff`), else why not.
    """

    repeats: int
    test_files: tuple[str, ...] = ()
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    relabelled_pass_to_pass: tuple[str, ...] = ()
    flaky: tuple[str, ...] = ()
    dropped: dict[str, str] = Field(default_factory=dict)
    resolved: dict[str, str] = Field(default_factory=dict)
    environment_digest: str = ""
    environment_cold: bool = False
    build_seconds: float = 0.0
    test_seconds: float = 0.0
    validation_seconds: float = 0.0
    gold: str = ""
    gold_seconds: float = 0.0
    date_check: str = ""
    handed_to_gate_e: str = ""


@dataclass
class Spent:
    """Wall seconds spent so far on one candidate, kept in its record whatever the outcome."""

    started: float
    build: float = 0.0
    tests: float = 0.0

    def timings(self, partial: Validation | None, repeats: int) -> Validation:
        """``partial`` (or an empty record) with the build, test and validation seconds."""
        seen = partial or Validation(repeats=repeats)
        total = clock.monotonic() - self.started
        return seen.model_copy(
            update={
                "build_seconds": round(self.build, 3),
                "test_seconds": round(self.tests, 3),
                "validation_seconds": round(max(total - self.build, 0.0), 3),
            }
        )


class Rejected(Exception):
    """A candidate is not a task: the reason, a sentence, and what was observed so far.

    Raised inside :func:`check_states` and caught by its caller; never reaches the CLI.

    Args:
        reason: why, from :data:`RejectionReason`.
        detail: one sentence on what was seen (the cause line of a failing command).
        validation: what validation observed before it stopped, timings included.
        log: the failing command's whole output, or empty.
    """

    def __init__(
        self,
        reason: RejectionReason,
        detail: str,
        validation: Validation | None = None,
        log: str = "",
    ) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: RejectionReason = reason
        self.detail = detail
        self.validation = validation
        self.log = log
        """The failing command's whole output (empty when none): the caller keeps it as a file
        that outlives the scratch folder, never a path into that folder."""
