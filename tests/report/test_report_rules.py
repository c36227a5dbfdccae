"""The report's stated rules on a store built with the real Store API: autonomy by cohort and gate
informativeness, with decisions whose checks are set one by one."""

from __future__ import annotations

from pathlib import Path

from repogate.agent_spec import ScriptSpec
from repogate.decision import LIFECYCLE_CHECKS, STAGES, Decision, SoftMetrics
from repogate.manifest import ContractEntry, RunManifest
from repogate.receipt import Check
from repogate.report.aggregate import build_report
from repogate.report.load import load_runs
from repogate.report.model import Report
from repogate.sandbox import Isolation
from repogate.store import Store


def _decision(task: str, failed: set[str], sentinel: str = "passed") -> Decision:
    statuses = {name: "failed" if name in failed else "passed" for name in LIFECYCLE_CHECKS}
    statuses["post_merge_sentinel_passed"] = sentinel
    checks = tuple(Check.model_validate({"name": n, "status": s}) for n, s in statuses.items())
    bad = tuple(c.name for c in checks if c.status == "failed")
    return Decision(
        task_id=task,
        profile="lifecycle",
        state_id="s",
        accepted=not bad,
        outcome="rejected" if bad else "accepted",
        failed=bad,
        errored=(),
        checks=checks,
        stages={**dict.fromkeys(STAGES, "passed"), "sentinel passed": sentinel},
        soft=SoftMetrics(),
    )


def _report(run_dir: Path, attempts: dict[tuple[str, str], Decision]) -> Report:
    tasks = sorted({task for task, _ in attempts})
    iso = Isolation(kind="bwrap", network_off=True)
    entries = tuple(
        ContractEntry(
            id=t, source="test", policy_digest="0", profile="lifecycle",
            cohort={"area": "api" if int(t[1:]) < 10 else "ui"}, time_budget_s=60,
            token_budget=None, agent_network=False, install_network=False, editable=(),
            commands=(),
        )
        for t in tasks
    )  # fmt: skip
    with Store.create(run_dir) as store:
        store.write_manifest(
            RunManifest(
                agents=(),
                contracts=entries,
                selection="test",
                planned_attempts=len(attempts),
                isolation_agent=iso,
                isolation_tests=iso,
            )
        )
        for (task, agent), decision in attempts.items():
            named = ScriptSpec(arg=f"{agent}.toml", file=Path(f"{agent}.toml"))  # labelled `agent`
            record = store.begin_attempt(task, named, 0)
            store.finish_attempt(record.attempt_id, decision)
    return build_report(load_runs([run_dir]), "area", "base")


def test_autonomy_widens_only_under_its_rule(tmp_path: Path) -> None:
    attempts: dict[tuple[str, str], Decision] = {}
    for i in range(12):  # t0..t9 are cohort api, t10, t11 cohort ui
        task = f"t{i}"
        attempts[task, "base"] = _decision(task, set() if i % 2 else {"focused_tests_passed"})
        attempts[task, "good"] = _decision(task, set())
        cheat = {"oracle_untouched"} if i == 3 else set()
        attempts[task, "cheat"] = _decision(task, cheat)
        attempts[task, "fragile"] = _decision(task, set(), "failed" if i < 4 else "passed")
    report = _report(tmp_path / "run", attempts)
    verdicts = {(a.cohort, a.agent): a for a in report.autonomy}
    # 10 of 10 accepted: Wilson lower bound 0.722 >= the baseline's 0.5; sentinel 10/10 >= 5/5
    assert verdicts["api", "good"].verdict == "widen"
    assert verdicts["api", "cheat"].verdict == "keep"  # 9 of 10, and an integrity failure
    assert "1 attempts failed an integrity check" in verdicts["api", "cheat"].reasons
    assert verdicts["api", "fragile"].verdict == "keep"  # accepted 6/10 only: sentinel failed
    assert verdicts["ui", "good"].verdict == "insufficient evidence"  # 2 tasks
    assert report.autonomy_rule.startswith("widen an agent's scope on a cohort only if")


def test_gate_informativeness_tells_a_telling_gate_from_a_silent_one(tmp_path: Path) -> None:
    attempts: dict[tuple[str, str], Decision] = {}
    for i in range(20):
        task = f"t{i % 10}"
        stale = i < 8  # the hand-edited generated file: the sentinel breaks on regeneration
        failed = {"generated_artifacts_fresh"} if stale else set()
        agent = "base" if i < 10 else "other"
        attempts[task, agent] = _decision(task, failed, "failed" if stale else "passed")
    report = _report(tmp_path / "run", attempts)
    rows = {g.gate: g for g in report.gates if g.cohort == "api"}
    fresh = rows["generated_artifacts_fresh"]
    assert fresh.population == 20
    assert (fresh.when_failed.n, fresh.when_failed.estimate) == (8, 1.0)
    assert (fresh.when_passed.n, fresh.when_passed.estimate) == (12, 0.0)
    assert fresh.informative and fresh.p_value < 0.001
    owner = rows["code_owner_approved"]
    assert not owner.informative and owner.note == "never failed among them"
    assert "post_merge_sentinel_passed" not in rows


def test_a_check_an_older_evaluator_did_not_know_leaves_its_attempts_in_the_gate_table(
    tmp_path: Path,
) -> None:
    """A run decided before a hard check existed (here ``harness_untampered``) has decisions
    without it: they still passed every check their evaluator had, so they stay in each other
    gate's population (the real click run's table had an empty population for every gate)."""
    attempts: dict[tuple[str, str], Decision] = {}
    for i in range(10):
        task = f"t{i}"
        stale = i < 4
        made = _decision(
            task, {"generated_artifacts_fresh"} if stale else set(), "failed" if stale else "passed"
        )
        older = tuple(c for c in made.checks if c.name != "harness_untampered")
        attempts[task, "base"] = made.model_copy(update={"checks": older})
    report = _report(tmp_path / "run", attempts)
    rows = {g.gate: g for g in report.gates if g.cohort == "api"}
    assert rows["generated_artifacts_fresh"].population == 10
    assert rows["generated_artifacts_fresh"].when_failed.n == 4
