"""Run the contract's pytest command in the sandbox and read its JUnit report, never its output.

The command is the contract's ``test_command`` (a string such as ``python -m pytest``, split like
a shell would split it, but run without one) with these arguments appended:

- ``-p no:cacheprovider`` (unless given), ``PYTHONDONTWRITEBYTECODE=1`` and Hypothesis's example
  database moved to ``<report_dir>/hypothesis``: nothing is written into the checkout or the
  cached environment by pytest, Python or Hypothesis (a test that writes files itself still can);
- ``-o junit_family=xunit1 --junitxml=<report_dir>/junit.xml``: the structured report, in a
  harness-owned folder outside the checkout. Outcomes come only from that file, so text a patch
  prints (``PASSED``) changes nothing;
- ``-p repogate_guard``: the harness's guard (:mod:`repogate.oracles.guard`), which notices the
  candidate's code changing pytest's test-running machinery; a run it saw changed is ``error``
  with no outcomes and names the change in ``tampering``;
- ``--continue-on-collection-errors``: a file that fails to import (a hidden test importing a name
  only the fix adds, a plugin the environment lacks) is reported as an ``error`` under its path,
  and every other file still runs; without it pytest stops the whole session there;
- the selection: the *files* holding the expected ids, not the ids. pytest splits a node-id
  argument on every ``::``, even inside a parameter id (``test_p[x::y]`` cannot be selected), ids
  that embed run-varying values cannot be selected at all, and thousands of ids overflow the
  command line. SWE-bench runs whole test files for the same reasons; the grader then picks the
  expected ids out of the report. Files that do not exist in the checkout are left out (their ids
  are then missing, and grading reports them), so one bad id does not sink the run.

``python`` resolves to the environment's interpreter: the environment's ``bin`` folder is first on
PATH. A run whose report is missing, unreadable, or lists no test at all, a run stopped at its
timeout, and pytest's own internal or usage errors (exit 3, 4) and "no tests collected" (exit 5) are
``status="error"``: never a pass. Collection errors are data: the report lists the file as
``error``.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from repogate import sandbox
from repogate._counted import listed
from repogate._files import write_bytes_nofollow
from repogate._logs import cause_line, keep_log
from repogate._model import FrozenModel, SchemaVersion
from repogate._toolchain import SYSTEM_PATH
from repogate.environments import Environment
from repogate.oracles import guard as guard_plugin
from repogate.oracles import services
from repogate.oracles._channel import ReportChannel
from repogate.oracles.graded_reads import TracedReads
from repogate.oracles.imports import shadowing
from repogate.oracles.junit import (
    INTERNAL_ERROR_ID,
    MAX_REPORT_BYTES,
    ReportError,
    TestOutcome,
    parse_junit_bytes,
)
from repogate.oracles.pytest_config import ConfigError, choose_config

REPORT_NAME = "junit.xml"
TAIL_CHARS = 4000
OUTPUT_NAME = "output.log"
"""The test command's whole captured output, kept beside its report."""
_INTERNAL_ERROR = 3  # pytest's ExitCode.INTERNAL_ERROR
_PYTEST_ERROR_EXITS = {
    2: "pytest was interrupted",
    _INTERNAL_ERROR: "pytest internal error",
    4: "pytest usage error",
    5: "no tests collected",
}


class ExecSummary(FrozenModel):
    """What the test command did, kept short.

    Attributes:
        returncode: pytest's exit code (-9 when stopped at the timeout).
        duration_s: wall seconds.
        timed_out: stopped at the policy's timeout.
        truncated_bytes: output bytes dropped past the sandbox's cap.
        stdout_tail: the last ``TAIL_CHARS`` characters of stdout (for people; never graded).
        stderr_tail: the same of stderr.
        isolation: the isolation in force.
    """

    returncode: int
    duration_s: float
    timed_out: bool
    truncated_bytes: int
    stdout_tail: str
    stderr_tail: str
    isolation: sandbox.Isolation


class TestRun(FrozenModel):
    """One run of the test command, as data.

    Attributes:
        status: ``ok`` when the report was read and lists at least one test; ``error`` otherwise.
        reason: why ``error`` (empty when ``ok``).
        outcomes: node id -> outcome, from the report only.
        collected: how many distinct ids the report lists.
        command: the command as run (before the sandbox's wrapper).
        report_path: the report file (None when none was written).
        report_sha256: sha256 (hex) of the report's bytes, taken right after the run.
        execution: the command's exit code, time and output tails.
        tampering: what the harness's guard saw the candidate's code change in pytest's
            test-running machinery (empty when nothing); a run with any is ``error``.
        internal_error: said when pytest's internal error ended the session while a test ran
            (:func:`stopped_in_test`): that test is ``error``, the tests after it did not run,
            and the run is ``ok``; empty otherwise.
        services: the environment's services started for this run (``httpbin ready after
            0.41 s``; a TLS one adds ``TLS on 127.0.0.1:8765, harness CA sha256:...`` and how
            the tests trust it); a service that did not start makes the run ``error`` (the
            environment's).
        reads: what the session read from the checkout, when traced (``trace_reads``).
    """

    __test__ = False

    schema_version: SchemaVersion = 1
    status: Literal["ok", "error"]
    reason: str = ""
    outcomes: dict[str, TestOutcome]
    collected: int
    command: tuple[str, ...]
    report_path: Path | None
    report_sha256: str | None
    execution: ExecSummary
    tampering: tuple[str, ...] = ()
    internal_error: str = ""
    services: tuple[str, ...] = ()
    reads: TracedReads | None = None


def stopped_in_test(returncode: int, internal_errors: Sequence[str]) -> tuple[str, ...]:
    """Return the tests whose run pytest's internal error ended, or ``()`` when that is not so.

    pytest exits 3 (``INTERNAL_ERROR``) when an exception escapes its own machinery. When the
    harness's guard saw each such error strike while a named test ran (for example pytest's
    ``saferepr`` failing on the test's own object, SWE-bench Lite pytest-dev__pytest-7168 at its
    base, or a project's report hook failing), those tests are the run's errors: their JUnit
    entries show only their setup, and the tests after them never ran. An internal error
    outside any test (``""``), or none, leaves the whole run untrusted: ``()``.

    Args:
        returncode: pytest's exit code.
        internal_errors: :func:`repogate.oracles.guard.internal_errors` of the run.
    """
    if returncode != _INTERNAL_ERROR or not internal_errors or not all(internal_errors):
        return ()
    return tuple(dict.fromkeys(internal_errors))


def internal_error_note(crashed: Sequence[str]) -> str:
    """Return the one line a run keeps about tests pytest's internal error ended (``crashed``)."""
    return (
        f"pytest stopped with an internal error during {listed(list(crashed), 3)} (counted as "
        "error); the tests after it did not run"
    )


def select_files(test_ids: Sequence[str], workdir: Path) -> list[str]:
    """Return the test files that hold ``test_ids`` and exist inside ``workdir``, sorted.

    Args:
        test_ids: pytest node ids (``path::name``); a bare path selects that file.
        workdir: the checkout; a path that leaves it, or does not exist in it, is left out.
    """
    base = workdir.resolve()
    files: set[str] = set()
    for path in {test_id.split("::", 1)[0] for test_id in test_ids}:
        resolved = (base / path).resolve()
        if path and resolved.is_relative_to(base) and resolved.exists():
            files.add(path)
    return sorted(files)


def _variables(env: Environment | Path, workdir: Path) -> dict[str, str]:
    if not isinstance(env, Path):
        return env.variables(workdir)
    bin_dir = env.parent
    return {
        "VIRTUAL_ENV": str(bin_dir.parent),
        "PATH": f"{bin_dir}{os.pathsep}{SYSTEM_PATH}",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _command(
    test_command: str,
    report: Path,
    files: Sequence[str],
    workdir: Path,
    boot: Path,
    config: str | None,
) -> list[str]:
    """The test command plus the harness's arguments.

    ``--rootdir`` pins pytest to the checkout and ``-c`` to ``config``, the configuration file
    at its top (:func:`repogate.oracles.pytest_config.choose_config`; ``/dev/null`` when it has
    none), so pytest never reads a configuration from a folder above the checkout (the
    harness's own) nor one a patch adds beside the tests (``tests/pytest.ini`` switching on a
    plugin that forges reports). ``python -m pytest`` is started through the
    guard's bootstrap ``boot`` (:mod:`repogate.oracles._guard_boot`), which takes the guard's key
    before anything of the checkout can be imported, then runs pytest as ``-m`` does.
    """
    argv = shlex.split(test_command)
    if not argv:
        raise ValueError("it is empty")
    if argv[1:3] == ["-m", "pytest"] and Path(argv[0]).name.startswith("python"):
        argv = [argv[0], str(boot), *argv[3:]]
    if "no:cacheprovider" not in argv:
        argv += ["-p", "no:cacheprovider"]
    argv += ["-p", guard_plugin.MODULE]
    argv += [f"--rootdir={workdir}", "-c", str(workdir / config) if config else os.devnull]
    if "--continue-on-collection-errors" not in argv:
        argv.append("--continue-on-collection-errors")
    return [*argv, "-o", "junit_family=xunit1", f"--junitxml={report}", *files]


def _summary(result: sandbox.ExecResult) -> ExecSummary:
    return ExecSummary(
        returncode=result.returncode,
        duration_s=result.duration_s,
        timed_out=result.timed_out,
        truncated_bytes=result.truncated_bytes,
        stdout_tail=result.stdout[-TAIL_CHARS:],
        stderr_tail=result.stderr[-TAIL_CHARS:],
        isolation=result.isolation,
    )


def _read(
    result: sandbox.ExecResult, data: bytes, report: Path, workdir: Path, timeout_s: float
) -> tuple[str, dict[str, TestOutcome], str | None]:
    """Return (reason or "", outcomes, report sha256) for a finished run and its report bytes."""
    if result.timed_out:
        return f"the test command timed out after {timeout_s:g} s", {}, None
    if not data:
        return f"no test report was written (exit {result.returncode})", {}, None
    digest = hashlib.sha256(data).hexdigest()
    try:
        outcomes = parse_junit_bytes(data, report, workdir)
    except ReportError as exc:
        return str(exc), {}, digest
    if result.returncode in _PYTEST_ERROR_EXITS:
        return (
            f"{_PYTEST_ERROR_EXITS[result.returncode]} (exit {result.returncode})",
            outcomes,
            digest,
        )
    if not outcomes:
        return "no tests collected: the report lists no test", outcomes, digest
    failing = any(o in ("failed", "error") for o in outcomes.values())
    if result.returncode in (0, 1) and failing != (result.returncode == 1):
        why = f"pytest exited {result.returncode} but its report lists {'a' if failing else 'no'} failure"
        return f"{why}: the report cannot be trusted", outcomes, digest
    return "", outcomes, digest


def run_tests(
    env: Environment | Path,
    workdir: Path,
    test_command: str,
    test_ids: Sequence[str] | None,
    report_dir: Path,
    policy: sandbox.SandboxPolicy,
    *,
    tool_path: Path | None = None,
    trace_reads: bool = False,
) -> TestRun:
    """Run the test command on ``workdir`` in ``env`` and read the outcomes from its JUnit report.

    Args:
        env: the built environment, or a Python interpreter in a venv's ``bin`` folder.
        workdir: the checkout to test (the candidate with hidden tests applied, or the base).
        test_command: the contract's command, e.g. ``python -m pytest -p no:cacheprovider``.
        test_ids: the ids that matter (their files are run); None or empty runs the whole suite
            as the project's configuration selects it.
        report_dir: a harness-owned folder outside ``workdir`` (created; a stale report in it is
            removed before the run).
        policy: the sandbox policy (timeout, output cap, network, extra env); the environment's
            variables are added to its ``env``.
        tool_path: a harness-owned folder appended to PYTHONPATH (the regression run's plugin
            and coverage, :mod:`repogate.oracles.base_suite`), after the checkout's roots (the
            environment's own coverage keeps its place); a checkout holding a top-level module
            of a name it provides is refused (``error``): it would be loaded in its place.
        trace_reads: record which checkout files test code and product code open (gate E's
            trace on the base or the reference, :mod:`repogate.oracles.graded_reads`).

    Returns:
        The run as data; ``status="error"`` with a reason when no trustworthy outcome exists.

    Raises:
        ValueError: ``report_dir`` lies inside ``workdir`` (the patch could forge the report).
    """
    report_dir = report_dir.resolve()
    if report_dir.is_relative_to(workdir.resolve()):
        raise ValueError(f"report folder {report_dir} lies inside the checkout {workdir}")
    report_dir.mkdir(parents=True, exist_ok=True)
    report = report_dir / REPORT_NAME
    report.unlink(missing_ok=True)
    hypothesis = report_dir / "hypothesis"  # the one folder of report_dir the tests may write
    hypothesis.mkdir(exist_ok=True)
    guard = guard_plugin.prepare(report_dir, workdir)
    files = select_files(test_ids, workdir) if test_ids else []
    try:
        config = choose_config(workdir)
    except ConfigError as exc:
        return _error_run((test_command,), f"the pytest configuration: {exc}", policy)
    try:
        argv = _command(
            test_command, report_dir / "junit.fifo", files, workdir, guard.boot_path, config
        )
    except ValueError as exc:
        return _error_run((test_command,), f"the test command cannot be split ({exc})", policy)
    needs = () if isinstance(env, Path) else env.services
    tls = services.prepare_tls(report_dir, needs, workdir)
    granted: dict[str, str] = {
        **policy.env,
        **services.variables(needs, tls),
        **_variables(env, workdir),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(report_dir / "hypothesis"),
        **guard.env(trace_reads=trace_reads),
    }
    tools = (tool_path,) if tool_path is not None else ()
    for folder in (*tools, guard.plugin_dir):
        clash = shadowing(workdir, folder)
        if clash:
            reason = (
                f"the checkout holds top-level module(s) {', '.join(map(repr, clash))} named like "
                "the harness's own test tools (its pytest plugins, coverage), which would be loaded "
                "in their place; rename them"
            )
            return _error_run(argv, reason, policy)
    roots = [p for p in granted.get("PYTHONPATH", "").split(os.pathsep) if p]
    granted["PYTHONPATH"] = os.pathsep.join([*roots, *map(str, tools), str(guard.plugin_dir)])
    if test_ids and not files:
        reason = f"none of the {len(test_ids)} selected test ids names a file in the checkout"
        return _error_run(argv, reason, policy)
    writable = (workdir, *(policy.writable or ()), hypothesis, guard.out_dir)
    launcher = services.prepare(report_dir) if needs else None
    with ReportChannel(report_dir, MAX_REPORT_BYTES) as channel:
        argv = _command(test_command, channel.path, files, workdir, guard.boot_path, config)
        # A FIFO is written through a read-only bind; the harness's tool folders are read-only too.
        readable = (*policy.readable, channel.path, *tools, guard.plugin_dir)
        readable += (launcher,) if launcher is not None else ()
        shown = {**policy.shown, **(tls.shown if tls is not None else {})}
        with guard.key_pipe() as (key_fd, key_env), services.status_pipe(needs, tls) as (fd, said):
            update = {"env": {**granted, **key_env}, "writable": writable, "readable": readable}
            grant = policy.model_copy(update={**update, "shown": shown})
            run_argv, fds = argv, [key_fd]
            if launcher is not None:
                run_argv = services.wrapped(argv, needs, launcher, fd, key_fd, tls)
                fds = [key_fd, fd]
            if isinstance(env, Path):
                result = sandbox.run(run_argv, workdir, grant, pass_fds=fds)
            else:  # the grant holds the environment's variables already: they stay as given
                result = env.run(run_argv, workdir, grant, pass_fds=fds)
        data, written = channel.collect()
    started = said[0]
    if started.failure:  # the environment's fault: no outcome of this run is trusted
        return _error_run(argv, started.failure, policy).model_copy(
            update={"services": tuple(started.started)}
        )
    if data:  # the harness's copy of what came through the channel; a link there is replaced
        write_bytes_nofollow(report_dir, REPORT_NAME, data[:MAX_REPORT_BYTES])
    reason, outcomes, digest = _read(result, data, report, workdir, policy.timeout_s)
    crashed = stopped_in_test(result.returncode, guard_plugin.internal_errors(guard))
    if crashed and outcomes and reason.startswith(_PYTEST_ERROR_EXITS[_INTERNAL_ERROR]):
        # the report lists the test under way without a failure (only its setup was reported),
        # or without a name (pytest 8), and the internal error as an entry of its own
        outcomes.pop(INTERNAL_ERROR_ID, None)
        reason, outcomes = "", {**outcomes, **dict.fromkeys(crashed, "error")}
    cut_short = guard_plugin.interrupted(guard)
    if cut_short and not reason:
        reason = (
            f"pytest's session was interrupted ({cut_short}: KeyboardInterrupt or pytest.exit), "
            "so its report holds what ran until then: no outcome of it is trusted"
        )
    if not reason and written > MAX_REPORT_BYTES:
        reason = f"the report is larger than {MAX_REPORT_BYTES} bytes"
    passed = sum(1 for o in outcomes.values() if o == "passed")
    tampering = guard_plugin.findings(guard, bool(data), passed)
    if tampering:  # the session's outcomes are never trusted
        reason, outcomes = f"the test runner was changed during the run: {'; '.join(tampering)}", {}
    log = keep_log(
        report_dir / OUTPUT_NAME,
        f"$ {shlex.join(argv)}\n## stdout\n{result.stdout}\n## stderr\n{result.stderr}",
    )
    if reason:
        cause = cause_line(f"{result.stdout}\n{result.stderr}")
        reason = f"{reason}{': ' + cause if cause else ''}; log: {log}"
    return TestRun(
        status="error" if reason else "ok",
        reason=reason,
        outcomes=outcomes,
        collected=len(outcomes),
        command=tuple(argv),
        report_path=report if data else None,
        report_sha256=digest,
        execution=_summary(result),
        tampering=tampering,
        internal_error=internal_error_note(crashed) if crashed and not reason else "",
        services=tuple(started.started),
        reads=guard_plugin.traced_reads(guard) if trace_reads else None,
    )


def _error_run(argv: Sequence[str], reason: str, policy: sandbox.SandboxPolicy) -> TestRun:
    not_run = ExecSummary(
        returncode=-1,
        duration_s=0.0,
        timed_out=False,
        truncated_bytes=0,
        stdout_tail="",
        stderr_tail="",
        isolation=sandbox.isolation(policy.network),
    )
    return TestRun(
        status="error",
        reason=reason,
        outcomes={},
        collected=0,
        command=tuple(argv),
        report_path=None,
        report_sha256=None,
        execution=not_run,
    )


MAX_SPLIT_SESSIONS = 16
"""Sessions :func:`run_isolating` may add at most, so a state where every file breaks pytest costs
a bounded number of runs (past it, the files of a failing group are reported as ``error`` together)."""


def run_isolating(
    run_once: Callable[[Sequence[str]], TestRun],
    files: Sequence[str],
    budget: int = MAX_SPLIT_SESSIONS,
) -> dict[str, TestOutcome]:
    """Run ``files`` in one session; when that session gives no usable report, run halves apart.

    ``--continue-on-collection-errors`` keeps one test file that fails to import from hiding the
    others, but a ``conftest.py`` that cannot be imported (an ``examples/`` conftest importing a
    package the environment lacks) aborts pytest before collection (exit 4) when a file under it
    is named on the command line, and then no file has a result. So the selection is split in
    halves, recursively, down to single files: a file alone that still gives no usable report is
    reported as ``error`` under its own path (the file failed to collect), and every other file
    keeps its results. ``k`` such files among ``n`` cost about ``2 k log2 n`` extra sessions, and
    never more than ``budget``; past it, each file of a group that still fails is reported as
    ``error``. A session stopped at its timeout is not split (that would multiply the wait):
    nothing is reported for it.

    Args:
        run_once: runs the given files once (a :func:`run_tests` call with the rest bound).
        files: the test files (or ids) to run.
        budget: extra sessions allowed for splitting.

    Returns:
        Node id -> outcome, merged over the sessions.
    """
    left = [budget]

    def run(group: Sequence[str]) -> dict[str, TestOutcome]:
        ran = run_once(group)
        if ran.status == "ok":
            return dict(ran.outcomes)
        if ran.execution.timed_out or not group:
            return {}
        if len(group) == 1 or left[0] < 2:
            return {f.split("::", 1)[0]: "error" for f in group}
        left[0] -= 2
        half = len(group) // 2
        return {**run(group[:half]), **run(group[half:])}

    return run(files)
