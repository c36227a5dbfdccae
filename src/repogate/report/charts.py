"""Charts of a report as inline SVG text, drawn by matplotlib's SVG backend (no network, no files).

Each function returns one ``<svg>`` element, ready to paste into an HTML page. Figures are made
with :class:`matplotlib.figure.Figure` directly (never ``pyplot``), so no global state or display
backend is touched; text stays text (``svg.fonttype = none``) and ids are salted for repeatability.
"""

from __future__ import annotations

import io
import re
from contextlib import AbstractContextManager
from typing import Any

import matplotlib as mpl
from matplotlib.figure import Figure

from repogate.report.model import Report


def _rc() -> AbstractContextManager[Any]:
    return mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "repogate", "font.size": 9})


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    with _rc():
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return re.sub(r"<metadata>.*?</metadata>", "", text[text.index("<svg") :], flags=re.S)


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
STYLES = ("-", "--", "-.", ":")


def funnel_chart(report: Report) -> str:
    """Cumulative funnel per agent: one line per agent across the stages (percent of scored).

    Agents whose lines coincide stay visible: each has its own marker and dash, drawn larger for
    the earlier agents, and the legend sits beside the plot, never over it.
    """
    with _rc():
        fig = Figure(figsize=(8.5, 3.2))
        ax = fig.add_subplot()
        for i, funnel in enumerate(report.funnels):
            names = [s.stage for s in funnel.stages]
            ax.plot(
                names,
                [100 * s.cumulative.estimate for s in funnel.stages],
                marker=MARKERS[i % len(MARKERS)],
                linestyle=STYLES[i % len(STYLES)],
                markersize=max(10 - 2 * i, 4),
                markerfacecolor="none",
                label=funnel.agent,
            )
        ax.set_ylabel("cumulative % of scored attempts\n(per-task mean)")
        ax.set_ylim(-5, 105)
        ax.tick_params(axis="x", labelrotation=20)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return _svg(fig)


def cohort_chart(report: Report) -> str:
    """Acceptance with its 95% interval for every agent and cohort row, as error bars."""
    rows = report.acceptance
    with _rc():
        fig = Figure(figsize=(7.5, max(2.0, 0.22 * len(rows) + 0.8)))
        ax = fig.add_subplot()
        ys = list(range(len(rows)))[::-1]
        est = [100 * r.interval.estimate for r in rows]
        low = [100 * (r.interval.estimate - r.interval.low) for r in rows]
        high = [100 * (r.interval.high - r.interval.estimate) for r in rows]
        ax.errorbar(est, ys, xerr=[low, high], fmt="o", capsize=3)
        ax.set_yticks(ys, [f"{r.agent} · {r.cohort}" for r in rows])
        ax.set_xlim(-3, 103)
        ax.set_xlabel("hard-gate acceptance, % (95% interval)")
        return _svg(fig)


def resolved_chart(report: Report) -> str:
    """Resolved (SWE-bench) beside accepted, per agent, as percent of scored attempts."""
    rows = report.resolved
    with _rc():
        fig = Figure(figsize=(7.5, 3.0))
        ax = fig.add_subplot()
        xs = range(len(rows))
        ax.bar(
            [x - 0.2 for x in xs],
            [100 * r.resolved_rate.estimate for r in rows],
            0.4,
            label="resolved",
        )
        ax.bar(
            [x + 0.2 for x in xs],
            [100 * r.accepted_rate.estimate for r in rows],
            0.4,
            label="accepted",
        )
        ax.set_xticks(list(xs), [r.agent for r in rows])
        ax.tick_params(axis="x", labelrotation=20)
        ax.set_ylabel("% of scored attempts (per-task mean)")
        ax.legend(fontsize=7)
        return _svg(fig)
