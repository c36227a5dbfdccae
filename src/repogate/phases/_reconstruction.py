"""Gate E for an environment the agent supplied: build its recipe at the base, grade it in stages.

Runs after ``propose`` and only when the contract says ``[environment] supplied_by = "agent"``.
The rules and record are :mod:`repogate.gates.reconstruction`'s; here the agent's recipe is read
(:mod:`repogate.environments.agent_recipe`), built through :func:`repogate.environments.build`
in a clean harness-owned checkout of the base, and the base's trees are run in it and in the
evaluator's environment. Nothing here changes which environment later gates grade in: that stays
the evaluator's, built from the contract's recipe by the environment phase.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from repogate import environments
from repogate._logs import cause_line, keep_log
from repogate.attempt import AttemptConfig, AttemptProgress, gate
from repogate.environments import (
    AgentRecipeError,
    Environment,
    agent_environment_recipe,
    read_agent_recipe,
)
from repogate.errors import ContractError, EnvironmentBuildError
from repogate.gates.graded_trees import write_tree
from repogate.gates.reconstruction import (
    StageResult,
    differing,
    reconstruction,
    top_level_packages,
    uncollected,
)
from repogate.oracles.junit import TestOutcome
from repogate.oracles.pytest_runner import run_tests
from repogate.phases._environment import _as_of
from repogate.phases._shared import oracle_policy
from repogate.phases._trees import export, graded_state
from repogate.receipt import Check, Observation
from repogate.sandbox import SandboxPolicy
from repogate.vocabulary import ErrorKind, ReconstructionStage


def agent_cache(cfg: AttemptConfig) -> Path:
    """The cache agents' environments are built in: beside the evaluator's, never in it.

    An agent chooses its recipe; a build of it must never be what the evaluator reuses for a
    contract's own recipe (the same key, made from the agent's choice), so the two caches
    are apart.
    """
    return cfg.env_cache.parent / "agent-envs"


def _packages(env: Environment, tree: Path) -> tuple[str, ...]:
    """The top-level packages below each of the environment's import roots in ``tree``."""
    names: dict[str, list[str]] = {}
    for root in env.checkout_roots():
        folder = tree / root
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        names[root] = [
            e.name
            for e in entries
            if e.is_dir(follow_symlinks=False) and (Path(e.path) / "__init__.py").is_file()
        ]
    return top_level_packages(names)


def _imports(cfg: AttemptConfig, env: Environment, tree: Path) -> StageResult:
    """Import the checkout's top-level packages in ``env`` (no network, the test budget)."""
    packages = _packages(env, tree)
    if not packages:
        return StageResult(stage="imports", status="passed", detail="no top-level package")
    code = "; ".join(f"import {p}" for p in packages)
    ran = env.run([*env.python_argv(), "-c", code], tree, oracle_policy(cfg))
    if ran.ok:
        return StageResult(stage="imports", status="passed", detail=", ".join(packages))
    said = cause_line(ran.stderr) or f"exit {ran.returncode}"
    why = "timed out" if ran.timed_out else said
    return StageResult(stage="imports", status="failed", detail=f"import {code!r}: {why}")


def _outcomes(
    cfg: AttemptConfig, progress: AttemptProgress, env: Environment, name: str
) -> Mapping[str, TestOutcome] | tuple[str, ErrorKind]:
    """Run the graded ids at the base (hidden tests applied) in ``env``.

    Returns the outcomes, or why there are none with the error kind that would be the
    evaluator's (``timeout`` when the run reached its budget).
    """
    tree = cfg.work / f"reconstruction-{name}"
    write_tree(graded_state(cfg, progress, progress.base), tree)
    oracles = cfg.contract.oracles
    ran = run_tests(
        env,
        tree,
        oracles.test_command,
        [*oracles.fail_to_pass, *oracles.pass_to_pass],
        cfg.evidence / f"tests-reconstruction-{name}",
        oracle_policy(cfg),
    )
    if ran.status != "ok":
        kind: ErrorKind = "timeout" if ran.execution.timed_out else "other evaluator error"
        return ran.reason or "the test run reported nothing", kind
    return ran.outcomes


def _graded(cfg: AttemptConfig, progress: AttemptProgress) -> Observation:
    """Read, build and grade the agent's environment; the stages it reached, in order."""
    stages: list[StageResult] = []
    details: dict[str, object] = {"supplied_by": "agent"}

    def stop(stage: ReconstructionStage, why: str) -> Observation:
        stages.append(StageResult(stage=stage, status="failed", detail=why))
        return reconstruction(stages, details)

    try:
        given = read_agent_recipe(cfg.evidence / "agent")
    except AgentRecipeError as exc:
        return stop("built", str(exc))
    details["recipe"] = given.model_dump(mode="json")
    recipe = agent_environment_recipe(cfg.contract.environment, given)
    tree = cfg.work / "reconstruction-install"
    export(cfg, progress.base, tree)
    policy = SandboxPolicy(network=recipe.network, timeout_s=cfg.test_timeout_s)
    try:
        env = environments.build(
            environments.BuildRequest(
                recipe=recipe,
                base_checkout=tree,
                cache_dir=agent_cache(cfg),
                policy=policy,
                exclude_newer=_as_of(cfg, progress),
            )
        )
    except (EnvironmentBuildError, ContractError) as exc:
        said = getattr(exc, "log", "") or str(exc)
        log = keep_log(cfg.evidence / "logs" / "reconstruction-build.log", said)
        return stop("built", f"{exc}; log: {log}")
    details["environment"] = env.describe()
    stages.append(
        StageResult(stage="built", status="passed", detail=f"environment {env.digest[:12]}")
    )
    base = cfg.work / "reconstruction-base"
    export(cfg, progress.base, base)
    imported = _imports(cfg, env, base)
    stages.append(imported)
    if imported.status == "failed":
        return reconstruction(stages, details)
    theirs = _outcomes(cfg, progress, progress.workspace_env, "evaluator")
    if isinstance(theirs, tuple):  # it gave outcomes at gate E: not the agent's to answer for
        why = f"the evaluator's environment gave no outcomes at the base: {theirs[0]}"
        return Observation(
            checks=(Check.error("environment_reproduced", why, theirs[1]),),
            details={**details, "stages": [s.model_dump() for s in stages]},
        )
    ours = _outcomes(cfg, progress, env, "agent")
    if isinstance(ours, tuple):
        return stop("collects", f"the graded tests do not run: {ours[0]}")
    oracles = cfg.contract.oracles
    ids = [*oracles.fail_to_pass, *oracles.pass_to_pass]
    lost = uncollected(theirs, ours, ids)
    if lost:
        return stop("collects", lost)
    stages.append(StageResult(stage="collects", status="passed", detail=f"{len(ids)} graded id(s)"))
    changed = differing(theirs, ours, ids, progress.base_flaky)
    if changed:
        return stop("reproduces", changed)
    stages.append(
        StageResult(
            stage="reproduces", status="passed", detail="outcomes as in the evaluator's environment"
        )
    )
    return reconstruction(stages, details)


def reconstruction_phase(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate E's reconstruction (receipt ``E-reconstruction``), when the agent supplies the environment.

    Does nothing for a contract whose evaluator supplies it. Never stops the attempt: a failure
    is ``environment_reproduced`` failed (the agent's), and later gates grade in the evaluator's
    environment whatever happened here.
    """
    if cfg.contract.environment.supplied_by != "agent":
        return progress
    return gate(cfg, progress, "E-reconstruction", lambda: _graded(cfg, progress))
