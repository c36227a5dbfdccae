"""The ``gold`` agent (the contract's reference patch) and the ``null`` agent (no change)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from repogate import git
from repogate._files import write_bytes_nofollow
from repogate.contract import TransitionContract
from repogate.environments import AGENT_RECIPE_FILE, recipe_text
from repogate.errors import AgentSpecError, ContractError, PatchApplyError
from repogate.patches import load_patch
from repogate.protocols import Proposal, TaskView
from repogate.sandbox import SandboxPolicy


def apply_as_proposal(workspace: Path, patch: bytes, model: str) -> Proposal:
    """Apply ``patch`` as SWE-bench's harness applies a prediction (never in reverse).

    The ladder (:func:`repogate.git.apply_ladder`): ``git apply``, then ``git apply --reject``,
    then GNU ``patch --fuzz=5``; the step that applied it and any fuzz are recorded in
    ``Proposal.applied`` (and so in the propose receipt). A patch no step applies is the agent's
    failure (``crashed``).
    """
    if not patch.strip():
        return Proposal(model=model, detail="empty patch")
    try:
        applied = git.apply_ladder(workspace, patch)
    except PatchApplyError as exc:
        return Proposal(status="crashed", model=model, detail=f"patch does not apply: {exc}")
    detail = "" if applied.step == git.LADDER[0] else f"applied by {applied.step}"
    if applied.fuzz:
        detail += f" with fuzz {applied.fuzz}"
    if applied.newline_added:
        detail += ("; " if detail else "") + "final newline added"
    return Proposal(model=model, applied=applied, detail=detail)


def _check_applies_at_base(patch: bytes, contract: TransitionContract, repo: Path) -> None:
    """Refuse, before the run, a reference patch that does not apply at the base commit.

    Applied as the gold agent applies it (:func:`repogate.git.apply_ladder`, which also refuses
    a path outside the repository) to a plain checkout of the base's files: a broken contract is the
    author's error, never a gold attempt reported as rejected.

    Raises:
        ContractError: naming the contract and git's reason, on one line.
    """
    with tempfile.TemporaryDirectory(prefix="repogate-reference-") as tmp:
        base = Path(tmp) / "base"
        git.init_repo(base)  # the base's files in a repository of their own: no history needed
        git.checkout_tree(repo, contract.base_commit, base)
        try:
            git.apply_ladder(base, patch)
        except PatchApplyError as exc:
            why = " ".join(str(exc).split())[:400]
            raise ContractError(
                f"contract {contract.id}: its reference patch does not apply at base commit "
                f"{contract.base_commit[:12]} ({why})",
                "fix [reference] so it applies there with paths inside the repository",
            ) from None


class GoldAgent:
    """Applies the contract's reference (gold) patch: the ceiling a task's oracles must accept."""

    def __init__(self, spec: str, patch: bytes, recipe: str | None = None) -> None:
        """Submit ``patch``; leave ``recipe`` as ``environment.toml`` when given (see :meth:`create`)."""
        self.spec = spec
        self._patch = patch
        self._recipe = recipe

    @classmethod
    def create(cls, contract: TransitionContract, repo: Path) -> GoldAgent:
        """Build from the contract's ``reference``.

        When the contract's agent supplies the environment (``supplied_by = "agent"``), the
        gold agent leaves the contract's own recipe too (:func:`recipe_text`).

        Raises:
            AgentSpecError: the contract has no reference patch.
            ContractError: it does not apply at the base, or names a path outside the repository.
        """
        if contract.reference is None:
            raise AgentSpecError(
                f"contract {contract.id} has no [reference] patch for the gold agent",
                "add a [reference] table (file or commit) or choose another agent",
            )
        patch = load_patch(contract.reference, contract, repo)
        _check_applies_at_base(patch, contract, repo)
        environment = contract.environment
        recipe = recipe_text(environment) if environment.supplied_by == "agent" else None
        return cls("gold", patch, recipe)

    def propose(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy
    ) -> Proposal:
        """Apply the reference patch to ``workspace``.

        When the contract's agent supplies the environment, also leave the contract's own recipe
        in ``output`` (``environment.toml``): the reference reconstruction.
        """
        if self._recipe is not None:
            write_bytes_nofollow(output, AGENT_RECIPE_FILE, self._recipe.encode())
        return apply_as_proposal(workspace, self._patch, "gold")

    def describe(self) -> dict[str, Any]:
        """Return the spec and model name."""
        return {"spec": self.spec, "model": "gold", "scaffold": "reference patch"}


class NullAgent:
    """Changes nothing: the floor every task's oracles must reject."""

    spec = "null"

    def propose(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy
    ) -> Proposal:
        """Leave ``workspace`` as it is."""
        return Proposal(model="null", detail="no change")

    def describe(self) -> dict[str, Any]:
        """Return the spec."""
        return {"spec": self.spec, "model": "null", "scaffold": "none"}
