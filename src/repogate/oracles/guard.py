"""The harness's side of the guard plugin: load it into a test session, read what it saw.

Every test run (:func:`repogate.oracles.pytest_runner.run_tests`) loads
:mod:`repogate.oracles._guard_plugin`, copied as ``repogate_guard.py`` into a harness-owned,
read-only folder on PYTHONPATH, with ``-p repogate_guard``. It writes one record per pytest
process into a folder of the run's evidence the sandbox may write. A run is *tampered* when a
record names a change to pytest's test-running machinery, when a record was written by another
file than the harness's copy (a shadowing module), when the folder holds more records than
test sessions write (a flood that would push the real one out of reach), or when the run
produced a report but no record says the session finished (the guard was unregistered or the process left early). The
outcomes of a tampered run are never trusted (the run is an ``error`` with no outcomes), and
gate V fails ``harness_untampered`` naming the change.

The guard runs in the process the candidate's code runs in: it raises the bar for changing the
verdict from library code; it is no security boundary (see ``docs/security.md``).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from repogate._files import PlantedLinkError, read_bytes_nofollow, write_bytes_nofollow
from repogate.oracles.graded_reads import TracedReads, merge_records

MODULE = "repogate_guard"
"""The guard's module name, as ``-p`` loads it."""
BOOT = "repogate_boot.py"
"""The bootstrap that starts ``python -m pytest`` sessions, beside the guard (its key's first reader)."""
READS = "repogate_reads.py"
"""The read trace the guard imports when asked to (:mod:`repogate.oracles._guard_reads`)."""
ORACLES = "repogate_oracles.json"
"""The graded tree's oracle files as the harness wrote them (:func:`oracle_files`), beside the guard."""
_SOURCE = Path(__file__).with_name("_guard_plugin.py")
_BOOT_SOURCE = Path(__file__).with_name("_guard_boot.py")
_READS_SOURCE = Path(__file__).with_name("_guard_reads.py")
_RECORD = re.compile(r"guard-\d+\.json")
_MAX_RECORD_BYTES = 256 * 1024
_MAX_RECORDS = 64
_ORACLE_FOLDERS = frozenset({"tests", "test", "testing"})
_MAX_ORACLE_BYTES = 4 * 1024 * 1024
RUNNER_UNDER_TEST = "REPOGATE_RUNNER_UNDER_TEST"
"""The variable that tells the guard and its bootstrap the checkout's ``pytest``, ``_pytest`` and
``py`` are the runner under test (``[oracles] runner_under_test``): set by the harness in the
test sessions' sandbox (:func:`runner_variables`), never by the candidate's code (which runs after
both read it)."""


def runner_variables(runner_under_test: bool) -> dict[str, str]:
    """The test sessions' variables for the contract's ``runner_under_test`` (empty when False)."""
    return {RUNNER_UNDER_TEST: "1"} if runner_under_test else {}


MAX_CHANGES = 20
"""Changes kept per run (the rest are counted)."""


@dataclass(frozen=True)
class Guard:
    """The guard's folders for one run.

    Attributes:
        plugin_dir: holds ``repogate_guard.py`` (read-only in the sandbox, on PYTHONPATH).
        out_dir: where the guard writes its records (writable in the sandbox).
    """

    plugin_dir: Path
    out_dir: Path
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    @property
    def module_path(self) -> Path:
        """The guard's file, as the records must name it."""
        return self.plugin_dir / f"{MODULE}.py"

    @property
    def boot_path(self) -> Path:
        """The bootstrap (:mod:`repogate.oracles._guard_boot`), in the read-only plugin folder."""
        return self.plugin_dir / BOOT

    def env(self, *, trace_reads: bool = False) -> dict[str, str]:
        """The variables that switch the guard on (and its read trace, when ``trace_reads``)."""
        traced = {"REPOGATE_GUARD_READS": "1"} if trace_reads else {}
        return {"REPOGATE_GUARD_DIR": str(self.out_dir), **traced}

    @contextlib.contextmanager
    def key_pipe(self) -> Iterator[tuple[int, dict[str, str]]]:
        """A pipe holding :attr:`key`, for the test command's process alone.

        Yields ``(descriptor, variables)``: pass the descriptor to the command (``pass_fds``)
        and add the variables (``REPOGATE_GUARD_KEY_FD``); the guard reads the key and closes
        the descriptor at load, before the candidate's code runs. Closed here afterwards.
        """
        reader, writer = os.pipe()
        try:
            try:
                os.write(writer, self.key)
            finally:  # closed once: a second close could hit a descriptor another thread opened
                os.close(writer)
            yield reader, {"REPOGATE_GUARD_KEY_FD": str(reader)}
        finally:
            os.close(reader)

    def signed(self, record: dict[str, object]) -> bool:
        """True when ``record`` carries this run's signature (the guard wrote it, with the key)."""
        mac = record.get("mac")
        unsigned = {k: v for k, v in record.items() if k != "mac"}
        data = json.dumps(unsigned, sort_keys=True, separators=(",", ":")).encode()
        expected = hmac.new(self.key, data, hashlib.sha256).hexdigest()
        return isinstance(mac, str) and hmac.compare_digest(mac, expected)


def oracle_files(workdir: Path) -> dict[str, tuple[str, int, int]]:
    """Return the Python files the guard may trust, as they are now.

    Taken from the graded tree before its tests run: every regular ``conftest.py`` and every
    regular ``.py`` file in a ``tests``/``test``/``testing`` folder (the guard's own rule then
    leaves test modules out). Hidden folders, ``__pycache__`` and virtual environments (a
    ``pyvenv.cfg``) are skipped; a link is never followed nor listed, nor a file over 4 MiB.
    The guard trusts code from the checkout only when its file is listed here and still holds
    these bytes in the same inode, never written since (its change time, which no unprivileged
    process can set back): a file the candidate's code writes during the run, even one it
    restores afterwards, is the candidate's.

    Args:
        workdir: the checkout as graded (hidden tests applied).

    Returns:
        ``{relative path: (sha256, inode, change time in ns)}``: paths relative to ``workdir``'s
        real path, joined with ``os.sep``; hex SHA-256 digests.
    """
    root = Path(os.path.realpath(workdir))
    found: dict[str, tuple[str, int, int]] = {}
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        dirs[:] = [
            d
            for d in dirs
            if not d.startswith(".")
            and d != "__pycache__"
            and not (here / d / "pyvenv.cfg").exists()
        ]
        relative = here.relative_to(root)
        in_tests = bool(_ORACLE_FOLDERS.intersection(relative.parts))
        for name in names:
            if not (name == "conftest.py" or (in_tests and name.endswith(".py"))):
                continue
            try:
                data = read_bytes_nofollow(root, relative / name, _MAX_ORACLE_BYTES)
            except (OSError, PlantedLinkError):  # a link, a FIFO, too large: never trusted
                continue
            if data is not None:
                info = (here / name).lstat()
                found[str(relative / name)] = (
                    hashlib.sha256(data).hexdigest(),
                    info.st_ino,
                    info.st_ctime_ns,
                )
    return found


def prepare(report_dir: Path, workdir: Path) -> Guard:
    """Write the guard, its bootstrap and ``workdir``'s oracle files into ``report_dir/guard-plugin``.

    Also empties ``report_dir/guard``. The oracle files (:func:`oracle_files`) are taken now,
    before the test command starts.

    Args:
        report_dir: the run's harness-owned report folder (outside the checkout).
        workdir: the checkout about to be tested.
    """
    guard = Guard(report_dir / "guard-plugin", report_dir / "guard")
    oracles = json.dumps({"files": oracle_files(workdir)}, sort_keys=True).encode()
    for name, data in (
        (f"{MODULE}.py", _SOURCE.read_bytes()),
        (BOOT, _BOOT_SOURCE.read_bytes()),
        (READS, _READS_SOURCE.read_bytes()),
        (ORACLES, oracles),
    ):
        write_bytes_nofollow(report_dir, f"guard-plugin/{name}", data, make_parents=True)
    shutil.rmtree(guard.out_dir, ignore_errors=True)
    guard.out_dir.mkdir()
    return guard


def _records(guard: Guard) -> tuple[list[dict[str, object]], list[str]]:
    records: list[dict[str, object]] = []
    problems: list[str] = []
    try:
        names = sorted(e.name for e in os.scandir(guard.out_dir) if _RECORD.fullmatch(e.name))
    except OSError as exc:
        return [], [f"the guard's folder cannot be read ({exc.strerror})"]
    if len(names) > _MAX_RECORDS:  # a flood could push the session's own record out of reach
        problems.append(
            f"the guard's folder holds {len(names)} guard records, more than the test sessions "
            f"of one run write ({_MAX_RECORDS} at most): something else wrote there"
        )
    for name in names[:_MAX_RECORDS]:
        try:
            data = read_bytes_nofollow(guard.out_dir, name, _MAX_RECORD_BYTES)
            record = json.loads(data or b"null")
        except (OSError, PlantedLinkError, ValueError, RecursionError):  # nesting: tampering
            problems.append(f"the guard's record {name} cannot be read")
            continue
        if isinstance(record, dict):
            records.append(record)
        else:
            problems.append(f"the guard's record {name} is not a record")
    return records, problems


def _finished_records(guard: Guard) -> list[dict[str, object]]:
    """The records the harness's guard signed with the run's key and saw the session finish."""
    expected = os.path.realpath(guard.module_path)
    return [
        r
        for r in _records(guard)[0]
        if r.get("finished") is True and r.get("module") == expected and guard.signed(r)
    ]


def traced_reads(guard: Guard) -> TracedReads | None:
    """Return what the run's read trace saw (:mod:`repogate.oracles.graded_reads`), or None.

    Only signed records of a finished session count; None when none carries a trace.
    """
    return merge_records(list(_finished_records(guard)))


def internal_errors(guard: Guard) -> tuple[str, ...]:
    """Return, per pytest internal error of the session, the test id under way when it struck.

    An internal error outside any test (collection, the session's own hooks) is ``""``. Only
    signed records of a finished session count (a candidate's code cannot add an entry); at most
    ten entries per record. Empty when pytest met no internal error.
    """
    found: list[str] = []
    for record in _finished_records(guard):
        entries = record.get("internal_errors")
        if isinstance(entries, list):
            found += [e if isinstance(e, str) else "" for e in entries]
    return tuple(found)


def interrupted(guard: Guard) -> str:
    """Return how pytest's session was cut short (``KeyboardInterrupt``, ``Exit``), or ``""``.

    pytest calls ``pytest_keyboard_interrupt`` for both, and then writes the report of what ran
    so far as if the session had finished (``pytest.exit(returncode=0)`` even exits 0); only
    signed records of a finished session count.
    """
    for record in _finished_records(guard):
        value = record.get("interrupted")
        if isinstance(value, str) and value:
            return value
    return ""


def findings(guard: Guard, reported: bool, passed: int = 0) -> tuple[str, ...]:
    """Return what the guard saw changed in the run, empty when nothing was.

    Only a record signed with the run's key (:meth:`Guard.signed`: the guard in the test
    command's own process wrote it) can say the session finished; any record's changes count.

    Args:
        guard: the run's guard folders.
        reported: the run wrote a test report (so its session must have finished).
        passed: how many tests the report lists as passed; more than the session's calls that
            passed (the signed record counts them) is a report pytest did not write.
    """
    records, found = _records(guard)
    expected = os.path.realpath(guard.module_path)
    for record in records:
        if record.get("module") != expected:
            found.append(
                f"the guard record was written by {record.get('module')!r}, not the harness's guard"
            )
        changes = record.get("changes")
        if isinstance(changes, list):
            found += [str(c) for c in changes]
    done = _finished_records(guard)
    if reported and not done:
        found.append(
            "the harness's guard saw no session finish (unregistered, shadowed, the process left "
            "early, or a record it did not sign)"
        )
    counts = [r.get("passed_calls") for r in done]
    ran = max((c for c in counts if isinstance(c, int)), default=0)
    if done and passed > ran:
        found.append(
            f"the report lists {passed} passed tests, but the session's calls passed for {ran}: "
            "pytest did not write that report"
        )
    unique = list(dict.fromkeys(found))
    if len(unique) > MAX_CHANGES:
        unique = [*unique[:MAX_CHANGES], f"and {len(unique) - MAX_CHANGES} more"]
    return tuple(unique)
