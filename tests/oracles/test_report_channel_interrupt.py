"""Ctrl-C while the JUnit report channel is being collected: its reader thread ends first.

Python 3.11's ``Thread.join`` interrupted by ``KeyboardInterrupt`` marks the thread stopped while
it still runs (CPython gh-90882), so a second ``join`` returns at once. The channel then closed
the FIFO's descriptors under its still-reading thread, which read whatever took that descriptor
number next: seen for real as ``IsADirectoryError`` in thread ``report-channel`` on the stderr of
a ``repogate tasks mine`` stopped with Ctrl-C, above the one ``interrupted:`` line.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from repogate.oracles._channel import ReportChannel


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "report-channel"]


def test_ctrl_c_during_collect_leaves_no_reader_running(tmp_path: Path, own_sigint: None) -> None:
    main = threading.get_ident()
    # the reader waits up to 0.1 s in select(); the Ctrl-C lands while collect() waits for it
    ctrl_c = threading.Timer(0.02, signal.pthread_kill, (main, signal.SIGINT))
    with pytest.raises(KeyboardInterrupt), ReportChannel(tmp_path, 1 << 20) as channel:
        ctrl_c.start()
        channel.collect()
        ctrl_c.join()  # collect() ended before the Ctrl-C came: let it come here instead
    ctrl_c.join()
    assert _readers() == []  # the block ends only once its reader stopped reading
    assert not (tmp_path / "junit.fifo").exists()


def test_the_report_written_is_collected_whole(tmp_path: Path) -> None:
    with ReportChannel(tmp_path, 1 << 20) as channel:
        with channel.path.open("wb") as writer:
            writer.write(b"<testsuites/>" * 1000)
        data, written = channel.collect()
    assert data == b"<testsuites/>" * 1000 and written == len(data)
    assert _readers() == []
