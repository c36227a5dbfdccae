"""A start that fails half-way leaves nothing running (`repogate._descendants`).

Threat closed: `ray.init` failing while its node starts (the raylet missing Ray's fixed 30 s wait
under load) kept no handle on the GCS server, raylet and agents it had started, so each failed
try left its daemons running: 12 of them after the test cluster's three tries, still there when
the suite ended.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from repogate._descendants import descendants, killed_on_failure

# A daemon as Ray starts one: in a session of its own, with a child of its own, writing its
# process id and its child's, then living on.
DAEMON = 'sleep 100000 & echo "$$ $!" > "$1"; exec sleep 100000'


def _started_daemon(pids: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start the daemon; return it and its child's process id, once both run."""
    daemon = subprocess.Popen(["sh", "-c", DAEMON, "sh", str(pids)], start_new_session=True)
    while not pids.is_file() or len(pids.read_text().split()) < 2:  # the event: both are up
        assert daemon.poll() is None
    return daemon, int(pids.read_text().split()[1])


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_what_a_failed_block_started_is_killed_at_every_depth(tmp_path: Path) -> None:
    keep = subprocess.Popen(["sleep", "100000"])  # running before the block: never touched
    try:
        with pytest.raises(RuntimeError), killed_on_failure():
            daemon, child = _started_daemon(tmp_path / "pids")
            assert {daemon.pid, child} <= descendants()
            raise RuntimeError("The current node timed out during startup.")
        assert daemon.wait() == -9
        hang = time.monotonic() + 600  # only turns a hang into a failure
        while _alive(child):  # the event: its child is gone too (killed, then reaped by init)
            assert time.monotonic() < hang, f"process {child} still runs"
        assert _alive(keep.pid)
    finally:
        keep.kill()
        keep.wait()


def test_a_block_that_succeeds_keeps_what_it_started(tmp_path: Path) -> None:
    with killed_on_failure():
        daemon, child = _started_daemon(tmp_path / "pids")
    try:
        assert daemon.poll() is None and _alive(child)
    finally:
        os.kill(child, 9)
        daemon.kill()
        daemon.wait()
