"""Gate S: replay the real later history onto the merged candidate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from repogate import environments, git
from repogate.attempt import AttemptConfig, AttemptProgress, evidence_so_far, gate, gate_seen
from repogate.decision import failed_before
from repogate.errors import ContractError, PatchApplyError
from repogate.gates.graded_trees import graded_tree, write_tree
from repogate.gates.sentinel import (
    CommandRunner,
    MatrixRunner,
    SentinelInputs,
    SentinelObservation,
    TestRunner,
    check_sentinel,
)
from repogate.oracles.pytest_runner import TestRun, run_isolating, run_tests
from repogate.patches import load_patch
from repogate.phases._shared import (
    generator_policy,
    install_tree,
    landed_commit,
    oracle_policy,
    workspace,
)
from repogate.phases._trees import reference_state
from repogate.receipt import Check, Observation
from repogate.sandbox import ExecResult, SandboxPolicy
from repogate.validity import result_key, run_conditions
from repogate.vocabulary import REPORTS, SKIP_SENTINEL_FLAG, CheckName


def _history_runner(cfg: AttemptConfig, progress: AttemptProgress) -> TestRunner:
    """Run test files for the sentinel, in the attempt's environment and test sandbox.

    Files are counted one by one: a file that fails to collect (or whose conftest cannot be
    imported) is reported as an ``error`` under its path and hides no other file's results
    (:func:`~repogate.oracles.pytest_runner.run_isolating`). In history such a file is left out of
    the step (it cannot be collected there); on a replayed state, where the same files ran in the
    same environment in history, a missing result counts as the candidate's regression (a hang or a
    collection crash the candidate brought in).
    """
    env = progress.workspace_env
    counter = iter(range(1_000_000))

    def run_tests_in(checkout: Path, tests: Sequence[str]) -> Mapping[str, str]:
        def once(files: Sequence[str]) -> TestRun:
            report = cfg.work / "sentinel-reports" / str(next(counter))
            command = cfg.contract.oracles.test_command
            return run_tests(env, checkout, command, list(files), report, oracle_policy(cfg))

        return run_isolating(once, list(tests))

    return run_tests_in


def _matrix_runner(cfg: AttemptConfig) -> MatrixRunner:
    """Return a runner of the graded tests under another Python version.

    The contract's recipe is built for that version (cached like any environment) and the same
    test command runs in the same sandbox.
    """

    def run_under(
        version: str, interpreter: Path, checkout: Path, tests: Sequence[str]
    ) -> Mapping[str, str]:
        recipe = cfg.contract.environment.model_copy(update={"python": version})
        policy = SandboxPolicy(network=recipe.network, timeout_s=cfg.test_timeout_s)
        env = environments.build(
            environments.BuildRequest(
                recipe=recipe,
                base_checkout=install_tree(cfg),
                cache_dir=cfg.env_cache,
                policy=policy,
            )
        )
        report = cfg.work / "matrix-reports" / version
        ran = run_tests(
            env,
            checkout,
            cfg.contract.oracles.test_command,
            list(tests),
            report,
            oracle_policy(cfg),
        )
        return ran.outcomes

    return run_under


def _command_runner(cfg: AttemptConfig, progress: AttemptProgress) -> CommandRunner:
    """Run generators and interpreter probes for the sentinel inside the attempt's environment."""
    env = progress.workspace_env

    def run_command(argv: Sequence[str], cwd: Path, network: bool) -> ExecResult:
        return env.run(argv, cwd, generator_policy(cfg, env, cwd, network))

    return run_command


def _reference_state(cfg: AttemptConfig, progress: AttemptProgress, history: Path) -> str | None:
    """Return the tree of the base with the reference patch and the hidden tests, in ``history``.

    Made as the candidate's start tree is, so the sentinel can swap the reference's change for
    the candidate's where the reference landed (:mod:`repogate.gates.sentinel._anchor`). None when
    the contract has no reference patch or it cannot be read or applied (the replay then starts
    from the merged candidate, and the receipt says so).
    """
    contract = cfg.contract
    if contract.reference is None:
        return None
    try:
        patch = load_patch(contract.reference, contract, cfg.source)
        dest = cfg.work / "sentinel-reference"
        write_tree(reference_state(cfg, progress, patch), dest)
    except (ContractError, PatchApplyError):
        return None
    return git.tree_from_dir(history, dest)


def _sentinel(cfg: AttemptConfig, progress: AttemptProgress) -> SentinelObservation:
    state = progress.candidate
    contract = cfg.contract
    history = cfg.work / "history.git"
    git.harness_repo(cfg.source, history)
    git.fetch_commit(history, workspace(cfg), state.candidate_commit)
    # The tree that landed, with the hidden tests: made afresh, since the tests that already ran
    # in the candidate's test tree may have written there.
    start_dir = cfg.work / "sentinel-start"
    graded_tree(
        workspace(cfg),
        state.base_commit,
        landed_commit(cfg, state),
        progress.hidden,
        progress.hidden_paths,
        start_dir,
        embedded=progress.embedded,
    )
    start = git.tree_from_dir(history, start_dir)
    reference = None
    reference_state = None
    if contract.sentinel.after is not None:  # where the window starts (an imported fix's landing)
        reference = git.rev_parse(cfg.source, contract.sentinel.after)
        reference_state = _reference_state(cfg, progress, history)
    elif contract.reference is not None and contract.reference.commit is not None:
        reference = git.rev_parse(cfg.source, contract.reference.commit)
    return check_sentinel(
        SentinelInputs(
            repo=history,
            base=state.base_commit,
            candidate=state.candidate_commit,
            start_tree=start,
            config=contract.sentinel,
            run_tests=_history_runner(cfg, progress),
            cache_dir=cfg.history_cache,
            reference=reference,
            reference_state=reference_state,
            target=git.rev_parse(cfg.source, contract.target_commit)
            if contract.target_commit
            else None,
            target_branch=contract.target_branch,
            focused_tests=contract.oracles.fail_to_pass,
            regression_tests=contract.oracles.pass_to_pass,
            generators=contract.oracles.generators,
            environment_digest=result_key(run_conditions(progress.workspace_env, contract.oracles)),
            run_command=_command_runner(cfg, progress),
            matrix_runner=_matrix_runner(cfg),
            workers=2,
            work_dir=cfg.work / "sentinel",
            packages=progress.workspace_env.packages,
            python=progress.workspace_env.toolchain.python,
        )
    )


def not_run(rejected_by: tuple[CheckName, ...]) -> Observation:
    """Gate S's observation when it is left out: each check it reports ``skipped``, saying why.

    Args:
        rejected_by: the hard checks that had already failed (:func:`repogate.decision.failed_before`).

    Returns:
        The checks of :data:`repogate.vocabulary.REPORTS` ``["S"]``, each ``skipped`` with the
        detail ``not run: already rejected by A, B``; details ``not_run`` (the option) and
        ``rejected_by`` (the names).
    """
    why = f"not run: already rejected by {', '.join(rejected_by)}"
    return Observation(
        checks=tuple(Check(name=name, status="skipped", detail=why) for name in REPORTS["S"]),
        details={"not_run": SKIP_SENTINEL_FLAG, "rejected_by": list(rejected_by)},
    )


def sentinel(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate S: replay the real later history onto the merged candidate.

    Runs when the contract declares a window, and always in the lifecycle profile (where an
    undeclared window is an error). With ``cfg.skip_sentinel_when_rejected``, an attempt a hard
    check has already failed (errors are no rejection) is not replayed: decisions are
    non-compensating, so the sentinel could not change its outcome; its receipt says so
    (:func:`not_run`).
    """
    window = cfg.contract.sentinel
    if cfg.contract.profile != "lifecycle" and not (window.follow_ups or window.follow_up_count):
        return progress
    if cfg.skip_sentinel_when_rejected:
        rejected_by = failed_before(evidence_so_far(cfg, progress), "S")
        if rejected_by:
            return gate(cfg, progress, "S", lambda: not_run(rejected_by))
    (cfg.work / "sentinel").mkdir(exist_ok=True)
    progress, seen = gate_seen(cfg, progress, "S", lambda: _sentinel(cfg, progress))
    if seen is None:
        return progress
    return replace(progress, extra_repair_effort=seen.extra_repair_effort)
