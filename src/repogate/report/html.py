"""The report as one self-contained HTML page: inline CSS and SVG charts, no script, no network.

Numbers are printed from the report model with the same formatting as the terminal
(:func:`repogate.report.text.pct`), each cell carrying its raw value in ``data-value``, so a test
can compare the page with the JSON report. The per-attempt table links each attempt's receipts and
patch by a path relative to the page (they are read from the evidence folders, never copied).
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from repogate.clock import readable
from repogate.decision import measure_label, measure_value
from repogate.errors import UserInputError
from repogate.report import differs
from repogate.report.charts import cohort_chart, funnel_chart, resolved_chart
from repogate.report.model import AttemptRow, Report
from repogate.report.stats import Interval
from repogate.report.text import (
    RUNS_HEADING,
    count,
    difference_text,
    interval_text,
    pct,
    points,
    se_text,
)

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:80em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 6px;
text-align:left;vertical-align:top}th{background:#f3f3f3}.accepted{color:#070}.rejected{color:#a00}
.error,.crashed,.running,.interrupted,.not-started{color:#a60}.note{color:#555;font-size:90%}.partial{background:#fe9;padding:.5em}
"""


def _cell(text: object, value: object = None, cls: str = "") -> str:
    data = "" if value is None else f' data-value="{escape(str(value))}"'
    klass = f' class="{cls}"' if cls else ""
    return f"<td{klass}{data}>{escape(str(text))}</td>"


def _interval(interval: Interval) -> str:
    return (
        f'<td data-estimate="{interval.estimate}" data-low="{interval.low}" '
        f'data-high="{interval.high}" data-se="{interval.se}">'
        f"{escape(interval_text(interval))} {escape(se_text(interval))}</td>"
    )


def _table(table_id: str, head: list[str], rows: list[str]) -> str:
    if not rows:
        return f'<p class=note id="{table_id}-empty">None.</p>'
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join(f"<tr>{row}</tr>" for row in rows)
    return f'<table id="{table_id}"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'


def _headline(report: Report) -> str:
    """What a reader came for: accepted beside resolved per agent, with intervals, and verdicts."""
    verdicts: dict[str, list[str]] = {}
    for a in report.autonomy:
        verdicts.setdefault(a.agent, []).append(
            a.verdict if report.by is None else f"{a.cohort}: {a.verdict}"
        )
    rows = [
        _cell(r.agent)
        + _cell(r.accepted_rate.tasks, r.accepted_rate.tasks)
        + _cell(f"{r.accepted}/{r.scored}", r.accepted)
        + _interval(r.accepted_rate)
        + _cell(f"{r.resolved}/{r.scored}", r.resolved)
        + _interval(r.resolved_rate)
        + _cell(r.errors, r.errors)
        + _cell(
            "; ".join(verdicts.get(r.agent, [])) or f"baseline ({report.baseline})",
        )
        for r in report.resolved
    ]
    head = ["agent", "tasks", "accepted", "accepted [95%], SE", "resolved", "resolved [95%], SE"]
    methods = "; ".join(sorted({r.accepted_rate.method for r in report.resolved if r.scored}))
    return (
        "<h2>Accepted vs resolved</h2>"
        "<p class=note>Accepted: every hard gate of the profile passed. Resolved (SWE-bench): "
        "FAIL_TO_PASS and PASS_TO_PASS passed. Both over scored attempts, per-task means; "
        f"errors apart. Intervals: {escape(methods)}.</p>"
        + _table("headline", [*head, "errors (apart)", "autonomy"], rows)
    )


def _runs(report: Report) -> str:
    rows = []
    for r in report.runs:
        planned = "" if r.planned is None else f" of {r.planned}"
        rows.append(
            _cell(r.path)
            + _cell(f"{r.status}; {r.done}{planned} done", r.done)
            + _cell(
                f"{r.evaluator}, python {r.python}, {r.platform}, started {readable(r.created_at)}"
            )
            + _cell(r.isolation + "".join(f"; warning: {w}" for w in r.warnings))
            + _cell(f"{r.network}; {r.budgets}")
            + _cell(r.what_ran + (f"; {r.sentinel_note}" if r.sentinel_note else ""))
        )
    return _table(
        "runs", ["run", "status", "evaluator", "isolation", "network, budgets", "selection"], rows
    )


def _acceptance(report: Report) -> str:
    rows = [
        _cell(r.agent)
        + _cell(r.cohort)
        + _cell(f"{r.accepted}/{r.scored}", r.accepted)
        + _cell(r.tasks, r.tasks)
        + _interval(r.interval)
        + _cell(f"{r.errors}/{r.attempts}", r.errors)
        + _cell(r.interval.method)
        for r in report.acceptance
    ]
    head = ["agent", "cohort", "accepted/scored", "tasks", "acceptance [95%], SE"]
    return (
        _table("acceptance", [*head, "errors/attempts", "method"], rows)
        + f"<p class=note>Estimand: {escape(report.estimand)}.</p>"
    )


def _funnel(report: Report) -> str:
    rows = [
        _cell(f.agent)
        + _cell(s.stage)
        + _cell(s.counts, s.passed)
        + _cell(pct(s.own.estimate) if s.own.n else "n/a", s.own.estimate)
        + _cell(pct(s.cumulative.estimate), s.cumulative.estimate)
        + _interval(s.cumulative)
        for f in report.funnels
        for s in f.stages
    ]
    head = ["agent", "stage", "passed/failed/errored (skipped)", "own pass rate", "cumulative"]
    head.append("cumulative [95%], SE (per-task mean)")
    legend = report.funnel_legend
    note = f"<p class=note>{escape(legend)}.</p>" if legend else ""
    return _table("funnel", head, rows) + note


def _small_tables(report: Report) -> str:
    kinds = list(report.errors[0].kinds) if report.errors else []
    errors = [
        _cell(e.agent)
        + "".join(_cell(e.kinds[k], e.kinds[k]) for k in kinds)
        + _cell(e.unfinished, e.unfinished)
        + _cell(e.attempts, e.attempts)
        for e in report.errors
    ]
    pass_k = [
        _cell(p.agent)
        + _cell(p.k)
        + _cell(p.tasks)
        + _cell(pct(p.pass_at_k), p.pass_at_k)
        + _cell(pct(p.pass_hat_k), p.pass_hat_k)
        for p in report.pass_k
    ]
    soft = [
        _cell(s.agent)
        + _cell(s.n)
        + "".join(
            _cell(f"{measure_value(n, m.median)} / {measure_value(n, m.total)}", m.total)
            for n, m in s.measures.items()
        )
        for s in report.soft
    ]
    soft_head = [measure_label(n) for n in report.soft[0].measures] if report.soft else []
    return (
        "<h2>Evaluator and environment errors (never the agent's failure)</h2>"
        + _table("errors", ["agent", *kinds, "unfinished", "attempts (denominator)"], errors)
        + "<h2>pass@k and pass^k</h2><p class=note>Unbiased estimators: Chen et al. 2021 "
        "(pass@k), Yao et al. 2024, tau-bench (pass^k); k up to the fewest scored attempts of "
        "any task, so every k is over the same tasks.</p>"
        + _table("pass_k", ["agent", "k", "tasks", "pass@k", "pass^k"], pass_k)
        + "<h2>Soft measures (median / total; never folded into the verdict)</h2>"
        + _table("soft", ["agent", "n", *soft_head], soft)
    )


def _resolved(report: Report) -> str:
    rows = [
        _cell(r.agent)
        + _cell(r.scored, r.scored)
        + _cell(f"{r.resolved}/{r.scored}", r.resolved)
        + _interval(r.resolved_rate)
        + _cell(f"{r.accepted}/{r.scored}", r.accepted)
        + _interval(r.accepted_rate)
        + _cell(r.errors, r.errors)
        + _cell(r.resolved_not_accepted, r.resolved_not_accepted)
        for r in report.resolved
    ]
    gaps = [
        _cell(g.agent) + _cell(g.contract) + _cell(g.epoch) + _cell(", ".join(g.stopped_by))
        for g in report.gaps
    ]
    head = ["agent", "scored", "resolved", "resolved [95%], SE", "accepted", "accepted [95%], SE"]
    return (
        _table("resolved", [*head, "errors (apart)", "resolved, not accepted"], rows)
        + "<h3>Resolved but not accepted, and the checks that stopped them</h3>"
        + _table("gaps", ["agent", "contract", "epoch", "stopped by"], gaps)
    )


def _paired(report: Report) -> str:
    rows = []
    for p in report.paired:
        c, d = p.comparison, p.comparison.difference
        rows.append(
            _cell(p.agent)
            + _cell(p.tasks, p.tasks)
            + _cell(p.dropped.text, p.dropped.total)
            + _cell(difference_text(d), d.estimate)
            + _cell("n/a" if d.se is None else f"{100 * d.se:.1f} pp", d.se)
            + _cell(f"{c.only_a}/{c.only_b}")
            + _cell(f"{c.p_value:.3g}", c.p_value)
        )
    methods = dict.fromkeys(
        f"{p.comparison.difference.method}; p: {p.comparison.method}" for p in report.paired
    )
    head = ["agent", "tasks", "dropped (why)", "difference [95%]", "SE", "better/worse", "p"]
    return (
        f"<h2>Paired comparison against the baseline {escape(report.baseline)}</h2>"
        + "<p class=note>Agent minus baseline, per-task mean over the tasks both scored. "
        + escape(" / ".join(methods))
        + ".</p>"
        + _table("paired", head, rows)
    )


def _judgements(report: Report) -> str:
    mark = {True: "yes", False: "no", None: "cannot tell"}
    autonomy = [
        _cell(a.cohort)
        + _cell(a.agent)
        + _cell(a.verdict)
        + _cell(", ".join(f"({c})" for c in a.decided_by))
        + "<td>"
        + "<br>".join(escape(f"({c.clause}) {mark[c.holds]}: {c.says}") for c in a.clauses)
        + "</td>"
        + _cell(a.beside)
        for a in report.autonomy
    ]
    gates = [
        _cell(g.cohort)
        + _cell(g.agent)
        + _cell(g.gate)
        + _cell(f"{g.failed_units}/{g.passed_units}", g.failed_units)
        + _cell(f"{count(g.when_failed.estimate * g.when_failed.tasks)}/{g.when_failed.tasks}")
        + _cell(f"{count(g.when_passed.estimate * g.when_passed.tasks)}/{g.when_passed.tasks}")
        + _cell(
            "n/a"
            if g.difference is None
            else f"{points(g.difference.estimate)} >= {points(g.difference.low)}",
            None if g.difference is None else g.difference.estimate,
        )
        + _cell("n/a" if g.p_value is None else f"{g.p_value:.3g}", g.p_value)
        + _cell("n/a" if g.p_holm is None else f"{g.p_holm:.3g}", g.p_holm)
        + _cell(g.verdict)
        for g in report.gates
    ]
    gate_head = ["cohort", "agent", "gate", "units failed/passed"]
    gate_head += ["sentinel failures when the gate failed", "when it passed"]
    gate_head += ["difference (one-sided 95% bound)", "p (one-sided)", "p (Holm)"]
    return (
        _paired(report)
        + "<h2>Autonomy by cohort</h2>"
        + f"<p class=note>{escape(report.policy_line)}</p>"
        + f"<p class=note>Rule: {escape(report.autonomy_rule)}</p>"
        + _table(
            "autonomy",
            ["cohort", "agent", "verdict", "decided by", "clauses", "beside (cost, time)"],
            autonomy,
        )
        + "<h2>Gate informativeness</h2>"
        + f"<p class=note>Rule: {escape(report.informativeness_rule)}</p>"
        + _table("gates", [*gate_head, "informative"], gates)
    )


def _links(row: AttemptRow, page_dir: Path) -> str:
    folder = Path(row.run).resolve() / row.evidence
    files = sorted((folder / "receipts").glob("*.json")) if (folder / "receipts").is_dir() else []
    patch = folder / "patch.diff"
    files += [patch] if patch.is_file() else []
    files += [folder / "decision.json"] if (folder / "decision.json").is_file() else []
    return " ".join(
        f'<a href="{escape(Path(os.path.relpath(f, page_dir)).as_posix())}">'
        f"{escape(f.name.removesuffix('.intoto.json'))}</a>"
        for f in files
    )


def _attempts(report: Report, page_dir: Path) -> str:
    rows = [
        _cell(r.contract)
        + _cell(r.agent)
        + _cell(r.epoch)
        + _cell(r.cohort)
        + _cell(r.outcome, cls=r.outcome.replace(" ", "-"))
        + _cell({True: "yes", False: "no", None: "-"}[r.resolved])
        + _cell(", ".join((*r.failed, *r.errored)) + (f" ({r.error_kind})" if r.error_kind else ""))
        + _cell(r.sentinel)
        + f"<td>{_links(r, page_dir)}</td>"
        for r in report.attempts
    ]
    head = ["contract", "agent", "epoch", "cohort", "outcome", "resolved", "why", "sentinel"]
    return _table("attempts", [*head, "evidence"], rows)


def render_html(report: Report, page_dir: Path) -> str:
    """Return the whole page; links are relative to ``page_dir``, where the page will live."""
    partial = (
        f'<p class="partial" id="partial">Partial report: {escape(report.partial_note)}</p>'
        if report.partial
        else ""
    )
    if report.profile_note:
        partial += (
            '<p class="partial" id="profile-versions">Profile versions mixed: '
            f"{escape(report.profile_note)}</p>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>repogate report</title>"
        f"<style>{_CSS}</style></head><body><h1>repogate report</h1>{partial}"
        f"{_headline(report)}"
        f"<h2>{RUNS_HEADING}</h2>{_runs(report)}"
        f"<h2>Hard-gate acceptance by agent and cohort{f' ({escape(report.by)})' if report.by else ''}</h2>"
        f"{cohort_chart(report)}{_acceptance(report)}"
        f"<h2>Stage funnel</h2>{funnel_chart(report)}{_funnel(report)}"
        f"<h2>Resolved (SWE-bench) vs accepted</h2>{resolved_chart(report)}{_resolved(report)}"
        f"{differs.html_section(report.differs, page_dir)}"
        f"{_small_tables(report)}{_judgements(report)}"
        f"<h2>Attempts</h2>{_attempts(report, page_dir)}</body></html>\n"
    )


def write_html(report: Report, path: Path) -> None:
    """Write the page to ``path`` (its folder is created).

    Raises:
        UserInputError: ``path`` cannot be written (names the OS error).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = render_html(report, path.parent.resolve())
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserInputError(
            f"cannot write --html {path} ({exc.strerror})", "give a writable file path"
        ) from None
