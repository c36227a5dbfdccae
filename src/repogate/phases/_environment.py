"""Gate E: build the environment at the base and check the base state with the hidden tests."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from repogate import git
from repogate.contract import Oracles
from repogate.environment import BuiltEnvironment, build_environment
from repogate.errors import ContractError, EnvironmentBuildError, PatchApplyError
from repogate.gates.verification import graded_tree, reference_tree, rerunner, run_repeated
from repogate.oracles.grading import BaseCheck, base_state_check, confirm_in_reference, observe_ids
from repogate.oracles.junit import TestOutcome
from repogate.oracles.pytest_runner import run_tests
from repogate.oracles.reruns import Rerun, Runner, flaky_ids, rerun
from repogate.patches import load_patch
from repogate.pipeline import (
    AttemptConfig,
    AttemptProgress,
    StopAttempt,
    install_tree,
    oracle_policy,
    workspace,
)
from repogate.receipt import Check, Observation, observe
from repogate.sandbox import SandboxPolicy
from repogate.state import sha256_hex

_BASE_CHECK_RULES = "base-check-2"
"""Part of the base-state key: bumped when the check's rules change (2: XFAIL fails a FAIL_TO_PASS
test, collection errors count as failing, failures rerun before the task is called invalid)."""


def base_state_key(base: str, hidden: bytes, env_digest: str, oracles: Oracles) -> str:
    """Key of a base-state result: everything it is a function of (sha256 hex).

    Args:
        base: the base commit (full SHA).
        hidden: the hidden test patch bytes.
        env_digest: the environment digest.
        oracles: the contract's oracles (test command, graded ids, repeats).
    """
    parts = [
        _BASE_CHECK_RULES,
        base,
        sha256_hex(hidden),
        env_digest,
        oracles.test_command,
        *oracles.fail_to_pass,
        "|",
        *oracles.pass_to_pass,
        str(oracles.repeat),
    ]
    return sha256_hex("\0".join(parts).encode())


def base_state_file(env_cache: Path, key: str) -> Path:
    """Where a valid base-state result is cached (beside the environment cache)."""
    return env_cache.parent / "base-state" / f"{key}.json"


def remember_base_state(env_cache: Path, key: str, runs: int, source: str) -> None:
    """Cache a valid base-state result observed elsewhere (task validation), under ``key``.

    Task validation runs the same base state (base commit plus hidden tests, same environment,
    same sandbox) ``runs`` times and keeps a task only when every FAIL_TO_PASS test failed and
    every PASS_TO_PASS test passed in all of them, which is the check gate E makes; the gold
    attempt that follows then reads it here instead of running the base's tests again.

    Args:
        env_cache: the environment cache folder.
        key: :func:`base_state_key` of the contract as written.
        runs: how many runs agreed.
        source: who observed it, kept in the receipt's details.
    """
    verdict = BaseCheck(valid=True, not_failing=(), not_passing=(), nonexistent=(), reasons=())
    seen = Observation(
        checks=(Check(name="environment_reproduced", status="passed"),),
        details={
            "flaky_excluded": [],
            "base_state": verdict.model_dump(),
            "observed_by": source,
            "runs": runs,
        },
    )
    path = base_state_file(env_cache, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(seen.model_dump_json())


def _check_base(
    cfg: AttemptConfig, progress: AttemptProgress, env: BuiltEnvironment
) -> Observation:
    checked = cfg.work / "base-hidden"
    try:
        graded_tree(
            workspace(cfg),
            progress.base,
            progress.base,
            progress.hidden,
            progress.hidden_paths,
            checked,
        )
    except PatchApplyError as exc:
        return _invalid(env, f"the hidden tests do not apply at the base: {exc}")
    policy, reports = oracle_policy(cfg), cfg.evidence / "tests-base"
    runs, flips = run_repeated(env, checked, cfg.contract, reports, policy)
    details: dict[str, Any] = {"flaky_excluded": sorted(flips)}
    broken = [r for r in runs if r.status != "ok"]
    if broken:
        return _invalid(env, f"base-state test run unusable: {broken[0].reason}", details)
    verdict, reruns = _confirmed_verdict(
        cfg, runs[-1].outcomes, flips, rerunner(env, checked, cfg.contract, reports, policy)
    )
    flips |= flaky_ids(reruns)
    details = {"flaky_excluded": sorted(flips), "reruns": [r.model_dump() for r in reruns]}
    if verdict.valid and verdict.uncollected:
        verdict, details["reference_check"] = _in_reference(cfg, progress, env, verdict)
    if not verdict.valid:
        details["base_state"] = verdict.model_dump()
        return _invalid(env, "task invalid: " + "; ".join(verdict.reasons), details)
    return Observation(
        checks=(Check(name="environment_reproduced", status="passed"),),
        details={**details, "base_state": verdict.model_dump()},
    )


def _in_reference(
    cfg: AttemptConfig, progress: AttemptProgress, env: BuiltEnvironment, verdict: BaseCheck
) -> tuple[BaseCheck, str]:
    """Run the files that did not collect at the base in the reference state: do their ids exist?

    Returns the verdict (:func:`repogate.oracles.grading.confirm_in_reference`) and a note for the
    record. Without a reference, or when it does not apply, the ids stay counted as failing.
    """
    source = cfg.contract.reference
    if source is None:
        return verdict, "no reference: ids of files not collectable at the base are not confirmed"
    tree = cfg.work / "reference-hidden"
    try:
        reference = load_patch(source, cfg.contract, cfg.source)
        reference_tree(
            workspace(cfg),
            progress.base,
            reference,
            progress.hidden,
            progress.hidden_paths,
            tree,
        )
    except (PatchApplyError, ContractError) as exc:
        return verdict, f"the reference does not apply, ids not confirmed: {exc}"
    ran = run_tests(
        env,
        tree,
        cfg.contract.oracles.test_command,
        verdict.uncollected,
        cfg.evidence / "tests-reference",
        oracle_policy(cfg),
    )
    if ran.status != "ok":
        return verdict, f"the reference's run is unusable, ids not confirmed: {ran.reason}"
    confirmed = confirm_in_reference(verdict, ran.outcomes)
    return (
        confirmed,
        f"{len(verdict.uncollected)} id(s) of files not collectable at the base checked in the reference state",
    )


def _confirmed_verdict(
    cfg: AttemptConfig, outcomes: dict[str, TestOutcome], flips: set[str], run: Runner
) -> tuple[BaseCheck, tuple[Rerun, ...]]:
    """Check the base state; rerun the ids with the wrong outcome first (they may be flaky).

    A PASS_TO_PASS test that does not pass, or a FAIL_TO_PASS test that does not fail, is run
    again (:func:`repogate.oracles.reruns.rerun`); one that flips is flaky and left out, not a
    reason to call the task invalid.
    """
    oracles = cfg.contract.oracles

    def check(left_out: set[str]) -> BaseCheck:
        return base_state_check(
            outcomes,
            [t for t in oracles.fail_to_pass if t not in left_out],
            [t for t in oracles.pass_to_pass if t not in left_out],
        )

    verdict = check(flips)
    wrong = [*verdict.not_failing, *verdict.not_passing]
    if not wrong:
        return verdict, ()
    observed, _matched, _invalid = observe_ids(outcomes, wrong)
    reruns = rerun(observed, run, "base")
    return check(flips | flaky_ids(reruns)), reruns


def _base_state(cfg: AttemptConfig, progress: AttemptProgress) -> Observation:
    """Build the environment, then check the base state, reusing an earlier valid result.

    A base-state result is a function of the base commit, the hidden test patch, the environment
    digest and the graded ids; a valid one is cached under that key (outside every sandbox's
    writable folders), so repeated attempts on one task run the base's tests once.
    """
    base_tree = install_tree(cfg)
    git.export_tree(workspace(cfg), progress.base, base_tree)
    recipe = cfg.contract.environment
    policy = SandboxPolicy(network=recipe.network, timeout_s=cfg.test_timeout_s)
    env = build_environment(recipe, base_tree, cfg.env_cache, policy)
    key = base_state_key(progress.base, progress.hidden, env.digest, cfg.contract.oracles)
    cached = base_state_file(cfg.env_cache, key)
    hit = cached.is_file()
    seen = (
        Observation.model_validate_json(cached.read_text())
        if hit
        else _check_base(cfg, progress, env)
    )
    if not hit and seen.checks[0].passed:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(seen.model_dump_json())
    if seen.checks[0].passed:
        detail = (
            f"{'cold' if env.cold else 'warm'} environment {env.digest[:12]}; "
            f"base state as expected{' (cached result)' if hit else ''}"
        )
        seen = seen.model_copy(
            update={"checks": (seen.checks[0].model_copy(update={"detail": detail}),)}
        )
    details = {
        **seen.details,
        "environment": env.model_dump(mode="json"),
        "base_state_key": key,
        "base_state_cached": hit,
    }
    return seen.model_copy(update={"details": details})


def _invalid(
    env: BuiltEnvironment, why: str, details: dict[str, object] | None = None
) -> Observation:
    return Observation(
        checks=(Check(name="environment_reproduced", status="error", detail=why),),
        details={"environment": env.model_dump(mode="json"), **(details or {})},
    )


def environment(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate E: build the environment at the base and check the base state with hidden tests.

    Raises:
        StopAttempt: the environment could not be built, or the task is invalid at its base.
    """
    receipt = observe("E", "", lambda: _base_state(cfg, progress))
    if receipt.crash is not None and receipt.crash.type == EnvironmentBuildError.__name__:
        why = f"environment could not be built: {receipt.crash.message}"
        receipt = receipt.model_copy(
            update={"checks": (Check(name="environment_reproduced", status="error", detail=why),)}
        )
    built = receipt.details.get("environment")
    env = None if built is None else BuiltEnvironment.model_validate(built)
    progress = replace(progress, env=env, pending=(receipt,))
    if receipt.status != "passed":
        why = receipt.checks[0].detail if receipt.checks else str(receipt.crash)
        raise StopAttempt("environment", why, progress)
    return progress
