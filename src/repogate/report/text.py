"""The report on a terminal: one rich table per section, read from the report model only."""

from __future__ import annotations

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

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


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _runs(report: Report) -> Table:
    table = _table("runs (manifest in brief)", "run", "status", "what")
    for run in report.runs:
        planned = f" of {run.planned}" if run.planned is not None else ""
        what = "\n".join(
            [
                f"{run.evaluator}, python {run.python}, {run.created_at}",
                f"isolation {run.isolation}",
                f"{run.network}; budgets {run.budgets}",
                f"selection: {run.what_ran}",
                *(f"[yellow]warning: {w}" for w in run.warnings),
            ]
        )
        table.add_row(run.path, f"{run.status}\n{run.done}{planned} done", what)
    return table


def _acceptance(report: Report) -> Table:
    table = _table(
        f"hard-gate acceptance by agent and cohort{f' ({report.by})' if report.by else ''}",
        "agent",
        "cohort",
        "accepted",
        "95% interval",
        "errors",
        "method",
    )
    methods: dict[str, str] = {}
    for row in report.acceptance:
        table.add_row(
            row.agent,
            row.cohort,
            f"{row.accepted}/{row.scored}",
            interval_text(row.interval),
            f"{row.errors}/{row.attempts}",
            methods.setdefault(row.interval.method, f"({len(methods) + 1})"),
        )
    table.caption = "; ".join(f"{key} {method}" for method, key in methods.items())
    table.caption_justify = "left"
    return table


def _pass_k(report: Report) -> Table:
    table = _table(
        "pass@k and pass^k (Chen et al. 2021 estimator)", "agent", "k", "tasks", "pass@k", "pass^k"
    )
    for row in report.pass_k:
        table.add_row(
            row.agent, str(row.k), str(row.tasks), pct(row.pass_at_k), pct(row.pass_hat_k)
        )
    return table


def _funnel(report: Report) -> Table:
    table = _table(
        "stage funnel (own pass rate | cumulative)",
        "agent",
        "stage",
        "pass/fail/err",
        "own",
        "cumulative",
    )
    for funnel in report.funnels:
        for stage in funnel.stages:
            table.add_row(
                funnel.agent,
                stage.stage,
                f"{stage.passed}/{stage.failed}/{stage.errored}",
                pct(stage.own.estimate) if stage.own.n else "n/a",
                f"{pct(stage.cumulative.estimate)} of {funnel.scored}",
            )
    return table


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
            f"{name} {m.median:.4g} / {m.total:.4g}" for name, m in row.measures.items() if m.total
        ]
        table.add_row(row.agent, str(row.n), "; ".join(shown) or "all zero")
    return table


def _resolved(report: Report) -> Table:
    table = _table(
        "resolved (SWE-bench: FAIL_TO_PASS and PASS_TO_PASS) vs accepted",
        "agent",
        "decided",
        "resolved",
        "accepted",
        "resolved, not accepted",
    )
    for row in report.resolved:
        table.add_row(
            row.agent,
            str(row.decided),
            f"{row.resolved} ({pct(row.resolved_rate.estimate)})",
            f"{row.accepted} ({pct(row.accepted_rate.estimate)})",
            str(row.resolved_not_accepted),
        )
    for gap in report.gaps:
        table.add_row(
            gap.agent, "", "", "", f"{gap.contract} e{gap.epoch}: {', '.join(gap.stopped_by)}"
        )
    return table


def _paired(report: Report) -> Table:
    table = _table(
        f"paired comparison against the baseline {report.baseline}",
        "agent",
        "tasks",
        "difference [95%]",
        "only it/only base",
        "p",
        "method",
    )
    for row in report.paired:
        c = row.comparison
        d = c.difference
        table.add_row(
            row.agent,
            str(row.tasks),
            f"{d.estimate:+.3f} [{d.low:+.3f}, {d.high:+.3f}]",
            f"{c.only_a}/{c.only_b}",
            "" if c.p_value is None else f"{c.p_value:.3g}",
            "; ".join(dict.fromkeys(m.split(" (")[0] for m in (c.method, d.method))),
        )
    return table


def _autonomy(report: Report) -> RenderableType:
    table = _table("autonomy by cohort", "cohort", "agent", "verdict", "why")
    for row in report.autonomy:
        table.add_row(row.cohort, row.agent, row.verdict, "; ".join(row.reasons))
    return Group(table, Text(f"rule: {report.autonomy_rule}", style="dim"))


def _gates(report: Report) -> RenderableType:
    table = _table(
        "gate informativeness (sentinel failure rate)",
        "cohort",
        "gate",
        "n",
        "gate failed",
        "gate passed",
        "adds information",
    )
    for row in report.gates:
        table.add_row(
            row.cohort,
            row.gate,
            str(row.population),
            f"{row.when_failed.estimate * row.when_failed.n:.0f}/{row.when_failed.n}",
            f"{row.when_passed.estimate * row.when_passed.n:.0f}/{row.when_passed.n}",
            "yes" if row.informative else f"no: {row.note}",
        )
    return Group(table, Text(f"rule: {report.informativeness_rule}", style="dim"))


def print_report(report: Report, console: Console | None = None) -> None:
    """Print every section of ``report``, at most :data:`WIDTH` columns wide."""
    console = console or Console(width=WIDTH)
    if report.partial:
        console.print(f"[yellow]partial report: {report.partial_note}")
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
    ):
        console.print(section(report))
