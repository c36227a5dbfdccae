"""The ``commit:SHA`` agent: no agent at all; the candidate is a given commit's tree.

What ``repogate gate`` evaluates in a repository's CI: a pull request's head (or GitHub's merge
commit) as the candidate. The proposal is ``git diff --binary --full-index BASE SHA`` taken from
the harness's full-history repository and applied to the base's workspace, which yields SHA's tree
exactly (a binary, full-index diff applied to the tree it was taken from reproduces the other
side). The harness, as for every agent, makes the candidate commit from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from repogate import git
from repogate.agent_spec import CommitSpec
from repogate.agents.gold import apply_as_proposal
from repogate.contract import TransitionContract
from repogate.errors import AgentSpecError
from repogate.protocols import Proposal, TaskView
from repogate.sandbox import SandboxPolicy


class CommitAgent:
    """Proposes commit SHA's tree as the candidate (no agent runs)."""

    def __init__(self, spec: CommitSpec, commit: str, patch: bytes) -> None:
        self.spec = spec.text
        self.commit = commit
        self._patch = patch

    @classmethod
    def create(cls, spec: CommitSpec, contract: TransitionContract, repo: Path) -> CommitAgent:
        """Read the diff from the contract's base commit to ``spec``'s commit in ``repo``.

        Raises:
            AgentSpecError: the commit is not in ``repo``.
        """
        if not git.has_object(repo, f"{spec.arg}^{{commit}}"):
            raise AgentSpecError(
                f"agent {spec.text}: commit {spec.arg} is not in {contract.repo}",
                "give a commit of that repository (fetch the pull request's head first)",
            )
        commit = git.rev_parse(repo, f"{spec.arg}^{{commit}}")
        return cls(spec, commit, git.diff_binary(repo, contract.base_commit, commit, (), ()))

    def propose(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy
    ) -> Proposal:
        """Apply the diff from the base to the commit: the workspace then holds its tree."""
        return apply_as_proposal(workspace, self._patch, "commit")

    def describe(self) -> dict[str, Any]:
        """Return the spec, the full commit id, and that no agent ran."""
        return {"spec": self.spec, "model": "commit", "scaffold": "none", "commit": self.commit}
