"""Gate E: build the environment at the base and check the base state with the hidden tests."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from repogate import git
from repogate.environment import BuiltEnvironment, build_environment
from repogate.errors import EnvironmentBuildError, PatchApplyError
from repogate.gates.verification import graded_tree, run_repeated
from repogate.oracles.grading import base_state_check
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


def _base_key(cfg: AttemptConfig, progress: AttemptProgress, env: BuiltEnvironment) -> str:
    """Key of a base-state result: everything it is a function of."""
    oracles = cfg.contract.oracles
    parts = [
        progress.base,
        sha256_hex(progress.hidden),
        env.digest,
        oracles.test_command,
        *oracles.fail_to_pass,
        "|",
        *oracles.pass_to_pass,
        str(oracles.repeat),
    ]
    return sha256_hex("\0".join(parts).encode())


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
    runs, flips = run_repeated(
        env, checked, cfg.contract, cfg.evidence / "tests-base", oracle_policy(cfg)
    )
    details: dict[str, Any] = {"flaky_excluded": sorted(flips)}
    broken = [r for r in runs if r.status != "ok"]
    if broken:
        return _invalid(env, f"base-state test run unusable: {broken[0].reason}", details)
    oracles = cfg.contract.oracles
    verdict = base_state_check(
        runs[-1].outcomes,
        [t for t in oracles.fail_to_pass if t not in flips],
        [t for t in oracles.pass_to_pass if t not in flips],
    )
    if not verdict.valid:
        details["base_state"] = verdict.model_dump()
        return _invalid(env, "task invalid: " + "; ".join(verdict.reasons), details)
    return Observation(
        checks=(Check(name="environment_reproduced", status="passed"),),
        details={**details, "base_state": verdict.model_dump()},
    )


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
    key = _base_key(cfg, progress, env)
    cached = cfg.env_cache.parent / "base-state" / f"{key}.json"
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
