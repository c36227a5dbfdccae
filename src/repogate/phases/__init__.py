"""The phases of one attempt, in order (:data:`PHASES`); see :mod:`repogate.pipeline` for the table.

Each phase takes the attempt's configuration and progress and returns new progress; gates are
called through :func:`repogate.pipeline.gate`, which times them, binds them to the candidate
state and stores their receipts as they finish.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from repogate import git, sandbox
from repogate.environment import BuiltEnvironment, activate, build_environment
from repogate.errors import EnvironmentBuildError, PatchApplyError
from repogate.gates._history import TestRunner
from repogate.gates._survival import CommandRunner
from repogate.gates.authority import check_authority, load_reviews
from repogate.gates.dependency import check_dependency_policy
from repogate.gates.generated import check_generated
from repogate.gates.integrity import check_integrity
from repogate.gates.release import check_release_notes
from repogate.gates.requirements import check_requirements
from repogate.gates.sentinel import SentinelInputs, check_sentinel
from repogate.gates.verification import (
    check_commands,
    check_tests,
    outcomes_of,
    run_repeated,
    test_tree,
)
from repogate.oracles.grading import base_state_check
from repogate.oracles.junit import TestOutcome
from repogate.oracles.pytest_runner import run_tests
from repogate.patches import touched_paths
from repogate.pipeline import (
    AttemptConfig,
    Phase,
    Progress,
    StopAttempt,
    agent_policy,
    candidate_state,
    emit,
    gate,
    hidden_patch,
    task_view,
    test_policy,
    workspace,
)
from repogate.receipt import Check, Observation, Receipt, Status, observe
from repogate.sandbox import ExecResult, SandboxPolicy
from repogate.state import sha256_hex


def prepare(cfg: AttemptConfig, progress: Progress) -> Progress:
    """Make the agent's workspace at the base (nothing newer) and read the hidden test patch."""
    base = git.prepare_workspace(cfg.source, cfg.contract.base_commit, workspace(cfg))
    return replace(progress, base=base, hidden=hidden_patch(cfg))


def _base_key(cfg: AttemptConfig, progress: Progress, env: BuiltEnvironment) -> str:
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


def _check_base(cfg: AttemptConfig, progress: Progress, env: BuiltEnvironment) -> Observation:
    checked = cfg.work / "base-hidden"
    try:
        test_tree(workspace(cfg), progress.base, progress.base, progress.hidden, checked)
    except PatchApplyError as exc:
        return _invalid(env, f"the hidden tests do not apply at the base: {exc}")
    runs, flips = run_repeated(
        env, checked, cfg.contract, cfg.evidence / "tests-base", test_policy(cfg)
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


def _base_state(cfg: AttemptConfig, progress: Progress) -> Observation:
    """Build the environment, then check the base state, reusing an earlier valid result.

    A base-state result is a function of the base commit, the hidden test patch, the environment
    digest and the graded ids; a valid one is cached under that key (outside every sandbox's
    writable folders), so repeated attempts on one task run the base's tests once.
    """
    base_tree = cfg.work / "base"
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


def environment(cfg: AttemptConfig, progress: Progress) -> Progress:
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


def propose(cfg: AttemptConfig, progress: Progress) -> Progress:
    """Let the agent work, then make the candidate commit and state (the harness, not the agent)."""
    ws = workspace(cfg)
    output = cfg.evidence / "agent"
    output.mkdir(parents=True, exist_ok=True)
    proposal = cfg.agent.propose(
        task_view(cfg.contract), ws, output, agent_policy(cfg, progress.workspace_env)
    )
    candidate = git.commit_candidate(ws, f"candidate of {cfg.agent.spec}", parent=progress.base)
    patch = git.diff_binary(ws, progress.base, candidate)
    (cfg.evidence / "patch.diff").write_bytes(patch)
    target = cfg.contract.target_commit or progress.base
    if target != progress.base:
        git.fetch_commit(ws, cfg.source, target)
    merged = git.merge_candidate(ws, target, candidate)
    progress = replace(
        progress,
        proposal=proposal,
        patch=patch,
        changed=git.changed_paths(ws, progress.base, candidate),
    )
    state = candidate_state(cfg, progress, candidate, merged.tree)
    progress = replace(progress, state=state)
    for pending in progress.pending:
        progress = emit(cfg, progress, pending.model_copy(update={"state_id": state.state_id}))
    details = {
        "proposal": proposal.model_dump(mode="json", exclude={"exec"}),
        "returncode": None if proposal.exec is None else proposal.exec.returncode,
        "merge": {"target": target, "tree": merged.tree, "conflicted": list(merged.conflicted)},
        "merged_by": "repogate-harness",
    }
    return gate(cfg, replace(progress, pending=()), "propose", lambda: Observation(details=details))


def integrity(cfg: AttemptConfig, progress: Progress) -> Progress:
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
            touched_paths(progress.hidden),
        ),
    )


def _verify_tree(cfg: AttemptConfig, progress: Progress, rev: str, label: str) -> Receipt:
    tree = cfg.work / label
    ws = workspace(cfg)

    def run() -> Observation:
        test_tree(ws, progress.base, rev, progress.hidden, tree)
        runs, flips = run_repeated(
            progress.workspace_env,
            tree,
            cfg.contract,
            cfg.evidence / f"tests-{label}",
            test_policy(cfg),
        )
        oracles = cfg.contract.oracles
        seen = check_tests(
            runs, flips | _base_flaky(progress), oracles.fail_to_pass, oracles.pass_to_pass
        )
        return seen.model_copy(
            update={"details": {**seen.details, "tree": label, "outcomes": outcomes_of(runs)}}
        )

    return observe("V", progress.candidate.state_id, run)


def _base_flaky(progress: Progress) -> set[str]:
    """Tests that flipped during the base-state check: excluded from every later grading too."""
    return {
        test
        for receipt in progress.receipts
        if receipt.gate == "E"
        for test in receipt.details.get("flaky_excluded", [])
    }


def verification(cfg: AttemptConfig, progress: Progress) -> Progress:
    """Gate V: graded tests, extra oracle commands, and the dependency policy."""
    progress = emit(
        cfg, progress, _verify_tree(cfg, progress, progress.candidate.candidate_commit, "candidate")
    )
    contract = cfg.contract
    if contract.oracles.commands:
        progress = gate(
            cfg,
            progress,
            "V-commands",
            lambda: check_commands(
                contract.oracles.commands,
                cfg.work / "base",
                cfg.work / "candidate",
                progress.workspace_env,
                test_policy(cfg),
            ),
        )
    candidate_checkout = cfg.work / "candidate-clean"
    git.export_tree(workspace(cfg), progress.candidate.candidate_commit, candidate_checkout)
    policy = SandboxPolicy(network=contract.environment.network, timeout_s=cfg.test_timeout_s)
    return gate(
        cfg,
        progress,
        "V-dependencies",
        lambda: check_dependency_policy(
            cfg.work / "base",
            candidate_checkout,
            contract.oracles.lockfile,
            progress.changed,
            policy,
        ),
    )


def _reviews_path(cfg: AttemptConfig) -> Path | None:
    reviews = cfg.contract.authority.reviews
    return (
        None
        if reviews is None
        else cfg.contract.resolve(reviews.replace("{agent}", cfg.agent_name))
    )


def _authority(cfg: AttemptConfig, progress: Progress) -> Observation:
    state = progress.candidate
    authority = cfg.contract.authority
    codeowners = None
    if authority.codeowners:
        raw = git.show_file(workspace(cfg), state.base_commit, authority.codeowners)
        codeowners = None if raw is None else raw.decode("utf-8", "replace")
    path = _reviews_path(cfg)
    scenario = cfg.contract.cohort.get("origin") == "scenario"
    reviews = None
    if path is not None and path.is_file():
        reviews = load_reviews(path, state.patch_digest if scenario else None)
    return check_authority(
        codeowners,
        progress.changed,
        reviews,
        state.patch_digest,
        authority.author,
        authority.min_approvals,
    )


def lifecycle(cfg: AttemptConfig, progress: Progress) -> Progress:
    """The lifecycle gates: generated-artifact freshness, authority (A), release receipt."""
    if cfg.contract.profile != "lifecycle" and not cfg.contract.oracles.generators:
        return progress
    regen = cfg.work / "regenerate"
    git.export_tree(workspace(cfg), progress.candidate.candidate_commit, regen)
    env = progress.workspace_env
    policy = SandboxPolicy(
        network=False,
        timeout_s=cfg.test_timeout_s,
        env=activate(env, regen),
        writable=(cfg.work,),
        hidden=(cfg.source,),
    )
    progress = gate(
        cfg,
        progress,
        "V-generated",
        lambda: check_generated(
            regen,
            cfg.contract.oracles.generators,
            progress.changed,
            policy,
            env.bin_dir,
        ),
    )
    if cfg.contract.profile != "lifecycle":
        return progress
    progress = gate(cfg, progress, "A", lambda: _authority(cfg, progress))
    return gate(
        cfg,
        progress,
        "release",
        lambda: check_release_notes(progress.patch, cfg.contract.oracles.release_notes),
    )


def requirements(cfg: AttemptConfig, progress: Progress) -> Progress:
    """Gate R: every criterion's linked oracles passed; the agent's claims compared."""
    outcomes: dict[str, TestOutcome] = {}
    checks: dict[str, Status] = {}
    for receipt in progress.receipts:
        outcomes.update(receipt.details.get("outcomes", {}) if receipt.gate == "V" else {})
        for check in receipt.checks:
            checks[check.name] = (
                check.status if checks.get(check.name) in (None, "passed") else checks[check.name]
            )
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


def merge(cfg: AttemptConfig, progress: Progress) -> Progress:
    """The harness's merge: when the merged tree differs from the tested one, verify it again."""
    state = progress.candidate
    if state.merge_tree is None or state.merge_tree == state.candidate_tree:
        return progress
    ws = workspace(cfg)
    target = cfg.contract.target_commit or state.base_commit
    merged = git.commit_tree(
        ws, state.merge_tree, [target, state.candidate_commit], "harness merge"
    )
    return emit(cfg, progress, _verify_tree(cfg, progress, merged, "merged"))


PHASES: tuple[tuple[str, Phase], ...] = (
    ("prepare", prepare),
    ("environment", environment),
    ("propose", propose),
    ("integrity", integrity),
    ("verification", verification),
    ("lifecycle", lifecycle),
    ("requirements", requirements),
    ("merge", merge),
)
"""The order of one attempt (the sentinel, last, is defined below)."""


def _history_runner(cfg: AttemptConfig, progress: Progress) -> TestRunner:
    """Run test files for the sentinel, in the attempt's environment and test sandbox.

    A run without a trustworthy report gives no outcomes. In history that makes the step an
    ``error`` (its tests cannot be collected there); on a replayed state, where the same files ran
    in the same environment in history, it counts as the candidate's regression (a hang or a
    collection crash the candidate brought in).
    """
    env = progress.workspace_env
    counter = iter(range(1_000_000))

    def run_tests_in(checkout: Path, tests: Sequence[str]) -> Mapping[str, str]:
        report = cfg.work / "sentinel-reports" / str(next(counter))
        ran = run_tests(
            env, checkout, cfg.contract.oracles.test_command, list(tests), report, test_policy(cfg)
        )
        return ran.outcomes if ran.status == "ok" else {}

    return run_tests_in


def _command_runner(cfg: AttemptConfig, progress: Progress) -> CommandRunner:
    """Run generators and interpreter probes for the sentinel inside the attempt's environment."""
    env = progress.workspace_env

    def run_command(argv: Sequence[str], cwd: Path, network: bool) -> ExecResult:
        policy = SandboxPolicy(
            network=network,
            timeout_s=cfg.test_timeout_s,
            env=activate(env, cwd),
            writable=(cfg.work,),
            hidden=(cfg.source,),
        )
        return sandbox.run(argv, cwd, policy)

    return run_command


def _sentinel(cfg: AttemptConfig, progress: Progress) -> Observation:
    state = progress.candidate
    contract = cfg.contract
    history = cfg.work / "history.git"
    git.harness_repo(cfg.source, history)
    git.fetch_commit(history, workspace(cfg), state.candidate_commit)
    start = git.tree_from_dir(history, cfg.work / "candidate")
    reference = None
    if contract.reference is not None and contract.reference.commit is not None:
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
            target_branch=contract.target_branch,
            focused_tests=contract.oracles.fail_to_pass,
            regression_tests=contract.oracles.pass_to_pass,
            generators=contract.oracles.generators,
            environment_digest=progress.workspace_env.digest,
            run_command=_command_runner(cfg, progress),
            work_dir=cfg.work / "sentinel",
        )
    )


def sentinel(cfg: AttemptConfig, progress: Progress) -> Progress:
    """Gate S: replay the real later history onto the merged candidate.

    Runs when the contract declares a window, and always in the lifecycle profile (where an
    undeclared window is an error).
    """
    window = cfg.contract.sentinel
    if cfg.contract.profile != "lifecycle" and not (window.follow_ups or window.follow_up_count):
        return progress
    (cfg.work / "sentinel").mkdir(exist_ok=True)
    return gate(cfg, progress, "S", lambda: _sentinel(cfg, progress))


PHASES = (*PHASES, ("sentinel", sentinel))
