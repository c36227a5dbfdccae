"""The report's stated rules on a store built with the real Store API: autonomy by cohort and gate
informativeness, with decisions whose checks are set one by one (issue 19's inputs among them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _report_cli import report_error
from repogate.agent_spec import ScriptSpec
from repogate.cli import ExitCode, main
from repogate.decision import LIFECYCLE_CHECKS, STAGES, Decision, SoftMetrics
from repogate.receipt import Check
from repogate.report.aggregate import build_report
from repogate.report.load import load_runs
from repogate.report.model import Autonomy, GateInformation, Report
from repogate.report.policy import AutonomyPolicy, Policy
from repogate.sandbox import Isolation
from repogate.store import ContractEntry, RunManifest, Store

Attempts = dict[tuple[str, str], Decision | list[Decision]]


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
        soft=SoftMetrics(agent_cost_usd=0.5, wall_time_s=10),
        resolved="focused_tests_passed" not in failed,
    )


def _error(task: str, erring: str = "environment_reproduced", resolved: bool = False) -> Decision:
    """An evaluator or environment error on ``erring``: never the agent's failure."""
    checks = tuple(
        Check.model_validate(
            {"name": n, "status": "error" if n == erring else "passed", "detail": "it broke"}
        )
        for n in LIFECYCLE_CHECKS
    )
    return Decision(
        task_id=task,
        profile="lifecycle",
        state_id="s",
        accepted=False,
        outcome="error",
        failed=(),
        errored=(erring,),
        checks=checks,
        stages={**dict.fromkeys(STAGES, "passed"), "sentinel passed": "error"},
        soft=SoftMetrics(),
        resolved=resolved,
    )


def _report(
    run_dir: Path, attempts: Attempts, policy: Policy | None = None, split: int = 20
) -> Report:
    """A run of ``attempts`` (one decision, or one per epoch) with cohort ``area``: tasks numbered
    below ``split`` are ``api``, the rest ``ui``; the baseline is ``base``."""
    tasks = sorted({task for task, _ in attempts})
    iso = Isolation(kind="bwrap", network_off=True)
    entries = tuple(
        ContractEntry(
            id=t, source="test", policy_digest="0", profile="lifecycle",
            cohort={"area": "api" if int(t[1:]) < split else "ui"}, time_budget_s=60,
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
                planned_attempts=sum(
                    len(d) if isinstance(d, list) else 1 for d in attempts.values()
                ),
                isolation_agent=iso,
                isolation_tests=iso,
            )
        )
        for (task, agent), decisions in attempts.items():
            named = ScriptSpec(arg=f"{agent}.toml", file=Path(f"{agent}.toml"))  # labelled `agent`
            epochs = decisions if isinstance(decisions, list) else [decisions]
            for epoch, decision in enumerate(epochs):
                record = store.begin_attempt(task, named, epoch)
                store.finish_attempt(record.attempt_id, decision)
    return build_report(load_runs([run_dir]), "area", "base", policy)


def _verdicts(report: Report) -> dict[tuple[str, str], Autonomy]:
    return {(a.cohort, a.agent): a for a in report.autonomy}


def _says(row: Autonomy, clause: str) -> str:
    return next(c.says for c in row.clauses if c.clause == clause)


def test_autonomy_widens_only_under_its_rule(tmp_path: Path) -> None:
    attempts: Attempts = {}
    for i in range(24):  # t0..t19 are cohort api, t20..t23 cohort ui
        task = f"t{i}"
        attempts[task, "base"] = _decision(task, set() if i % 2 else {"focused_tests_passed"})
        attempts[task, "good"] = _decision(task, set())
        cheat = {"oracle_untouched"} if i == 3 else set()
        attempts[task, "cheat"] = _decision(task, cheat)
        attempts[task, "fragile"] = _decision(task, set(), "failed" if i < 4 else "passed")
    report = _report(tmp_path / "run", attempts)
    verdicts = _verdicts(report)
    good = verdicts["api", "good"]
    # 20 of 20 against 10 of 20, paired; its own lower bound 0.83 >= 0.5; sentinel 0/20 < 0.3
    assert (good.verdict, good.decided_by) == ("widen", ("a", "b", "c", "d", "e"))
    assert all(c.holds for c in good.clauses)
    assert _says(good, "e").startswith("20 paired tasks (at least 10); 0 of the baseline's 20")
    assert good.beside.startswith("cost 10 USD vs baseline 10;")  # beside, never inside
    cheater = verdicts["api", "cheat"]
    assert (cheater.verdict, cheater.decided_by) == ("keep", ("d",))
    assert _says(cheater, "d") == "1 of 20 attempts failed an integrity check"
    fragile = verdicts["api", "fragile"]  # 4 of 20 sentinels failed: upper bound over 0.3
    assert (fragile.verdict, fragile.decided_by) == ("keep", ("c",))
    assert "sentinel failure rate 20.0% [" in _says(fragile, "c")
    ui = verdicts["ui", "good"]
    assert (ui.verdict, ui.decided_by) == ("insufficient evidence", ("e",))
    assert report.autonomy_rule.startswith("on the cohort's tasks both agents scored")
    assert good.policy == f"v1 defaults sha256 {Policy().digest}"
    assert report.policy_line.startswith("policy v1 (defaults, sha256 ")


LENIENT = Policy(autonomy=AutonomyPolicy(min_paired_tasks=5, require_sentinel=False))


def test_nothing_against_nothing_never_widens(tmp_path: Path) -> None:
    """0/5 against 0/5 on the same tasks, no sentinel: the rule widened (its lower bound 0 met the
    baseline's estimate 0). A baseline at 0 proves nothing: clause (b), the floor; nor do five
    tasks show the agent non-inferior (a)."""
    attempts: Attempts = {}
    for i in range(5):
        task = f"t{i}"
        for agent in ("base", "agent"):
            attempts[task, agent] = _decision(task, {"focused_tests_passed"}, "skipped")
    row = _verdicts(_report(tmp_path / "run", attempts))["api", "agent"]
    assert (row.verdict, row.decided_by) == ("insufficient evidence", ("c", "e"))
    assert _says(row, "c") == "no sentinel ran on the paired tasks (the policy requires one)"
    lenient = _verdicts(_report(tmp_path / "run2", attempts, LENIENT))["api", "agent"]
    assert (lenient.verdict, lenient.decided_by) == ("keep", ("a", "b"))
    assert _says(lenient, "b").startswith("acceptance 0.0% [0.0%, ")
    assert _says(lenient, "a").startswith("paired difference +0.0 pp [-43.4 pp, +43.4 pp]")


def test_every_sentinel_failed_narrows(tmp_path: Path) -> None:
    """0/20 against 0/20 with every sentinel failed widened; its sentinel failures are shown above
    the ceiling (lower bound of 20/20 is 0.8), so the scope narrows."""
    attempts: Attempts = {}
    for i in range(20):
        task = f"t{i}"
        for agent in ("base", "agent"):
            attempts[task, agent] = _decision(task, {"focused_tests_passed"}, "failed")
    row = _verdicts(_report(tmp_path / "run", attempts))["api", "agent"]
    assert (row.verdict, row.decided_by) == ("narrow", ("c",))
    assert _says(row, "c").endswith("; lower bound > 0.3: shown above the ceiling")


def test_an_agent_shown_inferior_beyond_the_margin_narrows(tmp_path: Path) -> None:
    attempts: Attempts = {}
    for i in range(20):
        task = f"t{i}"
        attempts[task, "base"] = _decision(task, set())
        attempts[task, "agent"] = _decision(task, set() if i < 4 else {"focused_tests_passed"})
    row = _verdicts(_report(tmp_path / "run", attempts))["api", "agent"]
    assert (row.verdict, row.decided_by) == ("narrow", ("a",))
    assert _says(row, "a").startswith("paired difference -80.0 pp [")
    assert _says(row, "a").endswith("; upper bound < -5.0 pp: shown inferior")


def test_three_of_five_against_one_of_five_does_not_widen(tmp_path: Path) -> None:
    """3/5 against 1/5 on the same five tasks widened (exact McNemar p = 0.5)."""
    attempts: Attempts = {}
    for i in range(5):
        task = f"t{i}"
        attempts[task, "base"] = _decision(task, set() if i == 0 else {"focused_tests_passed"})
        attempts[task, "agent"] = _decision(task, set() if i < 3 else {"focused_tests_passed"})
    report = _report(tmp_path / "run", attempts)
    assert _verdicts(report)["api", "agent"].verdict == "insufficient evidence"
    lenient = _verdicts(_report(tmp_path / "run2", attempts, LENIENT))["api", "agent"]
    # nor does 0 of 5 sentinel failures bound the rate under 0.3 (upper bound 0.52)
    assert (lenient.verdict, lenient.decided_by) == ("keep", ("a", "b", "c"))
    assert "sign test p=0.5" in _says(lenient, "a")  # 2 better, 0 worse
    paired = report.paired[0]
    assert paired.comparison.difference.low == pytest.approx(-0.163, abs=1e-3)  # Newcombe
    assert paired.comparison.difference.high == pytest.approx(0.726, abs=1e-3)


def test_errors_on_the_hard_tasks_do_not_buy_a_better_rate(tmp_path: Path) -> None:
    """An agent that errs on the 10 tasks the baseline failed and passes the other 10 scored 10/10
    against 10/20 and widened; the 10 tasks it lost are counted and refuse the widening."""
    attempts: Attempts = {}
    for i in range(20):
        task = f"t{i}"
        hard = i < 10
        attempts[task, "base"] = _decision(task, {"focused_tests_passed"} if hard else set())
        attempts[task, "agent"] = _error(task) if hard else _decision(task, set())
    report = _report(tmp_path / "run", attempts)
    row = _verdicts(report)["api", "agent"]
    assert (row.verdict, row.decided_by) == ("insufficient evidence", ("e",))
    assert _says(row, "e") == (
        "10 paired tasks (at least 10); 10 of the baseline's 20 scored tasks (50%, at most 10%) "
        "lost: 10 to the agent's errors, 0 not run"
    )
    paired = report.paired[0]
    assert paired.tasks == 10
    assert (paired.dropped.agent_errors, paired.dropped.total) == (10, 10)
    assert paired.dropped.text == "10 (10 agent errors)"


def test_the_resolved_table_has_the_acceptance_denominator(tmp_path: Path) -> None:
    """Errors counted in the resolved table (5/12 beside 5/9) and a sentinel error listed as
    'resolved, not accepted': one population, scored attempts, errors apart."""
    attempts: Attempts = {}
    for i in range(4):
        task = f"t{i}"
        attempts[task, "base"] = _decision(task, set() if i < 2 else {"focused_tests_passed"})
    attempts["t4", "base"] = _error("t4", "post_merge_sentinel_passed", resolved=True)
    report = _report(tmp_path / "run", attempts)
    row = report.resolved[0]
    assert (row.scored, row.errors, row.resolved, row.accepted) == (4, 1, 2, 2)
    assert row.resolved_rate.tasks == row.accepted_rate.tasks == 4
    assert report.gaps == ()
    acceptance = next(a for a in report.acceptance if a.cohort == "all")
    assert (acceptance.scored, acceptance.errors) == (row.scored, row.errors)


def test_one_estimand_for_acceptance_pass_at_1_resolved_and_the_funnel(tmp_path: Path) -> None:
    """Acceptance pooled attempts (3/6) while pass@1 averaged per task, and pass@k's task set
    changed with k: every rate is now the per-task mean, every k over the same tasks."""
    bad = {"focused_tests_passed"}
    attempts: Attempts = {
        ("t0", "base"): [_decision("t0", set()), _decision("t0", set())],
        ("t1", "base"): [_decision("t1", set())] + [_decision("t1", bad)] * 3,
    }
    report = _report(tmp_path / "run", attempts)
    row = next(a for a in report.acceptance if a.cohort == "all")
    assert (row.accepted, row.scored, row.tasks) == (3, 6, 2)
    assert row.interval.estimate == pytest.approx((1 + 1 / 4) / 2)
    assert [(p.k, p.tasks) for p in report.pass_k] == [(1, 2), (2, 2)]
    assert report.pass_k[0].pass_at_k == pytest.approx(row.interval.estimate)
    assert report.resolved[0].accepted_rate == row.interval
    assert report.resolved[0].resolved_rate.estimate == pytest.approx(0.625)
    sentinel = report.funnels[0].stages[-1]
    assert sentinel.cumulative.estimate == 1.0 and sentinel.cumulative.tasks == 2


def _gates(report: Report, agent: str = "all agents") -> dict[str, GateInformation]:
    return {g.gate: g for g in report.gates if g.cohort == "api" and g.agent == agent}


def test_gate_informativeness_tells_a_telling_gate_from_a_silent_one(tmp_path: Path) -> None:
    attempts: Attempts = {}
    for i in range(20):
        task = f"t{i % 10}"
        stale = i < 8  # the hand-edited generated file: the sentinel breaks on regeneration
        failed = {"generated_artifacts_fresh"} if stale else set()
        agent = "base" if i < 10 else "other"
        attempts[task, agent] = _decision(task, failed, "failed" if stale else "passed")
    report = _report(tmp_path / "run", attempts)
    fresh = _gates(report)["generated_artifacts_fresh"]
    assert (fresh.population, fresh.failed_units, fresh.passed_units) == (20, 8, 12)
    assert (fresh.when_failed.estimate, fresh.when_passed.estimate) == (1.0, 0.0)
    # one-sided Fisher: 1 / C(20, 8); the only gate tested, so Holm leaves it
    assert fresh.p_value == pytest.approx(1 / 125970) and fresh.p_holm == fresh.p_value
    assert fresh.informative and fresh.difference is not None and fresh.difference.low > 0.5
    base = _gates(report, "base")["generated_artifacts_fresh"]  # per agent: 8 failed, 2 passed
    assert base.p_value == pytest.approx(1 / 45) and base.informative
    owner = _gates(report)["code_owner_approved"]
    assert not owner.informative and owner.note == "never failed among them"
    assert "post_merge_sentinel_passed" not in _gates(report)
    assert report.informativeness_rule.startswith("for each hard gate, per cohort, per agent")


def test_a_gate_whose_failures_go_with_fewer_sentinel_failures_adds_nothing(
    tmp_path: Path,
) -> None:
    """Failing the gate went with 0/10 sentinel failures, passing it with 10/20 (two-sided
    p = 0.011): 'adds information: yes'. The direction that matters is the other one."""
    attempts: Attempts = {}
    for i in range(30):
        task = f"t{i}"
        if i < 10:
            attempts[task, "base"] = _decision(task, {"generated_artifacts_fresh"}, "passed")
        else:
            attempts[task, "base"] = _decision(task, set(), "failed" if i < 20 else "passed")
    row = _gates(_report(tmp_path / "run", attempts, split=40))["generated_artifacts_fresh"]
    assert (row.failed_units, row.passed_units) == (10, 20)
    assert row.p_value == pytest.approx(1.0) and not row.informative
    assert row.note == "wrong direction: fewer sentinel failures when it failed"
    assert row.difference is not None and row.difference.estimate == pytest.approx(-0.5)


def test_one_failure_is_no_claim(tmp_path: Path) -> None:
    """A single attempt that failed the gate (1/1 against 0/9) made a gate 'informative'."""
    attempts: Attempts = {}
    for i in range(10):
        task = f"t{i}"
        failed = {"generated_artifacts_fresh"} if i == 0 else set()
        attempts[task, "base"] = _decision(task, failed, "failed" if i == 0 else "passed")
    row = _gates(_report(tmp_path / "run", attempts))["generated_artifacts_fresh"]
    assert not row.informative and row.p_value is None
    assert row.note == "1 failed units, fewer than 5"


def test_two_deterministic_epochs_give_the_answer_of_one(tmp_path: Path) -> None:
    """Two epochs of deterministic agents made release_receipt_present 'informative' (2/2 vs
    2/16, p = 0.039) where either epoch alone gave p = 0.222: epochs are not independent."""
    one: Attempts = {}
    for i in range(20):
        task = f"t{i}"
        one[task, "base"] = _decision(task, set() if i % 2 else {"focused_tests_passed"})
        stale = i < 6
        failed = {"release_receipt_present"} if stale else set()
        one[task, "agent"] = _decision(task, failed, "failed" if i < 3 or i == 9 else "passed")
    two: Attempts = {k: [d, d] for k, d in one.items() if isinstance(d, Decision)}
    once, twice = _report(tmp_path / "one", one), _report(tmp_path / "two", two)
    for a, b in zip(once.gates, twice.gates, strict=True):
        assert (a.agent, a.gate, a.failed_units, a.passed_units) == (
            b.agent,
            b.gate,
            b.failed_units,
            b.passed_units,
        )
        assert (a.p_value, a.p_holm, a.informative, a.note) == (
            b.p_value,
            b.p_holm,
            b.informative,
            b.note,
        )
        assert a.difference == b.difference
    for a2, b2 in zip(once.autonomy, twice.autonomy, strict=True):
        assert (a2.verdict, a2.decided_by) == (b2.verdict, b2.decided_by)
    for r1, r2 in zip(once.acceptance, twice.acceptance, strict=True):
        assert r1.interval.model_copy(update={"n": 0}) == r2.interval.model_copy(update={"n": 0})
    for p1, p2 in zip(once.paired, twice.paired, strict=True):
        assert p1.comparison.difference.model_dump(exclude={"method"}) == (
            p2.comparison.difference.model_dump(exclude={"method"})
        )
        assert p1.comparison.p_value == p2.comparison.p_value


def test_one_task_at_three_of_five_has_an_interval_of_width(tmp_path: Path) -> None:
    """A cluster bootstrap over one task at 3/5 gave 60% [60%, 60%]."""
    epochs = [_decision("t0", set() if e < 3 else {"focused_tests_passed"}) for e in range(5)]
    report = _report(tmp_path / "run", {("t0", "base"): epochs})
    interval = next(a for a in report.acceptance if a.cohort == "all").interval
    assert (interval.estimate, interval.n, interval.tasks) == (0.6, 5, 1)
    assert interval.low < 0.1 and interval.high > 0.9 and interval.se is None


def test_a_check_an_older_evaluator_did_not_know_leaves_its_attempts_in_the_gate_table(
    tmp_path: Path,
) -> None:
    """A run decided before a hard check existed (here ``harness_untampered``) has decisions
    without it: they still passed every check their evaluator had, so they stay in each other
    gate's population (the real click run's table had an empty population for every gate)."""
    attempts: Attempts = {}
    for i in range(10):
        task = f"t{i}"
        stale = i < 4
        made = _decision(
            task, {"generated_artifacts_fresh"} if stale else set(), "failed" if stale else "passed"
        )
        older = tuple(c for c in made.checks if c.name != "harness_untampered")
        attempts[task, "base"] = made.model_copy(update={"checks": older})
    rows = _gates(_report(tmp_path / "run", attempts))
    assert rows["generated_artifacts_fresh"].population == 10
    assert rows["generated_artifacts_fresh"].failed_units == 4


def test_a_policy_file_decides_and_is_printed_with_every_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    attempts: Attempts = {}
    for i in range(6):
        task = f"t{i}"
        attempts[task, "base"] = _decision(task, {"focused_tests_passed"})
        attempts[task, "agent"] = _decision(task, set())
    _report(tmp_path / "run", attempts)
    run = str(tmp_path / "run")
    policy = tmp_path / "policy.toml"
    policy.write_text(
        "version = 1\n[autonomy]\nmin_paired_tasks = 6\nacceptance_floor = 0.4\n"
        "sentinel_ceiling = 0.6\n"
    )
    capsys.readouterr()
    assert main(["report", run, "--json"]) == ExitCode.OK
    default = json.loads(capsys.readouterr().out)
    assert default["autonomy"][0]["verdict"] == "insufficient evidence"  # 6 tasks < 10
    assert main(["report", run, "--policy", str(policy), "--json"]) == ExitCode.OK
    chosen = json.loads(capsys.readouterr().out)
    row = chosen["autonomy"][0]
    # 6 of 6 against 0 of 6: lower bound 0.52 >= 0.4, sentinel 0 of 6 under 0.6
    assert (row["verdict"], row["decided_by"]) == ("widen", ["a", "b", "c", "d", "e"])
    digest = Policy.model_validate(chosen["policy"]).digest
    assert row["policy"] == f"v1 {policy} sha256 {digest}" and digest != Policy().digest
    assert chosen["policy"]["autonomy"]["min_paired_tasks"] == 6
    assert chosen["policy_line"].startswith(f"policy v1 ({policy}, sha256 {digest}): margin 0.05")
    assert main(["report", run, "--policy", str(policy)]) == ExitCode.OK
    text = capsys.readouterr().out
    assert f"policy v1 ({policy}, sha256 {digest})" in text.replace("\n", "")
    assert "widen" in text and max(len(line) for line in text.splitlines()) <= 100


def test_a_bad_policy_file_is_areport_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    attempts: Attempts = {("t0", "base"): _decision("t0", set())}
    _report(tmp_path / "run", attempts)
    run = str(tmp_path / "run")
    bad = tmp_path / "bad.toml"
    for text, said in (
        (
            "[autonomy]\nmargn = 0.1\n",
            "unknown key 'autonomy.margn' (did you mean 'margin'? valid keys here: ",
        ),
        (
            "[gate]\n",
            "unknown key 'gate' (did you mean 'gates'? valid keys here: autonomy, gates, version)",
        ),
        (
            "version = 2\n",
            "key 'version': version 2 is not one this repogate reads (it reads 1): write 1, or use"
            " a repogate that reads version 2",
        ),
        ("[autonomy]\nmargin = 1.5\n", "'autonomy.margin': Input should be less than or equal"),
        ("[gates]\nmin_failures = 0\n", "'gates.min_failures': Input should be greater"),
        # two problems: the second (and its hint) is said too, not only the first
        (
            "version = 2\n[autonomy]\nmargn = 0.1\n",
            "2 problems: key 'version': version 2 is not one this repogate reads (it reads 1): "
            "write 1, or use a repogate that reads version 2; unknown key 'autonomy.margn' (did "
            "you mean 'margin'?",
        ),
        ("version = \n", "is not valid TOML"),
    ):
        bad.write_text(text)
        err = report_error(capsys, run, "--policy", str(bad))
        assert said in err and "docs/report.md" in err, err
    err = report_error(capsys, run, "--policy", str(tmp_path / "none.toml"))
    assert "policy file" in err and "cannot be read" in err


def test_the_documented_policy_file_is_the_defaults(root: Path) -> None:
    """docs/report.md and the policy module show the policy file with its defaults: both must
    parse to exactly :class:`Policy`'s defaults, so the documentation cannot drift."""
    import tomllib

    from repogate.report import policy

    page = (root / "docs" / "report.md").read_text()
    block = page.split("```toml\n", 1)[1].split("```", 1)[0]
    assert Policy.model_validate(tomllib.loads(block)) == Policy()
    assert policy.__doc__ is not None
    module_block = policy.__doc__.split("::\n", 1)[1]  # the docstring ends with the file
    assert Policy.model_validate(tomllib.loads(module_block)) == Policy()
    assert set(tomllib.loads(block)["autonomy"]) == set(AutonomyPolicy.model_fields)


def test_a_cohort_of_one_task_is_counted_in_the_singular(tmp_path: Path) -> None:
    """The report once said "sentinel failure rate 0.0% [...] over 1 tasks"."""
    attempts: Attempts = {
        ("t0", "base"): _decision("t0", set()),
        ("t0", "good"): _decision("t0", set(), "passed"),
    }
    report = _report(tmp_path / "run", attempts)
    says = _says(_verdicts(report)["api", "good"], "c")
    assert " over 1 task, upper bound " in says


@pytest.mark.parametrize(
    ("n", "tasks", "failures"),
    [(1, "1 paired task,", "1 failure,"), (2, "2 paired tasks,", "2 failures,")],
)
def test_the_policy_line_counts_in_english(n: int, tasks: str, failures: str) -> None:
    """It said "at least 1 paired tasks" and "at least 1 failures"."""
    from repogate.report.policy import GatePolicy, describe

    policy = Policy(autonomy=AutonomyPolicy(min_paired_tasks=n), gates=GatePolicy(min_failures=n))
    line = describe(policy, "test")
    assert f"at least {tasks} at most" in line
    assert f"gates: at least {failures} Holm" in line


def test_sentinels_left_out_of_rejected_attempts_are_said_beside_the_rate(tmp_path: Path) -> None:
    """Red team rt32: under ``--skip-sentinel-when-rejected`` a rejected attempt's sentinel is
    ``skipped``, so clause (c)'s rate is over the attempts no other check rejected: an agent
    whose 4 rejected attempts would also have broken later history read 0 of 16, as if it
    never did, with nothing said. The rate is unchanged; the clause now says how many
    sentinels were left out and why."""
    attempts: Attempts = {}
    for i in range(20):
        task = f"t{i}"
        attempts[task, "base"] = _decision(task, set())
        rejected = i < 4
        attempts[task, "agent"] = _decision(
            task,
            {"focused_tests_passed"} if rejected else set(),
            "skipped" if rejected else "passed",
        )
    row = _verdicts(_report(tmp_path / "run", attempts))["api", "agent"]
    says = _says(row, "c")
    assert says.startswith("sentinel failure rate 0.0% [")
    assert says.endswith(
        "; 4 sentinels not run on attempts already rejected (--skip-sentinel-when-rejected): "
        "the rate is over attempts no other check rejected"
    ), says
    plain = _verdicts(
        _report(
            tmp_path / "run2",
            {k: v for k, v in attempts.items() if k[1] == "base"}
            | {(t, "agent"): _decision(t, set()) for t, _ in attempts if _ == "base"},
        )
    )["api", "agent"]
    assert "not run on attempts already rejected" not in _says(plain, "c")


SKIPPED_NOTE = (
    "no claim: the {n} attempts that failed it are left out, their sentinel not run "
    "(--skip-sentinel-when-rejected): the run's option makes this unanswerable; run without it "
    "to ask"
)


def test_a_gate_whose_failures_all_skipped_the_sentinel_says_the_run_option_left_no_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red team: under ``--skip-sentinel-when-rejected`` every attempt that failed a hard
    gate has its sentinel skipped, so the gate's failed arm is empty by construction; the table
    said "never failed among them" (and the text report hid the row as a gate that never
    failed), not that the run's option made the question unanswerable."""
    attempts: Attempts = {}
    for i in range(20):
        task = f"t{i}"
        stale = i < 8  # what the telling gate's test had: here their sentinel was not run
        failed = {"generated_artifacts_fresh"} if stale else set()
        agent = "base" if i < 10 else "other"
        attempts[task, agent] = _decision(task, failed, "skipped" if stale else "passed")
    run = tmp_path / "run"
    report = _report(run, attempts)
    fresh = _gates(report)["generated_artifacts_fresh"]
    assert (fresh.population, fresh.failed_units, fresh.passed_units) == (12, 0, 12)
    assert (fresh.sentinel_not_run, fresh.sentinel_not_run_failed) == (8, 8)
    assert not fresh.informative and fresh.note == SKIPPED_NOTE.format(n=8)
    # the 8 also pass code_owner_approved: left out of its "passed" arm, and said
    owner = _gates(report)["code_owner_approved"]
    assert (owner.population, owner.sentinel_not_run, owner.sentinel_not_run_failed) == (12, 8, 0)
    assert owner.note == (
        "never failed among them; 8 attempts left out, their sentinel not run "
        "(--skip-sentinel-when-rejected)"
    )
    assert "whose sentinel was not run, being already rejected, are left out" in (
        report.informativeness_rule
    )
    # the text report shows the row with its reason instead of hiding it as never failed
    assert main(["report", str(run), "--by", "area", "--baseline", "base"]) == ExitCode.OK
    text = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "the run's option makes this unanswerable" in text


def test_a_gate_with_sentinels_run_and_not_run_counts_those_left_out(tmp_path: Path) -> None:
    """Two runs reported together, one with the option: the failures whose sentinel ran are
    the failed arm, and those whose sentinel was not run are counted in the note."""
    attempts: Attempts = {}
    for i in range(20):
        task = f"t{i}"
        stale = i < 8
        failed = {"generated_artifacts_fresh"} if stale else set()
        sentinel = ("failed" if i < 5 else "skipped") if stale else "passed"
        attempts[task, "base"] = _decision(task, failed, sentinel)
    fresh = _gates(_report(tmp_path / "run", attempts))["generated_artifacts_fresh"]
    assert (fresh.failed_units, fresh.passed_units, fresh.sentinel_not_run) == (5, 12, 3)
    assert fresh.p_value is not None and fresh.informative
    assert fresh.note == (
        "3 attempts left out, their sentinel not run (--skip-sentinel-when-rejected)"
    )


def test_an_agent_whose_every_sentinel_was_skipped_still_gets_its_rows(tmp_path: Path) -> None:
    """An agent every attempt of which a hard check rejected (sentinel skipped each time) had no
    row at all: the table silently left it out."""
    attempts: Attempts = {}
    for i in range(10):
        task = f"t{i}"
        attempts[task, "base"] = _decision(task, set())
        attempts[task, "bad"] = _decision(task, {"generated_artifacts_fresh"}, "skipped")
    report = _report(tmp_path / "run", attempts)
    fresh = _gates(report, "bad")["generated_artifacts_fresh"]
    assert (fresh.population, fresh.sentinel_not_run, fresh.sentinel_not_run_failed) == (0, 10, 10)
    assert fresh.note == SKIPPED_NOTE.format(n=10)
