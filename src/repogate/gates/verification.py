"""Gate V, verification: the graded tests and the contract's extra oracle commands.

Tests run on a harness-made tree: the candidate (or the merged tree) with every file the hidden
tests touch reset to the base and the hidden test patch applied, so no edit of the agent's to
those files survives into grading. Results come only from the JUnit report the harness reads
from a folder outside that tree. FAIL_TO_PASS and PASS_TO_PASS are graded as SWE-bench grades
them (:mod:`repogate.oracles.grading`); tests that flip between repeated runs are excluded from
the verdict and recorded.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repogate import git, sandbox
from repogate.contract import OracleCommand, TransitionContract
from repogate.environment import BuiltEnvironment, activate
from repogate.oracles.grading import Grading, flaky, grade
from repogate.oracles.junit import TestOutcome
from repogate.oracles.pytest_runner import TestRun, run_tests
from repogate.receipt import Check, Observation
from repogate.sandbox import SandboxPolicy


def graded_tree(
    repo: Path, base: str, rev: str, hidden: bytes, hidden_paths: Sequence[str], dest: Path
) -> None:
    """Write the tree of ``rev`` to ``dest`` with hidden-test files reset to ``base`` and applied.

    ``hidden_paths`` are the paths ``hidden`` touches (:func:`repogate.patches.touched_paths`).

    Raises:
        GitError: git failed.
        PatchApplyError: the hidden test patch does not apply at the base (an invalid task).
    """
    git.export_tree(repo, rev, dest)
    for path in hidden_paths:
        at_base = git.show_file(repo, base, path)
        target = dest / path
        if at_base is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(at_base)
    git.apply_patch(dest, hidden)


def run_repeated(
    env: BuiltEnvironment,
    tree: Path,
    contract: TransitionContract,
    report_dir: Path,
    policy: SandboxPolicy,
) -> tuple[list[TestRun], set[str]]:
    """Run the graded tests ``contract.oracles.repeat`` times; return the runs and flaky ids."""
    ids = [*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass]
    runs = [
        run_tests(env, tree, contract.oracles.test_command, ids, report_dir / f"run{n}", policy)
        for n in range(contract.oracles.repeat)
    ]
    ok = [r.outcomes for r in runs if r.status == "ok"]
    return runs, flaky(ok) if len(ok) > 1 else set()


def _test_details(
    runs: Sequence[TestRun], graded: Grading | None, flips: set[str]
) -> dict[str, Any]:
    return {
        "runs": [
            {
                "status": r.status,
                "reason": r.reason,
                "collected": r.collected,
                "returncode": r.execution.returncode,
                "duration_s": round(r.execution.duration_s, 3),
                "report_sha256": r.report_sha256,
                "isolation": r.execution.isolation.kind,
            }
            for r in runs
        ],
        "flaky_excluded": sorted(flips),
        "results": [] if graded is None else [t.model_dump() for t in graded.results],
    }


def check_tests(
    runs: Sequence[TestRun],
    flips: set[str],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
    base_flaky: set[str] | frozenset[str] = frozenset(),
) -> Observation:
    """Grade the runs: ``focused_tests_passed`` (FAIL_TO_PASS) and ``regression_tests_passed``.

    Called only after the base-state check ran the same tests in the same environment and got a
    trustworthy report; so a candidate run without one (a hang past the budget, pytest unable to
    start, nothing collected) is the candidate's doing, and both checks fail with the reason:
    never a pass, and no way for a patch to turn its rejection into an evaluator error by
    breaking the runner. The last run's outcomes are graded. Tests that flipped at the base
    (``base_flaky``) are excluded with a record; a test that flips only on the candidate
    (``flips`` minus ``base_flaky``) was stable before the patch, so it counts as not passing.
    """
    broken = [r for r in runs if r.status != "ok"]
    if broken or not runs:
        reason = broken[0].reason if broken else "no test run"
        checks = tuple(
            Check(name=n, status="failed", detail=f"the test run broke on the candidate: {reason}")
            for n in ("focused_tests_passed", "regression_tests_passed")
        )
        return Observation(checks=checks, details=_test_details(runs, None, flips))
    graded = grade(runs[-1].outcomes, fail_to_pass, pass_to_pass, exclude=base_flaky)
    unstable = flips - set(base_flaky)

    def failing(kind: str) -> str:
        bad = [
            f"{r.test_id} ({'flips on the candidate, stable at the base' if r.test_id in unstable else r.observed})"
            for r in graded.results
            if r.kind == kind and not r.excluded and (not r.ok or r.test_id in unstable)
        ]
        return ", ".join(bad[:10]) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")

    return Observation(
        checks=(
            Check(
                name="focused_tests_passed",
                status="passed"
                if graded.focused_ok and not unstable & set(fail_to_pass)
                else "failed",
                detail=failing("fail_to_pass") or ("" if fail_to_pass else "no FAIL_TO_PASS test"),
            ),
            Check(
                name="regression_tests_passed",
                status="passed"
                if graded.regression_ok and not unstable & set(pass_to_pass)
                else "failed",
                detail=failing("pass_to_pass"),
            ),
        ),
        details={
            **_test_details(runs, graded, set(base_flaky)),
            "unstable_on_candidate": sorted(unstable),
        },
    )


def outcomes_of(runs: Sequence[TestRun]) -> dict[str, TestOutcome]:
    """Return the last trustworthy run's outcomes, or an empty mapping."""
    ok = [r for r in runs if r.status == "ok"]
    return dict(ok[-1].outcomes) if ok else {}


def _run_command(
    command: OracleCommand, tree: Path, env: BuiltEnvironment, policy: SandboxPolicy
) -> sandbox.ExecResult:
    granted = {**policy.env, **activate(env, tree)}
    return sandbox.run(shlex.split(command.run), tree, policy.model_copy(update={"env": granted}))


def check_commands(
    commands: Sequence[OracleCommand],
    base_tree: Path,
    candidate_tree: Path,
    env: BuiltEnvironment,
    policy: SandboxPolicy,
) -> Observation:
    """Run each extra oracle command on the base and the candidate.

    A failure the base already had is recorded and not held against the patch; a new failure
    fails ``regression_tests_passed`` naming the command and its output. A command stopped at its
    timeout on the candidate is an ``error``.
    """
    results: list[dict[str, Any]] = []
    statuses: dict[str, str] = {}
    new_failures: list[str] = []
    errors: list[str] = []
    for command in commands:
        at_base = _run_command(command, base_tree, env, policy)
        at_candidate = _run_command(command, candidate_tree, env, policy)
        results.append(
            {
                "name": command.name,
                "base_returncode": at_base.returncode,
                "candidate_returncode": at_candidate.returncode,
                "candidate_output": (at_candidate.stdout + at_candidate.stderr)[-2000:],
            }
        )
        statuses[command.name] = "passed"
        if at_candidate.timed_out:
            errors.append(f"command:{command.name} timed out")
            statuses[command.name] = "error"
        elif not at_candidate.ok and at_base.ok:
            tail = (at_candidate.stdout + at_candidate.stderr).strip().splitlines()[-3:]
            new_failures.append(f"command:{command.name} newly fails: {' | '.join(tail)}")
            statuses[command.name] = "failed"
    status = "error" if errors else "failed" if new_failures else "passed"
    return Observation(
        checks=(
            Check(
                name="regression_tests_passed",
                status=status,
                detail="; ".join(errors + new_failures),
            ),
        ),
        details={"commands": results, "statuses": statuses},
    )
