"""The checking phases on the candidate: integrity (I), verification (V), requirements (R), merge."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path

from repogate import git
from repogate.attempt import AttemptConfig, AttemptProgress, emit, gate, gate_seen
from repogate.gates.dependency import LockCache, check_dependency_policy
from repogate.gates.graded_oracle import GradedOracle, graded_modules
from repogate.gates.graded_trees import write_tree
from repogate.gates.imports import environment_names, import_names_of_tests
from repogate.gates.integrity import check_integrity
from repogate.gates.oracle_commands import check_commands
from repogate.gates.requirements import check_requirements
from repogate.gates.verification import GradedTests, grade_tree
from repogate.patches import load_patch, per_file
from repogate.phases._added_reads import added_reads
from repogate.phases._regression import regressions
from repogate.phases._shared import landed_commit, oracle_policy, workspace
from repogate.phases._trees import export, graded_state
from repogate.receipt import Observation, Receipt, Status, observed
from repogate.sandbox import SandboxPolicy
from repogate.vocabulary import GradedTree


def _carried_hidden(ws: Path, progress: AttemptProgress) -> set[str]:
    """Return the hidden-test paths the candidate changes exactly as the hidden tests do.

    A pull request gated with its own tests as hidden tests (``repogate gate --fail-to-pass``)
    carries them byte for byte; that is no edit of the oracle (the graded tree resets those paths
    and applies the hidden tests anyway). Any other change to a hidden-test path still is.
    """
    state = progress.candidate
    changed = {c.path for c in progress.changed} | {c.old_path for c in progress.changed}
    parts = per_file(progress.hidden)
    return {
        path
        for path in progress.hidden_paths
        if path in changed
        and path in parts
        and git.diff_binary(ws, state.base_commit, state.candidate_commit, (path,)) == parts[path]
    }


RUNNER_REQUIRED = ("pluggy",)
"""What an environment of the runner under test must list installed (pytest's own dependency)."""


def _reference_paths(cfg: AttemptConfig) -> frozenset[str]:
    """The paths the contract's reference patch changes (none without a reference)."""
    source = cfg.contract.reference
    if source is None:
        return frozenset()
    return frozenset(per_file(load_patch(source, cfg.contract, cfg.source)))


def integrity(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate I: edits stay in the permitted paths and leave the oracle alone."""
    ws = workspace(cfg)
    state = progress.candidate

    def read(rev: str, path: str) -> bytes | None:
        return git.show_file(ws, rev, path)

    def test_modules() -> dict[str, frozenset[str]]:
        paths = {*git.tree_paths(ws, state.base_commit), *progress.hidden_paths}
        return import_names_of_tests(paths, lambda folder: f"{folder}/__init__.py" in paths)

    def check() -> Observation:
        carried = _carried_hidden(ws, progress)
        return check_integrity(
            progress.changed,
            cfg.contract.permissions,
            read,
            state.base_commit,
            state.candidate_commit,
            tuple(p for p in progress.hidden_paths if p not in carried),
            progress.patch,
            environment_names(
                progress.workspace_env,
                # the runner under test is the checkout's, not installed: its dependency is
                RUNNER_REQUIRED if cfg.contract.oracles.runner_under_test else ("pytest",),
            ),
            GradedOracle(
                modules=graded_modules(cfg.contract, progress.hidden_paths),
                reads=progress.graded_reads,
                added_reads=added_reads(cfg, progress),
            ),
            runner_under_test=cfg.contract.oracles.runner_under_test,
            reference_paths=_reference_paths(cfg) if cfg.contract.oracles.runner_under_test else (),
            prebuilt=progress.workspace_env.prebuilt_extensions(),
            install=progress.workspace_env.commands,
            test_modules=test_modules(),
        )

    return gate(cfg, progress, "I", check)


def _verify_tree(
    cfg: AttemptConfig, progress: AttemptProgress, rev: str, label: GradedTree
) -> tuple[Receipt, GradedTests | None]:
    """Grade the tree of ``rev`` (hidden tests applied) in ``cfg.work / label``."""
    tree = cfg.work / label

    def run() -> GradedTests:
        state = graded_state(cfg, progress, rev)
        write_tree(state, tree)
        seen = grade_tree(
            progress.workspace_env,
            tree,
            cfg.contract,
            cfg.evidence / f"tests-{label}",
            oracle_policy(cfg),
            states=(state, graded_state(cfg, progress, progress.base)),
            base_flaky=progress.base_flaky,
            base_xfailed=progress.base_xfailed,
            base_xpassed=progress.base_xpassed,
        )
        record = {**seen.details, "tree": label, "outcomes": dict(seen.outcomes)}
        return seen.model_copy(update={"details": record, "tree": label})

    return observed("V", progress.candidate.state_id, run)


def _clean_trees(cfg: AttemptConfig, base: str, candidate: str) -> Callable[[], tuple[Path, Path]]:
    """Return what exports clean trees of ``base`` and ``candidate`` once, on first call.

    Most candidates have no extra command and touch no manifest or lockfile: then no gate reads
    these trees, and the two exports (~0.3 s on click) are not made.
    """

    @cache
    def make() -> tuple[Path, Path]:
        trees = cfg.work / "base-clean", cfg.work / "candidate-clean"
        export(cfg, base, trees[0])
        export(cfg, candidate, trees[1])
        return trees

    return make


def verification(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate V: graded tests, the base-passing regression set, extra commands, dependency policy.

    Commands and the dependency policy compare clean exports of the base and the candidate: not
    the install tree (install commands leave files there) nor the test tree (hidden tests, and
    whatever the tests wrote).
    """
    state = progress.candidate
    tested, graded = _verify_tree(cfg, progress, state.candidate_commit, "candidate")
    progress = emit(cfg, progress, tested)
    if graded is not None:
        progress = replace(progress, outcomes=graded.outcomes)
    contract = cfg.contract
    graded_ids = [*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass]
    progress = regressions(
        cfg,
        progress,
        state.candidate_commit,
        cfg.work / "candidate",
        dict(progress.outcomes),
        [*graded_ids, *sorted(progress.base_flaky)],
        graded_ids,
    )
    trees = _clean_trees(cfg, state.base_commit, state.candidate_commit)
    if contract.oracles.commands:
        base, candidate = trees()
        progress, commands = gate_seen(
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
        statuses: dict[str, Status] = (
            {c.name: "error" for c in contract.oracles.commands}  # crashed: none was observed
            if commands is None
            else commands.statuses
        )
        progress = replace(progress, command_statuses=statuses)
    # the manager runs on the candidate's files: the agent's network grant, never the base install's
    policy = SandboxPolicy(network=contract.permissions.network, timeout_s=cfg.test_timeout_s)
    # an offline replay resolves from the harness's cache, filled from the base lockfile with the
    # base install's grant, never from the user's (the verdict must not depend on who runs it)
    cache = LockCache(folder=cfg.env_cache.parent / "uv-lock", network=contract.environment.network)
    return gate(
        cfg,
        progress,
        "V-dependencies",
        lambda: check_dependency_policy(
            trees, contract.oracles.lockfile, progress.changed, policy, cache
        ),
    )


def requirements(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate R: every criterion's linked oracles passed; the agent's claims compared."""
    checks: dict[str, Status] = {f"command:{n}": s for n, s in progress.command_statuses.items()}
    for receipt in progress.receipts:
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
            dict(progress.outcomes),
            checks,
            claims,
        ),
    )


def merge(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """The harness's merge: when the merged tree differs from the tested one, verify it again."""
    landed = landed_commit(cfg, progress.candidate)
    if landed == progress.candidate.candidate_commit:
        return progress
    return emit(cfg, progress, _verify_tree(cfg, progress, landed, "merged")[0])
