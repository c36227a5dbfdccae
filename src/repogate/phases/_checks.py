"""The checking phases on the candidate: integrity (I), verification (V), requirements (R), merge."""

from __future__ import annotations

from repogate import git
from repogate.gates.dependency import check_dependency_policy
from repogate.gates.integrity import check_integrity
from repogate.gates.requirements import check_requirements
from repogate.gates.verification import (
    check_commands,
    check_tests,
    confirm_failures,
    graded_tree,
    outcomes_of,
    rerunner,
    run_repeated,
)
from repogate.oracles.junit import TestOutcome
from repogate.oracles.reruns import Runner
from repogate.phases._regression import regressions
from repogate.pipeline import (
    AttemptConfig,
    AttemptProgress,
    emit,
    gate,
    landed_commit,
    oracle_policy,
    workspace,
)
from repogate.receipt import Observation, Receipt, Status, observe
from repogate.sandbox import SandboxPolicy


def integrity(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate I: edits stay in the permitted paths and leave the oracle alone."""
    ws = workspace(cfg)
    state = progress.candidate

    def read(rev: str, path: str) -> bytes | None:
        return git.show_file(ws, rev, path)

    return gate(
        cfg,
        progress,
        "I",
        lambda: check_integrity(
            progress.changed,
            cfg.contract.permissions,
            read,
            state.base_commit,
            state.candidate_commit,
            progress.hidden_paths,
            progress.patch,
        ),
    )


def _verify_tree(cfg: AttemptConfig, progress: AttemptProgress, rev: str, label: str) -> Receipt:
    tree = cfg.work / label
    ws = workspace(cfg)

    def run() -> Observation:
        graded_tree(
            ws,
            progress.base,
            rev,
            progress.hidden,
            progress.hidden_paths,
            tree,
            embedded=progress.embedded,
        )
        env, policy = progress.workspace_env, oracle_policy(cfg)
        reports = cfg.evidence / f"tests-{label}"
        runs, flips = run_repeated(env, tree, cfg.contract, reports, policy)
        oracles = cfg.contract.oracles
        base_flaky, base_xfailed = _base_flaky(progress), _base_state(progress, "xfailed")
        base_xpassed = _base_state(progress, "xpassed")

        def at_base() -> Runner:
            base_tree = cfg.work / f"base-for-{label}"
            graded_tree(
                ws,
                progress.base,
                progress.base,
                progress.hidden,
                progress.hidden_paths,
                base_tree,
                embedded=progress.embedded,
            )
            return rerunner(env, base_tree, cfg.contract, reports / "base", policy)

        reruns = confirm_failures(
            runs,
            oracles.pass_to_pass,
            base_flaky | flips,
            base_xfailed,
            rerunner(env, tree, cfg.contract, reports, policy),
            at_base,
            base_xpassed=base_xpassed,
        )
        seen = check_tests(
            runs,
            flips,
            oracles.fail_to_pass,
            oracles.pass_to_pass,
            base_flaky,
            base_xfailed=base_xfailed,
            base_xpassed=base_xpassed,
            reruns=reruns,
        )
        return seen.model_copy(
            update={"details": {**seen.details, "tree": label, "outcomes": outcomes_of(runs)}}
        )

    return observe("V", progress.candidate.state_id, run)


def _base_flaky(progress: AttemptProgress) -> set[str]:
    """Tests that flipped during the base-state check: excluded from every later grading too."""
    return {
        test
        for receipt in progress.receipts
        if receipt.gate == "E"
        for test in receipt.details.get("flaky_excluded", [])
    }


def _base_state(progress: AttemptProgress, outcome: str) -> set[str]:
    """PASS_TO_PASS tests with ``outcome`` (``xfailed``, ``xpassed``) at the base.

    The same outcome on the candidate leaves them as they were.
    """
    return {
        test
        for receipt in progress.receipts
        if receipt.gate == "E"
        for test in receipt.details.get("base_state", {}).get(outcome, [])
    }


def verification(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate V: graded tests, the base-passing regression set, extra commands, dependency policy.

    Commands and the dependency policy compare clean exports of the base and the candidate: not
    the install tree (install commands leave files there) nor the test tree (hidden tests, and
    whatever the tests wrote).
    """
    state = progress.candidate
    tested = _verify_tree(cfg, progress, state.candidate_commit, "candidate")
    progress = emit(cfg, progress, tested)
    contract = cfg.contract
    graded = [*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass]
    progress = regressions(
        cfg,
        progress,
        state.candidate_commit,
        cfg.work / "candidate",
        dict(tested.details.get("outcomes", {})),
        [*graded, *_base_flaky(progress)],
    )
    base, candidate = cfg.work / "base-clean", cfg.work / "candidate-clean"
    git.export_tree(workspace(cfg), state.base_commit, base)
    git.export_tree(workspace(cfg), state.candidate_commit, candidate)
    if contract.oracles.commands:
        progress = gate(
            cfg,
            progress,
            "V-commands",
            lambda: check_commands(
                contract.oracles.commands,
                base,
                candidate,
                progress.workspace_env,
                oracle_policy(cfg),
            ),
        )
    # the manager runs on the candidate's files: the agent's network grant, never the base install's
    policy = SandboxPolicy(network=contract.permissions.network, timeout_s=cfg.test_timeout_s)
    return gate(
        cfg,
        progress,
        "V-dependencies",
        lambda: check_dependency_policy(
            base, candidate, contract.oracles.lockfile, progress.changed, policy
        ),
    )


def requirements(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate R: every criterion's linked oracles passed; the agent's claims compared."""
    outcomes: dict[str, TestOutcome] = {}
    checks: dict[str, Status] = {}
    for receipt in progress.receipts:
        if receipt.gate == "V":
            outcomes.update(receipt.details.get("outcomes", {}))
        if receipt.gate == "V-commands":
            checks.update({f"command:{n}": s for n, s in receipt.details["statuses"].items()})
        for check in receipt.checks:  # the first status that is not "passed" stands
            if checks.get(check.name) in (None, "passed"):
                checks[check.name] = check.status
    for generator in cfg.contract.oracles.generators:
        checks[f"generator:{generator.name}"] = checks.get("generated_artifacts_fresh", "skipped")
    claims = progress.proposal.requirements if progress.proposal else None
    return gate(
        cfg,
        progress,
        "R",
        lambda: check_requirements(
            cfg.contract.requirement.criteria,
            outcomes,
            checks,
            claims,
        ),
    )


def merge(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """The harness's merge: when the merged tree differs from the tested one, verify it again."""
    landed = landed_commit(cfg, progress.candidate)
    if landed == progress.candidate.candidate_commit:
        return progress
    return emit(cfg, progress, _verify_tree(cfg, progress, landed, "merged"))
