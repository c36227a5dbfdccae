"""The report channel: a FIFO the test process writes its JUnit report into, read as it is written.

pytest writes the report at the end of the session, in the same process as the code under test.
A report on disk can be rewritten afterwards by that code (an ``atexit`` hook that strips the
failures). Through a FIFO the harness takes the bytes as they are written: a second document
written before or after pytest's own makes the report unreadable, and a FIFO replaced by a file
leaves the harness with no report at all; both are refused, never read as a pass.

The reader thread alone reads and closes the FIFO's reading end, and the head waits for it to end
on an event, never on an interrupted ``Thread.join``: on Python 3.11 a join that Ctrl-C interrupts
marks the thread stopped while it still runs (CPython gh-90882), so a second join would return at
once and the descriptor be closed under a thread still reading it (it then read whatever took that
number next).

The head wakes the reader through a pipe of its own when the command has ended, so collecting a
report costs no poll interval (it cost half of ``_POLL_S`` per test run on average, ~50 ms).
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from pathlib import Path

_CHUNK = 64 * 1024
_POLL_S = 0.1


class ReportChannel:
    """A FIFO at ``folder/junit.fifo``, drained by a thread while the test command runs.

    Use as a context manager around the run, then call :meth:`collect` once the command ended.

    Args:
        folder: a harness-owned folder (the test process may write there; it cannot rewrite
            what the harness has already read).
        cap: bytes kept at most; a larger report is refused by the reader of these bytes.
    """

    def __init__(self, folder: Path, cap: int) -> None:
        self.path = folder / "junit.fifo"
        self._cap = cap
        self._chunks: list[bytes] = []
        self._size = 0
        self._stop = threading.Event()
        self._ended = threading.Event()
        self._reader = -1
        self._writer = -1
        self._wake = (-1, -1)
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ReportChannel:
        self.path.unlink(missing_ok=True)
        os.mkfifo(self.path, 0o600)
        self._reader = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        # Our own writer keeps the FIFO open, so "no writer yet" is never read as the end.
        self._writer = os.open(self.path, os.O_WRONLY)
        self._wake = os.pipe()
        self._thread = threading.Thread(target=self._drain, name="report-channel", daemon=True)
        self._thread.start()
        return self

    def _take(self) -> bool:
        try:
            chunk = os.read(self._reader, _CHUNK)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        if self._size < self._cap:
            self._chunks.append(chunk[: self._cap - self._size])
        self._size += len(chunk)
        return True

    def _drain(self) -> None:
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([self._reader, self._wake[0]], [], [], _POLL_S)
                if self._reader in ready and not self._take():
                    return
            while self._take():  # what was written before the stop
                ready, _, _ = select.select([self._reader], [], [], 0)
                if not ready:
                    break
        finally:
            os.close(self._reader)
            os.close(self._wake[0])
            self._ended.set()

    def _finish(self) -> None:
        """Stop the reader and wait until it has closed its end (safe to call again)."""
        self._stop.set()
        if self._thread is None:  # never started: its ends are closed here instead
            for fd in (self._reader, self._wake[0]):
                if fd >= 0:
                    os.close(fd)
            self._wake = (-1, self._wake[1])
        else:
            if not self._ended.is_set():  # the reader's select returns now
                # it may close its end first, having ended meanwhile: then the write fails
                with contextlib.suppress(BrokenPipeError):
                    os.write(self._wake[1], b"x")
            self._ended.wait()
            self._thread.join()
        self._reader = -1

    def collect(self) -> tuple[bytes, int]:
        """Stop reading and return (the report bytes, the total size written)."""
        self._finish()
        return b"".join(self._chunks), self._size

    def __exit__(self, *exc_info: object) -> None:
        self._finish()
        if self._writer >= 0:
            os.close(self._writer)
            self._writer = -1
        if self._wake[1] >= 0:
            os.close(self._wake[1])
            self._wake = (-1, -1)
        self.path.unlink(missing_ok=True)
