"""The report on a terminal: one rich table per section, read from the report model only."""

from __future__ import annotations

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from repogate._counted import counted
from repogate.clock import readable
from repogate.decision import measure_label, measure_value
from repogate.report import differs
from repogate.report.model import Report
from repogate.report.stats import Interval

WIDTH = 100


def pct(value: float) -> str:
    """A proportion as a percentage with one decimal, e.g. ``80.0%``."""
    return f"{100 * value:.1f}%"


def interval_text(interval: Interval) -> str:
    """``80.0% [49.0%, 94.3%]``: estimate and 95% interval; ``n/a (no observations)`` when n is 0."""
    if interval.n == 0:
        return "n/a (no observations)"
    return f"{pct(interval.estimate)} [{pct(interval.low)}, {pct(interval.high)}]"


def se_text(interval: Interval) -> str:
    """The standard error as a percentage (``SE 4.1%``), ``SE n/a`` under two tasks."""
    return "SE n/a" if interval.se is None else f"SE {pct(interval.se)}"


def points(value: float) -> str:
    """A difference of proportions in percentage points, e.g. ``+12.5 pp``."""
    return f"{100 * value:+.1f} pp"


def difference_text(interval: Interval) -> str:
    """``+20.0 pp [-16.3, +72.6]``: a difference and its interval in percentage points."""
    return f"{points(interval.estimate)} [{100 * interval.low:+.1f}, {100 * interval.high:+.1f}]"


def count(value: float) -> str:
    """A count of successes, whole or (a sum of per-task rates) fractional: ``3`` or ``2.5``."""
    return f"{round(value, 2):g}"


def rate_text(interval: Interval) -> str:
    """``80.0% [49.0%, 94.3%] SE 4.1%, 10 tasks``: every rate's full line."""
    if interval.n == 0:
        return interval_text(interval)
    tasks = f"{interval.tasks} task{'' if interval.tasks == 1 else 's'}"
    return f"{interval_text(interval)} {se_text(interval)}, {tasks}"


RUNS_HEADING = "Runs: what ran and under which isolation"
"""The heading of the runs section (each run's manifest in brief), in the text and the HTML."""


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _captioned(table: Table, caption: str) -> Table:
    """Return ``table`` with ``caption`` under it, left-aligned."""
    table.caption = caption
    table.caption_justify = "left"
    return table


def _noted(shown: RenderableType, note: str) -> Group:
    """Return ``shown`` with ``note`` under it, dimmed (the rule or estimand it follows)."""
    return Group(shown, Text(note, style="dim"))


def _runs(report: Report) -> Table:
    table = _table(RUNS_HEADING, "run", "status", "what")
    for run in report.runs:
        planned = f" of {run.planned}" if run.planned is not None else ""
        what = "\n".join(
            [
                f"{run.evaluator}, python {run.python}, started {readable(run.created_at)}",
                f"isolation {run.isolation}",
                f"{run.network}; budgets {run.budgets}",
                f"selection: {run.what_ran}",
                *([run.sentinel_note] if run.sentinel_note else []),
                *(f"[yellow]warning: {w}" for w in run.warnings),
            ]
        )
        table.add_row(run.path, f"{run.status}\n{run.done}{planned} done", what)
    return table


def _acceptance(report: Report) -> RenderableType:
    table = _table(
        f"hard-gate acceptance by agent and cohort{f' ({report.by})' if report.by else ''}",
        "agent",
        "cohort",
        "accepted/scored",
        "tasks",
        "acceptance [95%]",
        "SE",
        "errors",
        "method",
    )
    methods: dict[str, str] = {}
    for row in report.acceptance:
        table.add_row(
            row.agent,
            row.cohort,
            f"{row.accepted}/{row.scored}",
            str(row.tasks),
            interval_text(row.interval),
            se_text(row.interval).removeprefix("SE "),
            f"{row.errors}/{row.attempts}",
            methods.setdefault(row.interval.method, f"({len(methods) + 1})"),
        )
    _captioned(table, "; ".join(f"{key} {method}" for method, key in methods.items()))
    return _noted(table, f"estimand: {report.estimand}")


def _pass_k(report: Report) -> Table:
    table = _table(
        "pass@k (Chen et al. 2021) and pass^k (Yao et al. 2024, tau-bench), same tasks for every k",
        "agent",
        "k",
        "tasks",
        "pass@k",
        "pass^k",
    )
    for row in report.pass_k:
        table.add_row(
            row.agent, str(row.k), str(row.tasks), pct(row.pass_at_k), pct(row.pass_hat_k)
        )
    return table


def _funnel(report: Report) -> Table:
    table = _table(
        "stage funnel over scored attempts (own pass rate | cumulative, per-task means)",
        "agent",
        "stage",
        "pass/fail/err (skipped)",
        "own",
        "cumulative [95%]",
    )
    for funnel in report.funnels:
        for stage in funnel.stages:
            table.add_row(
                funnel.agent,
                stage.stage,
                stage.counts,
                pct(stage.own.estimate) if stage.own.n else "n/a",
                f"{interval_text(stage.cumulative)} of {funnel.scored}",
            )
    methods = {s.cumulative.method for f in report.funnels for s in f.stages if s.cumulative.n}
    legend = f"\n{report.funnel_legend}" if report.funnel_legend else ""
    return _captioned(table, f"intervals: {'; '.join(sorted(methods))}; SE in --json{legend}")


def _errors(report: Report) -> Table:
    kinds = list(report.errors[0].kinds) if report.errors else []
    short = [k.replace("environment", "env").replace(" evaluator error", "") for k in kinds]
    table = _table(
        "evaluator and environment errors (not the agent's)", "agent", *short, "unfinished", "of"
    )
    for row in report.errors:
        table.add_row(
            row.agent, *(str(row.kinds[k]) for k in kinds), str(row.unfinished), str(row.attempts)
        )
    return table


def _soft(report: Report) -> Table:
    table = _table(
        "soft measures, median / total (never folded into the verdict)", "agent", "n", "measures"
    )
    for row in report.soft:
        shown = [
            f"{measure_label(name)} {measure_value(name, m.median)} / {measure_value(name, m.total)}"
            for name, m in row.measures.items()
            if m.total
        ]
        table.add_row(row.agent, str(row.n), "; ".join(shown) or "all zero")
    return table


def _resolved(report: Report) -> RenderableType:
    table = _table(
        "resolved (SWE-bench: FAIL_TO_PASS and PASS_TO_PASS) vs accepted, over scored attempts",
        "agent",
        "tasks",
        "resolved",
        "[95%], SE",
        "accepted",
        "[95%], SE",
        "errors",
        "gaps",
    )
    for row in report.resolved:
        r, a = row.resolved_rate, row.accepted_rate
        table.add_row(
            row.agent,
            str(a.tasks),
            f"{row.resolved}/{row.scored} {pct(r.estimate)}",
            f"[{pct(r.low)}, {pct(r.high)}] {se_text(r).removeprefix('SE ')}",
            f"{row.accepted}/{row.scored} {pct(a.estimate)}",
            f"[{pct(a.low)}, {pct(a.high)}] {se_text(a).removeprefix('SE ')}",
            str(row.errors),
            str(row.resolved_not_accepted),
        )
    methods = sorted({r.accepted_rate.method for r in report.resolved if r.scored})
    _captioned(
        table, f"{'; '.join(methods)}; errors kept apart, never a gap (resolved, not accepted)"
    )
    gaps = _table("resolved, not accepted: the checks that stopped them", "agent", "attempt", "by")
    for gap in report.gaps:
        gaps.add_row(gap.agent, f"{gap.contract} epoch {gap.epoch}", ", ".join(gap.stopped_by))
    return Group(table, gaps) if report.gaps else table


def _paired(report: Report) -> Table:
    table = _table(
        f"paired comparison against the baseline {report.baseline} (agent minus baseline)",
        "agent",
        "tasks",
        "dropped (why)",
        "difference [95%]",
        "SE",
        "better/worse",
        "p",
        "method",
    )
    methods: dict[str, str] = {}
    for row in report.paired:
        c = row.comparison
        d = c.difference
        table.add_row(
            row.agent,
            str(row.tasks),
            row.dropped.text,
            difference_text(d),
            "n/a" if d.se is None else f"{100 * d.se:.1f} pp",
            f"{c.only_a}/{c.only_b}",
            f"{c.p_value:.3g}",
            methods.setdefault(f"{d.method}; p: {c.method}", f"({len(methods) + 1})"),
        )
    return _captioned(table, "; ".join(f"{key} {method}" for method, key in methods.items()))


def _autonomy(report: Report) -> RenderableType:
    table = _table("autonomy by cohort", "cohort", "agent", "verdict", "clauses (* decided)")
    mark = {True: "yes", False: "no", None: "cannot tell"}
    for row in report.autonomy:
        lines = [
            f"{'*' if c.clause in row.decided_by else ' '}({c.clause}) {mark[c.holds]}: {c.says}"
            for c in row.clauses
        ]
        table.add_row(
            row.cohort, row.agent, row.verdict, "\n".join([*lines, f"beside: {row.beside}"])
        )
    return _noted(table, f"{report.policy_line}\nrule: {report.autonomy_rule}")


def _gates(report: Report) -> RenderableType:
    table = _table(
        "gate informativeness: sentinel failures when the gate failed | passed (task-agent units)",
        "cohort, agent",
        "gate",
        "failed|passed",
        "diff, pp",
        "p, Holm",
        "informative",
    )
    table.columns[1].no_wrap = True
    shown = [g for g in report.gates if g.failed_units or g.sentinel_not_run_failed]
    for row in shown:
        f, q = row.when_failed, row.when_passed
        d = row.difference
        p = "n/a" if row.p_value is None else f"{row.p_value:.2g}\n{row.p_holm or 0:.2g}"
        table.add_row(
            f"{row.cohort},\n{row.agent}",
            row.gate,
            f"{count(f.estimate * f.tasks)}/{f.tasks}|{count(q.estimate * q.tasks)}/{q.tasks}",
            "n/a" if d is None else f"{100 * d.estimate:+.1f}\n>= {100 * d.low:+.1f}",
            p,
            row.verdict,
        )
    hidden = len(report.gates) - len(shown)
    _captioned(
        table,
        f"diff: when failed minus when passed, >= its one-sided 95% lower bound; "
        f"{counted(hidden, 'row')} whose gate never failed in its population (nor among "
        "attempts left out, their sentinel not run) "
        f"{'is' if hidden == 1 else 'are'} in --json",
    )
    return _noted(table, f"rule: {report.informativeness_rule}")


def _injections(report: Report) -> RenderableType:
    table = _table(
        "acceptance without | with each injection, paired by task",
        "injection",
        "agent",
        "tasks",
        "without",
        "with",
        "lost/gained",
    )
    for row in report.injections:
        table.add_row(
            row.kind,
            row.agent,
            str(row.tasks),
            count(row.accepted_without),
            count(row.accepted_with),
            f"{row.lost}/{row.gained}",
        )
    return table if report.injections else Text("")


def print_report(report: Report, console: Console | None = None) -> None:
    """Print every section of ``report``, at most :data:`WIDTH` columns wide."""
    console = console or Console(width=WIDTH)
    if report.partial:
        console.print(f"[yellow]partial report: {report.partial_note}")
    if report.profile_note:
        console.print(f"[yellow]profile versions mixed: {report.profile_note}")
    for section in (
        _runs,
        _acceptance,
        _pass_k,
        _funnel,
        _errors,
        _soft,
        _resolved,
        lambda r: differs.text_table(r.differs),
        _paired,
        _autonomy,
        _gates,
        _injections,
    ):
        console.print(section(report))
