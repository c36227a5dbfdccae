"""Run built-in scenarios' scripted agents and the lifecycle gates on their real candidates."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from repogate import git
from repogate.agent_spec import ScriptSpec
from repogate.agents.scripted import ScriptedAgent, load_script
from repogate.contract import TransitionContract
from repogate.gates.authority import check_authority, load_reviews
from repogate.gates.generated import check_generated
from repogate.gates.release import check_release_notes
from repogate.git import ChangedPath
from repogate.protocols import TaskView
from repogate.receipt import Check, Observation
from repogate.sandbox import SandboxPolicy
from repogate.state import patch_digest
from repogate.tasks.scenarios import BuiltScenario

POLICY = SandboxPolicy(timeout_s=60)
PYTHON = Path(sys.executable)


@dataclass(frozen=True)
class Candidate:
    agent: str
    commit: str
    digest: str
    diff: bytes
    changed: tuple[ChangedPath, ...]
    workspace: Path

    def checkout(self, dest: Path) -> Path:
        """A fresh clean checkout of the candidate (gates that regenerate write into it)."""
        git.export_tree(self.workspace, self.commit, dest)
        return dest


def run_agents(built: BuiltScenario, tmp: Path) -> dict[str, Candidate]:
    """Run every scripted agent of ``built`` in its own workspace; return the candidates by name."""
    base = built.commits["base"]
    found = {}
    for agent in built.agents:
        workspace = tmp / agent.stem / "workspace"
        git.prepare_workspace(built.repo, base, workspace)
        task = TaskView(id=built.name, statement="scenario", time_budget_s=60)
        proposal = ScriptedAgent(
            ScriptSpec(arg=str(agent), file=agent), load_script(agent)
        ).propose(task, workspace, tmp / agent.stem / "out", POLICY)
        assert proposal.status == "done", proposal.detail
        commit = git.commit_candidate(workspace, "candidate", parent=base)
        diff = git.diff_binary(workspace, base, commit)
        changed = git.changed_paths(workspace, base, commit)
        found[agent.stem] = Candidate(
            agent.stem, commit, patch_digest(diff), diff, changed, workspace
        )
    return found


def authority(built: BuiltScenario, contract: TransitionContract, cand: Candidate) -> Observation:
    """Gate A as the pipeline calls it: CODEOWNERS at the base, the agent's review file."""
    auth = contract.authority
    text = None
    if auth.codeowners is not None:
        raw = git.show_file(built.repo, built.commits["base"], auth.codeowners)
        text = None if raw is None else raw.decode()
    reviews = None
    if auth.reviews is not None:
        review_file = contract.resolve(auth.reviews.replace("{agent}", cand.agent))
        reviews = load_reviews(review_file, cand.digest) if review_file.is_file() else None
    return check_authority(
        text, cand.changed, reviews, cand.digest, auth.author, auth.min_approvals
    )


def lifecycle_checks(
    built: BuiltScenario, contract: TransitionContract, cand: Candidate, tmp: Path
) -> dict[str, Check]:
    """Freshness, release receipt and authority checks for one candidate, by check name."""
    checkout = cand.checkout(tmp / "checkout")
    fresh = check_generated(checkout, contract.oracles.generators, cand.changed, POLICY, PYTHON)
    release = check_release_notes(cand.diff, contract.oracles.release_notes)
    checks = (*fresh.checks, *release.checks, *authority(built, contract, cand).checks)
    return {c.name: c for c in checks}


def run_pytest(checkout: Path, hidden: bytes, ids: list[str]) -> int:
    """Apply ``hidden`` in ``checkout`` and run the test ids; return pytest's exit code."""
    git.apply_patch(checkout, hidden)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ids],
        cwd=checkout,
        capture_output=True,
        env={"PYTHONDONTWRITEBYTECODE": "1", "PATH": str(PYTHON.parent)},
        check=False,
    )
    return done.returncode


def hidden_patch(built: BuiltScenario, contract: TransitionContract) -> bytes:
    """The contract's hidden tests as a patch on the base (they come from a later commit)."""
    source = contract.oracles.hidden_tests
    assert source is not None and source.commit is not None
    return git.diff_binary(built.repo, built.commits["base"], source.commit, source.paths)
