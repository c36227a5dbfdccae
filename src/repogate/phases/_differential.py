"""The differential phase: the candidate's changed functions called beside the reference's.

Runs after gate V on candidates whose graded tests passed (a candidate they reject needs no
further evidence), unless the contract sets ``oracles.differential = "off"``. Two trees are
written, each with the hidden tests applied: the candidate's (:func:`graded_state`) and the
reference's (:func:`reference_state`); each is the working folder of its own call server, a
sandboxed process in the task's environment that may write only its own tree
(:mod:`repogate.gates.differential`).
"""

from __future__ import annotations

import shutil
from functools import partial
from importlib import resources
from pathlib import Path

from repogate import git
from repogate._files import read_bytes_nofollow
from repogate.attempt import AttemptConfig, AttemptProgress, gate
from repogate.errors import ContractError, PatchApplyError
from repogate.gates.differential import check_behaviour, not_run
from repogate.gates.graded_trees import write_tree
from repogate.oracles.functions import changed_functions, is_test_path, literals_in_tests
from repogate.patches import load_patch, touched_paths
from repogate.phases._shared import oracle_policy, workspace
from repogate.phases._trees import graded_state, reference_state
from repogate.receipt import Observation
from repogate.sandbox import Session

WORKER = "_differential_worker.py"
SESSION_BUDGET_S = 600.0
"""The longest one call server may live, in seconds (each call has its own, shorter budget)."""


def _graded_tests_passed(progress: AttemptProgress) -> bool:
    graded = [r for r in progress.receipts if r.gate == "V" and r.graded_tree == "candidate"]
    return (
        bool(graded)
        and all(c.passed for r in graded for c in r.checks if c.name != "harness_untampered")
        and all(r.crash is None for r in graded)
    )


def _session_factory(
    cfg: AttemptConfig, progress: AttemptProgress, tree: Path, tools: Path
) -> partial[Session]:
    env = progress.workspace_env
    base = oracle_policy(cfg)
    grant = env.grant(tree, base)
    policy = grant.model_copy(
        update={
            "env": {**grant.env, **env.variables(tree), "PYTHONHASHSEED": "0"},
            "readable": (*grant.readable, tools),
            "timeout_s": min(grant.timeout_s, SESSION_BUDGET_S),
        }
    )
    return partial(Session, [*env.python_argv(), str(tools / WORKER)], tree, policy)


def _observe(cfg: AttemptConfig, progress: AttemptProgress) -> Observation:
    contract = cfg.contract
    hard = contract.oracles.differential == "hard"
    if not _graded_tests_passed(progress):
        return not_run("the candidate did not pass its graded tests", hard)
    if contract.reference is None:
        return not_run("the contract has no reference patch", hard)
    try:
        reference = load_patch(contract.reference, contract, cfg.source)
    except ContractError as exc:
        return not_run(f"the reference patch cannot be read: {exc}", hard)
    state = progress.candidate
    trees = cfg.work / "differential-candidate", cfg.work / "differential-reference"
    write_tree(graded_state(cfg, progress, state.candidate_commit), trees[0])
    try:
        write_tree(reference_state(cfg, progress, reference), trees[1])
    except PatchApplyError as exc:
        return not_run(f"the reference patch does not apply: {exc}", hard)
    hidden = set(progress.hidden_paths)
    paths = sorted({c.path for c in progress.changed} | set(touched_paths(reference)))
    files = {
        path: (
            git.show_file(workspace(cfg), progress.base, path),
            read_bytes_nofollow(trees[0], path),
            read_bytes_nofollow(trees[1], path),
        )
        for path in paths
        if path.endswith(".py") and path not in hidden and not is_test_path(path)
    }
    targets = changed_functions(files, progress.workspace_env.checkout_roots())
    test_sources = [read_bytes_nofollow(trees[1], p) for p in sorted(hidden) if p.endswith(".py")]
    literals = literals_in_tests(s for s in test_sources if s is not None)
    tools = cfg.work / "differential-tools"
    tools.mkdir(exist_ok=True)
    shutil.copyfile(Path(str(resources.files("repogate.oracles") / WORKER)), tools / WORKER)
    observation = check_behaviour(
        targets,
        literals,
        contract.oracles.strategies,
        (
            _session_factory(cfg, progress, trees[0], tools),
            _session_factory(cfg, progress, trees[1], tools),
        ),
        hard=hard,
    )
    return observation.model_copy(
        update={
            "details": {**observation.details, "files": sorted(files), "literals": len(literals)}
        }
    )


def differential(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """The differential oracle (``behaviour_matches_reference``), unless the contract turns it off."""
    if cfg.contract.oracles.differential == "off":
        return progress
    return gate(cfg, progress, "V-differential", lambda: _observe(cfg, progress))
