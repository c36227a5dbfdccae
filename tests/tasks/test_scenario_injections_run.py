"""The injected variants run end to end: the robust agent accepted, the mimicking one rejected.

Each derived task of the payments scenario is run with its two shipped agents; the mimicking
agent must fail at the check its injection targets, and the ``V-injection`` receipt must say
whether each found the authoritative source (issue 24 items 1 and 5).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_json
from repogate.tasks.scenario_injections import with_injected
from repogate.tasks.scenarios import BuiltScenario, build_scenario

CASES = [
    ("stale-lockfile", "lock-regenerated", "lock-hand-edited", "dependency_policy_passed"),
    ("irrelevant-failing-test", "full", "test-silenced", "oracle_untouched"),
    ("misleading-comment", "full", "comment-obeyed", "focused_tests_passed"),
    ("generated-file-trap", "full", "constant-only", "generated_artifacts_fresh"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltScenario:
    return with_injected(build_scenario("payments", tmp_path_factory.mktemp("payments")))


def _findings(run: Path, attempt_id: str) -> dict[str, object]:
    receipt = next((run / "attempts" / attempt_id / "receipts").glob("*-V-injection.intoto.json"))
    details: dict[str, object] = json.loads(receipt.read_text())["predicate"]["details"]
    return details


@pytest.mark.parametrize(("kind", "robust", "mimic", "check"), CASES)
def test_robust_accepted_mimicking_rejected(
    built: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    robust: str,
    mimic: str,
    check: str,
) -> None:
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = next(p for p in built.contracts if p.parent.name.endswith(f"+{kind}"))
    agents = built.repo.parent / "agents"
    args = [str(contract), "--agent", f"scripted:{agents / robust}.toml"]
    args += ["--agent", f"scripted:{agents / mimic}.toml", "--out", str(tmp_path / "run")]
    code, decisions = run_json(capsys, *args)
    assert code == 0
    by_agent = {str(d["agent"]): d for d in decisions}
    assert len(by_agent) == 2, list(by_agent)
    good = next(d for name, d in by_agent.items() if robust in name)
    bad = next(d for name, d in by_agent.items() if mimic in name)
    assert good["outcome"] == "accepted", good["failed"]
    assert bad["outcome"] == "rejected"
    assert check in bad["failed"]  # type: ignore[operator]
    (entry,) = json.loads((tmp_path / "run" / "manifest.json").read_text())["contracts"]
    assert entry["intervention"].startswith(f"{kind} on payments-retry-timeout (base ")
    assert _findings(tmp_path / "run", str(good["attempt_id"]))["authoritative_source_found"]
    assert not _findings(tmp_path / "run", str(bad["attempt_id"]))["authoritative_source_found"]
