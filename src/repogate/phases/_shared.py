"""What several phases use: the attempt's folders and sandboxes, and the candidate's identities.

Private to :mod:`repogate.phases`; :mod:`repogate.attempt` holds the attempt's types.
"""

from __future__ import annotations

from pathlib import Path

from repogate import git
from repogate._toolchain import SYSTEM_PATH
from repogate.attempt import AttemptConfig, AttemptProgress
from repogate.contract import TransitionContract
from repogate.environments import Environment, conditions_env
from repogate.oracles.guard import runner_variables
from repogate.patches import load_patch
from repogate.protocols import TaskView
from repogate.sandbox import SandboxPolicy
from repogate.state import CandidateState, oracle_digest, patch_digest


def workspace(cfg: AttemptConfig) -> Path:
    """The agent's workspace for this attempt."""
    return cfg.work / "workspace"


def install_tree(cfg: AttemptConfig) -> Path:
    """Return the base checkout the install commands run in.

    They may leave files there, so nothing else reads it as the base.
    """
    return cfg.work / "install"


def landed_commit(cfg: AttemptConfig, state: CandidateState) -> str:
    """Return the commit that lands: the candidate, or the harness's merge of it into the target.

    The merge commit has a fixed identity and date, so asking twice gives the same commit.
    """
    if state.merge_tree is None or state.merge_tree == state.candidate_tree:
        return state.candidate_commit
    target = cfg.contract.target_commit or state.base_commit
    return git.commit_tree(
        workspace(cfg), state.merge_tree, [target, state.candidate_commit], "harness merge"
    )


def oracle_policy(cfg: AttemptConfig) -> SandboxPolicy:
    """Return the sandbox for the target repository's own code, which includes the patch.

    No network, the test budget, writes only in the tree the command runs in (never the scratch
    folder around it, where the harness builds other trees afterwards), and the harness's
    full-history repository hidden. The evidence folder is not writable: the report comes
    through a FIFO there (:mod:`repogate.oracles._channel`), which writing does not need. With
    ``[oracles] runner_under_test`` the guard is told the checkout's pytest is the runner
    (:func:`repogate.oracles.guard.runner_variables`).
    """
    return SandboxPolicy(
        network=False,
        timeout_s=cfg.contract.oracles.timeout_s,
        writable=(),
        writable_cwd=True,
        hidden=(cfg.source,),
        env=runner_variables(cfg.contract.oracles.runner_under_test),
    )


def task_view(contract: TransitionContract) -> TaskView:
    """What the agent is told: the statement, stated criteria and permissions; never the oracles."""
    return TaskView(
        id=contract.id,
        statement=contract.requirement.statement,
        criteria=tuple(
            {"id": c.id, "claim": c.claim}
            for c in contract.requirement.criteria
            if c.kind == "stated"
        ),
        editable=contract.permissions.editable,
        forbidden=contract.permissions.forbidden,
        commands=contract.permissions.commands,
        time_budget_s=contract.permissions.time_budget_s,
        token_budget=contract.permissions.token_budget,
        cost_budget_usd=contract.permissions.cost_budget_usd,
        network=contract.permissions.network,
        environment="reconstruct" if contract.environment.supplied_by == "agent" else "supplied",
    )


def hidden_patch(cfg: AttemptConfig) -> bytes:
    """The contract's hidden test patch bytes (empty when it has none)."""
    source = cfg.contract.oracles.hidden_tests
    return b"" if source is None else load_patch(source, cfg.contract, cfg.source)


def generator_policy(
    cfg: AttemptConfig, env: Environment, checkout: Path, network: bool = False
) -> SandboxPolicy:
    """Return the sandbox for generators and interpreter probes.

    The environment is active on ``checkout``; writes only in ``checkout`` when it is one of the
    attempt's trees (never the scratch folder around it; nothing for a probe run beside an
    interpreter); the full-history repository hidden.
    """
    policy = SandboxPolicy(
        network=network,
        timeout_s=cfg.test_timeout_s,
        writable=(),
        writable_cwd=checkout.resolve().is_relative_to(cfg.work.resolve()),
        hidden=(cfg.source,),
    )
    return env.grant(checkout, policy)


def agent_policy(cfg: AttemptConfig, env: Environment) -> SandboxPolicy:
    """The sandbox for the agent: its time budget, its network grant, the environment on PATH.

    It writes only its workspace and its output folder; the run directory (other attempts,
    scenario sources, hidden tests at the base), the full-history repository, the contract and
    the caches of real history's results are hidden. Other run directories kept on the same
    disk are not known here and stay readable: keep them out of an agent's reach.

    When the agent supplies the environment (``[environment] supplied_by = "agent"``) it gets
    none: ``PATH`` is the system's folders only (:data:`repogate._toolchain.SYSTEM_PATH`), with
    the recipe's ``TZ``, ``LANG`` and ``LC_ALL``, and the environment cache is hidden too.
    """
    permissions = cfg.contract.permissions
    policy = SandboxPolicy(
        network=permissions.network,
        timeout_s=permissions.time_budget_s,
        writable=(workspace(cfg), cfg.evidence / "agent"),
        hidden=(
            cfg.source,
            cfg.store.run_dir.resolve(),
            cfg.history_cache,  # real later history's test results
            cfg.env_cache.parent / "base-state",
            *cfg.contract.private_files(),
        ),
    )
    recipe = cfg.contract.environment
    if recipe.supplied_by == "agent":
        bare = {"PATH": SYSTEM_PATH, **conditions_env(recipe.timezone, recipe.locale)}
        hidden = (*policy.hidden, cfg.env_cache.resolve())
        return policy.model_copy(update={"env": {**bare, **policy.env}, "hidden": hidden})
    return env.grant(workspace(cfg), policy)


def candidate_state(
    cfg: AttemptConfig, progress: AttemptProgress, candidate: str, merge_tree: str | None
) -> CandidateState:
    """Compute the candidate state's identities from the harness-made candidate commit.

    ``progress.patch`` must already hold the candidate's diff against the base.
    """
    ws = workspace(cfg)
    oracles = cfg.contract.oracles
    return CandidateState(
        base_commit=progress.base,
        candidate_commit=candidate,
        candidate_tree=git.tree_of(ws, candidate),
        merge_tree=merge_tree,
        patch_digest=patch_digest(progress.patch),
        environment_digest=progress.workspace_env.digest,
        oracle_digest=oracle_digest(
            [*oracles.fail_to_pass, *oracles.pass_to_pass], progress.hidden
        ),
        policy_digest=cfg.contract.policy_digest(),
    )
