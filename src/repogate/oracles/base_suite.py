"""The base's whole suite: which tests pass there, and what each one executes (cached).

"Preserve previously passing behaviour" covers every test that passes at the base, not only the
PASS_TO_PASS ids a task set declares (SWE-bench builds those from the test files the fix's test
patch touches, so a neighbouring file's tests are never checked). This module records the base
once per base state and test setup, in one run of the whole suite (the project's own selection) at
the base with the hidden tests applied, under coverage with one dynamic context per test
(:mod:`._pytest_plugin`) and with the guard's read trace:

- its passing ids are the regression set; its per-test coverage is what
  :mod:`repogate.oracles.selection` picks the tests a candidate's change can affect from; its read
  trace records which data files test code and product code opened (what only tests read is their
  oracle);
- the ids that did not pass there (failed, error, skipped, xfailed: a test may fail or skip only
  under a tracer, checking ``sys.gettrace()`` or timing itself) run once more plainly, in one
  session of just those ids (split in halves when it gives no usable report, as a graded run is:
  naming a folder whose conftest fails aborts it); those that pass join the set as
  ``passing_only_plainly``, with no coverage (their partial contexts are dropped, so every
  candidate runs them), and the read trace of each session that gave a usable report is added to
  the record's.

When the tools are missing, or the coverage run gives no usable report (it broke, it timed out),
the whole suite runs plainly instead (as it did before one run did both), with no coverage and the
reason. The record lists the runs made (``runs``), with their times.

Limits: an id of the rerun that the plugin's filter cannot match (spelled differently from its
node id) does not run there, and stays out of the set; a test that passes only under a tracer is
in the set, and when it then fails on a candidate the regression step runs it alone at the base,
where it fails too and is left out (``failing_alone_at_base``).

Every run is in the same sandbox as every test run. ``coverage`` (the newest 7.x the
environment's Python takes; its SQLite data file is read by the harness's own copy, and a format
it cannot read is recorded as "no coverage") is installed by the harness's uv into a tool folder
beside the environment cache, with the plugin (:mod:`repogate.oracles.regress_tools`); the folder
goes on PYTHONPATH for these runs only, so the environment under test and its digest are
unchanged. When it cannot be installed or recorded, the record says why and every candidate runs
the whole base-passing set.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import coverage

from repogate import sandbox
from repogate._files import write_bytes_nofollow
from repogate._model import FrozenModel
from repogate.environments import Environment
from repogate.oracles.graded_reads import TracedReads
from repogate.oracles.junit import pytest4_id
from repogate.oracles.pytest_runner import TestRun, run_isolating, run_tests
from repogate.oracles.regress_tools import PLUGIN_MODULE, PLUGIN_SOURCE, read_coverage
from repogate.oracles.selection import CoverageMap

_COVERAGE_DATA = "coverage.sqlite"


SuiteRunKind = Literal["coverage", "plain", "plain-rerun"]
"""A run of the base-suite record: the whole suite under coverage, the whole suite plainly, or
the ids that did not pass under coverage, plainly."""


class SuiteRun(FrozenModel):
    """One test session the record made.

    Attributes:
        kind: which run.
        duration_s: its wall seconds.
        collected: how many ids its report lists.
        reason: why it gave no usable report (empty when it did).
    """

    kind: SuiteRunKind
    duration_s: float
    collected: int
    reason: str = ""


class BaseSuite(FrozenModel):
    """The base's whole-suite record.

    Attributes:
        schema_version: version of this record (2: one run under coverage, ``runs``).
        status: ``ok`` when the whole-suite run (under coverage, else plain) gave a trustworthy
            report; ``error`` otherwise (the regression set then cannot be known, and
            ``reason`` says why).
        reason: why ``error``.
        timed_out: the plain run reached its time budget (then ``error``).
        passing: ids that passed, sorted: in the whole-suite run, or in the plain rerun of those
            that did not pass under coverage (``passing_only_plainly``).
        passing_only_plainly: the ids of ``passing`` that passed only in the plain rerun, sorted;
            ``coverage`` holds no context of theirs, so every candidate runs them.
        outcomes_digest: sha256 of the whole-suite run's report.
        duration_s: wall seconds of every run made (``runs``).
        coverage: per-test coverage, or None (``coverage_reason`` says why).
        coverage_reason: why there is no coverage (empty when there is).
        reads: what the runs' test code and product code read from the checkout (the guard's
            read trace, :mod:`repogate.oracles.graded_reads`; the rerun's added to the
            whole-suite run's); None when not traced.
        runs: the runs made, in order: ``coverage`` (then ``plain-rerun``, one per session,
            when an id did not pass), or ``plain`` (after a ``coverage`` run without a usable report, or alone when
            there are no tools).
    """

    schema_version: int = 2
    status: str
    reason: str = ""
    timed_out: bool = False
    passing: tuple[str, ...]
    passing_only_plainly: tuple[str, ...] = ()
    outcomes_digest: str | None
    duration_s: float
    coverage: CoverageMap | None
    coverage_reason: str = ""
    reads: TracedReads | None = None
    runs: tuple[SuiteRun, ...] = ()


def _granting(
    policy: sandbox.SandboxPolicy,
    extra: Mapping[str, str],
    *,
    readable: tuple[Path, ...] = (),
    writable: tuple[Path, ...] = (),
) -> sandbox.SandboxPolicy:
    """``policy`` with ``extra`` variables and a harness file or folder granted to the tests.

    The evidence folder is never writable by the tests: a folder they must write (the coverage
    data) is a fresh one the harness made, and what they must read (the selection) is granted
    read-only, file by file.
    """
    return policy.model_copy(
        update={
            "env": {**policy.env, **extra},
            "readable": (*policy.readable, *readable),
            "writable": (*(policy.writable or ()), *writable),
        }
    )


def suite_command(test_command: str) -> str:
    """Return ``test_command`` going on past collection errors (one file's error hides nothing)."""
    return f"{test_command} --continue-on-collection-errors"


def plugin_command(test_command: str) -> str:
    """Return :func:`suite_command` loading the plugin (``-p repogate_regress``)."""
    return f"{suite_command(test_command)} -p {PLUGIN_MODULE}"


def graded_grant(
    test_command: str,
    hidden_files: Sequence[str],
    report_dir: Path,
    policy: sandbox.SandboxPolicy,
) -> tuple[str, sandbox.SandboxPolicy, Path]:
    """Set up a graded run to load the plugin, which tells whose xfail mark a non-strict XPASS has.

    The plugin alone (no coverage: nothing to install) is written into ``report_dir/tools``, a
    harness folder the tests may only read; ``REPOGATE_HIDDEN_TESTS`` lists ``hidden_files``.

    Args:
        test_command: the contract's test command.
        hidden_files: the hidden test files among the graded ones (checkout-relative paths).
        report_dir: a harness-owned folder outside the checkout (created).
        policy: the sandbox for the target's code.

    Returns:
        ``(command, policy, tool folder)`` for :func:`~repogate.oracles.pytest_runner.run_tests`.
    """
    tools = report_dir / "tools"
    report_dir.mkdir(parents=True, exist_ok=True)
    write_bytes_nofollow(
        report_dir, f"tools/{PLUGIN_MODULE}.py", PLUGIN_SOURCE.read_bytes(), make_parents=True
    )
    granted = _granting(policy, {"REPOGATE_HIDDEN_TESTS": "\n".join(hidden_files)})
    return plugin_command(test_command), granted, tools


def record_base_suite(
    env: Environment,
    tree: Path,
    test_command: str,
    report_dir: Path,
    policy: sandbox.SandboxPolicy,
    tools: Path | str,
) -> BaseSuite:
    """Run the whole suite at the base once under coverage, the ids that did not pass plainly.

    Args:
        env: the built environment.
        tree: the base with the hidden tests applied.
        test_command: the contract's test command.
        report_dir: a harness-owned folder outside ``tree`` (a folder per run in it).
        policy: the sandbox for the target's code.
        tools: the tool folder (:func:`repogate.oracles.regress_tools.tool_folder`), or why
            there is none.

    Returns:
        The record; ``status="error"`` when no whole-suite run gave a trustworthy report.
    """
    if isinstance(tools, str):
        return _plain_record(env, tree, test_command, report_dir, policy, tools)
    run, cover, why = coverage_run(
        env, tree, test_command, report_dir / "coverage", policy, tools, trace_reads=True
    )
    first = _made("coverage", run)
    if run.status != "ok":
        return _plain_record(env, tree, test_command, report_dir, policy, why, first)
    passed = {t for t, o in run.outcomes.items() if o == "passed"}
    others = sorted(set(run.outcomes) - passed)
    sessions: list[TestRun] = []

    def plainly_once(ids: Sequence[str]) -> TestRun:
        folder = report_dir / ("plain-rerun" + (f"-{len(sessions) + 1}" if sessions else ""))
        again = run_selected(env, tree, test_command, ids, folder, policy, tools, trace_reads=True)
        sessions.append(again)
        return again

    # naming a folder whose conftest fails (its error id) aborts a session: split, as graded runs do
    outcomes = run_isolating(plainly_once, others) if others else {}
    plainly = tuple(t for t in others if outcomes.get(t) == "passed")
    runs = (first, *(_made("plain-rerun", s) for s in sessions))
    reads = run.reads
    for again in (s for s in sessions if s.status == "ok"):
        # the rerun's tests' reads are part of the suite's: without them, no trace at all
        reads = None if reads is None or again.reads is None else reads.joined(again.reads)
    if cover is not None and plainly:  # a failed test's context is partial: no coverage at all
        dropped = set(plainly)
        kept = {t: f for t, f in cover.tests.items() if pytest4_id(t) not in dropped}
        cover = cover.model_copy(update={"tests": kept})
    return BaseSuite(
        status="ok",
        passing=tuple(sorted(passed.union(plainly))),
        passing_only_plainly=plainly,
        outcomes_digest=run.report_sha256,
        duration_s=sum(r.duration_s for r in runs),
        coverage=cover,
        coverage_reason=why,
        reads=reads,
        runs=runs,
    )


def _made(kind: SuiteRunKind, run: TestRun) -> SuiteRun:
    duration = run.execution.duration_s
    return SuiteRun(kind=kind, duration_s=duration, collected=run.collected, reason=run.reason)


def _plain_record(
    env: Environment,
    tree: Path,
    test_command: str,
    report_dir: Path,
    policy: sandbox.SandboxPolicy,
    no_coverage: str,
    *before: SuiteRun,
) -> BaseSuite:
    """Record the whole suite from one plain run (no coverage: ``no_coverage`` says why)."""
    command = suite_command(test_command)
    plain = run_tests(env, tree, command, None, report_dir / "plain", policy, trace_reads=True)
    runs = (*before, _made("plain", plain))
    if plain.status != "ok":
        return BaseSuite(
            status="error",
            reason=plain.reason,
            timed_out=plain.execution.timed_out,
            passing=(),
            outcomes_digest=plain.report_sha256,
            duration_s=sum(r.duration_s for r in runs),
            coverage=None,
            coverage_reason="the base suite did not run",
            runs=runs,
        )
    return BaseSuite(
        status="ok",
        passing=tuple(sorted(t for t, o in plain.outcomes.items() if o == "passed")),
        outcomes_digest=plain.report_sha256,
        duration_s=sum(r.duration_s for r in runs),
        coverage=None,
        coverage_reason=no_coverage,
        reads=plain.reads,
        runs=runs,
    )


def coverage_run(
    env: Environment,
    tree: Path,
    test_command: str,
    report_dir: Path,
    policy: sandbox.SandboxPolicy,
    tools: Path,
    *,
    trace_reads: bool = False,
) -> tuple[TestRun, CoverageMap | None, str]:
    """Run the whole suite under coverage, one context per test; read the coverage recorded.

    Returns:
        The run, its per-test coverage (None when the run gave no usable report or the data
        cannot be read) and why there is none (empty when there is).
    """
    data_dir = report_dir / "coverage-data"  # the one folder of the evidence the tests may write
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    data_file = data_dir / _COVERAGE_DATA
    granted = _granting(policy, {"REPOGATE_COVERAGE_FILE": str(data_file)}, writable=(data_dir,))
    command = plugin_command(test_command)
    run = run_tests(
        env, tree, command, None, report_dir, granted, tool_path=tools, trace_reads=trace_reads
    )
    if run.status != "ok":
        return run, None, f"the coverage run gave no usable report: {run.reason}"
    try:
        return run, read_coverage(data_file, tree), ""
    except (ValueError, coverage.CoverageException) as exc:
        return run, None, f"coverage could not be read: {exc}"


def run_selected(
    env: Environment,
    tree: Path,
    test_command: str,
    ids: Sequence[str],
    report_dir: Path,
    policy: sandbox.SandboxPolicy,
    tools: Path | None,
    *,
    trace_reads: bool = False,
) -> TestRun:
    """Run ``ids`` (their files, filtered to the ids by the plugin when ``tools`` is given)."""
    if tools is None:
        command = suite_command(test_command)
        return run_tests(env, tree, command, ids, report_dir, policy, trace_reads=trace_reads)
    granted = selecting(policy, ids, report_dir)
    return run_tests(
        env,
        tree,
        plugin_command(test_command),
        ids,
        report_dir,
        granted,
        tool_path=tools,
        trace_reads=trace_reads,
    )


def selecting(
    policy: sandbox.SandboxPolicy, lines: Sequence[str], report_dir: Path
) -> sandbox.SandboxPolicy:
    """``policy`` telling the harness's plugin to keep only the tests ``lines`` name.

    The lines (node ids, cut ids or file paths: ``_pytest_plugin.selected``) are written to
    ``report_dir/selected.txt``, granted to the tests read-only.
    """
    report_dir.mkdir(parents=True, exist_ok=True)
    listing = report_dir / "selected.txt"
    write_bytes_nofollow(report_dir, "selected.txt", "".join(f"{t}\n" for t in lines).encode())
    return _granting(policy, {"REPOGATE_SELECT": str(listing)}, readable=(listing,))
