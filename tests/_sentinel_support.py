"""Sentinel test helpers: a real pytest runner and the frozen scenario's candidate states."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from repogate import git
from repogate.agent_spec import ScriptSpec
from repogate.agents.scripted import ScriptedAgent, load_script
from repogate.contract import TransitionContract, load_contract
from repogate.gates.sentinel import SentinelInputs
from repogate.oracles import pytest_runner
from repogate.protocols import TaskView
from repogate.sandbox import SandboxPolicy
from repogate.tasks.scenarios import BuiltScenario, build_scenario

PYTHON = Path(sys.executable)  # the test environment's interpreter: it has pytest


def run_pytest(checkout: Path, files: Sequence[str]) -> Mapping[str, str]:
    """A real test runner: ``python -m pytest`` in the sandbox, outcomes from its JUnit report,
    files counted one by one as the attempt's sentinel runner counts them."""
    with tempfile.TemporaryDirectory(prefix="sentinel-report-") as report:

        def once(selected: Sequence[str]) -> pytest_runner.TestRun:
            return pytest_runner.run_tests(
                PYTHON,
                checkout,
                "python -m pytest",
                selected,
                Path(report),
                SandboxPolicy(timeout_s=120),
            )

        return pytest_runner.run_isolating(once, files)


class CountingRunner:
    """The real runner, counting how often it is called (to observe the history cache)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, checkout: Path, files: Sequence[str]) -> Mapping[str, str]:
        self.calls += 1
        return run_pytest(checkout, files)


@dataclass(frozen=True)
class Attempt:
    """One scripted agent's candidate on the frozen scenario, merged, with hidden tests applied."""

    built: BuiltScenario
    contract: TransitionContract
    candidate: str
    start_tree: str


def build_frozen(dest: Path) -> tuple[BuiltScenario, TransitionContract]:
    built = build_scenario("frozen", dest)
    return built, load_contract(built.contracts[0])


def attempt(built: BuiltScenario, contract: TransitionContract, agent: str, work: Path) -> Attempt:
    """Run scripted ``agent`` in a future-free workspace; merge its candidate; add hidden tests."""
    repo, base = built.repo, contract.base_commit
    workspace = work / f"ws-{agent}"
    git.prepare_workspace(repo, base, workspace)
    script = built.repo.parent / "agents" / f"{agent}.toml"
    task = TaskView(id=contract.id, statement=contract.requirement.statement, time_budget_s=60)
    proposal = ScriptedAgent(ScriptSpec(arg=str(script), file=script), load_script(script)).propose(
        task, workspace, work / f"out-{agent}", SandboxPolicy()
    )
    assert proposal.status == "done", proposal.detail
    # the harness brings the candidate into the full-history repository as a child of the base
    candidate = git.commit_tree(
        repo, git.tree_from_dir(repo, workspace), [base], f"candidate {agent}"
    )
    merged = git.merge_candidate(repo, base, candidate)
    assert merged.clean
    hidden = contract.oracles.hidden_tests
    assert hidden is not None and hidden.commit is not None
    tests = {
        c.path: git.show_file(repo, hidden.commit, c.path)
        for c in git.changed_paths(repo, base, hidden.commit)
        if c.path.startswith(tuple(hidden.paths))
    }
    return Attempt(built, contract, candidate, git.tree_with_files(repo, merged.tree, tests))


def inputs(run: Attempt, cache: Path, **changes: object) -> SentinelInputs:
    """The sentinel's inputs for ``run``, with the real pytest runner."""
    contract = run.contract
    fields: dict[str, object] = {
        "repo": run.built.repo,
        "base": contract.base_commit,
        "candidate": run.candidate,
        "start_tree": run.start_tree,
        "config": contract.sentinel,
        "run_tests": run_pytest,
        "cache_dir": cache,
        "reference": contract.reference.commit if contract.reference else None,
        "target_branch": contract.target_branch,
        "focused_tests": contract.oracles.fail_to_pass,
        "regression_tests": contract.oracles.pass_to_pass,
    }
    fields.update(changes)
    return SentinelInputs(**fields)  # type: ignore[arg-type]
