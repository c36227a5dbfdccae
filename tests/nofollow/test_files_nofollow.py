"""The harness reads and writes folders untrusted code could touch without following its links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repogate._files import (
    PlantedLinkError,
    read_bytes_nofollow,
    unlink_nofollow,
    write_bytes_nofollow,
)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the user's, outside the untrusted folder, that a planted link points at."""
    path = tmp_path / "victim" / "decision.json"
    path.parent.mkdir()
    path.write_text("genuine")
    return path


@pytest.fixture
def untrusted(tmp_path: Path) -> Path:
    folder = tmp_path / "untrusted"
    folder.mkdir()
    return folder


def test_a_write_replaces_a_planted_link_instead_of_writing_through_it(
    untrusted: Path, victim: Path
) -> None:
    """Threat: the agent plants ``agent.stdout.txt -> another attempt's decision.json`` and the
    harness, writing the captured output by path, overwrites that file with the agent's text."""
    (untrusted / "agent.stdout.txt").symlink_to(victim)
    replaced = write_bytes_nofollow(untrusted, "agent.stdout.txt", b"text chosen by the agent")
    assert replaced is True
    assert victim.read_text() == "genuine"
    assert not (untrusted / "agent.stdout.txt").is_symlink()
    assert (untrusted / "agent.stdout.txt").read_bytes() == b"text chosen by the agent"
    assert write_bytes_nofollow(untrusted, "agent.stdout.txt", b"again") is False


def test_a_link_on_a_folder_on_the_way_is_refused_or_replaced(
    untrusted: Path, victim: Path
) -> None:
    """Threat: ``tests -> /somewhere`` in the candidate's tree redirects where the harness writes
    a hidden test file or removes one."""
    (untrusted / "tests").symlink_to(victim.parent)
    with pytest.raises(PlantedLinkError):
        write_bytes_nofollow(untrusted, "tests/decision.json", b"forged")
    with pytest.raises(PlantedLinkError):
        unlink_nofollow(untrusted, "tests/decision.json")
    with pytest.raises(PlantedLinkError):
        read_bytes_nofollow(untrusted, "tests/decision.json")
    assert victim.read_text() == "genuine"
    write_bytes_nofollow(untrusted, "tests/decision.json", b"hidden test", make_parents=True)
    assert victim.read_text() == "genuine"  # the link was replaced by a real folder
    assert not (untrusted / "tests").is_symlink()
    assert (untrusted / "tests" / "decision.json").read_bytes() == b"hidden test"


def test_a_read_never_follows_a_link_and_never_blocks(untrusted: Path, victim: Path) -> None:
    """Threat: ``requirements.json -> ~/.pgpass`` makes the harness read the user's secret into
    a receipt; a FIFO planted instead of a file hangs the harness."""
    (untrusted / "requirements.json").symlink_to(victim)
    with pytest.raises(PlantedLinkError) as refused:
        read_bytes_nofollow(untrusted, "requirements.json")
    assert refused.value.path == untrusted / "requirements.json"
    os.mkfifo(untrusted / "usage.json")
    with pytest.raises(OSError, match="not a regular file"):
        read_bytes_nofollow(untrusted, "usage.json")
    assert read_bytes_nofollow(untrusted, "absent.json") is None
    assert read_bytes_nofollow(untrusted, "missing/absent.json") is None


def test_reads_are_capped_and_paths_stay_inside(untrusted: Path) -> None:
    (untrusted / "big.json").write_bytes(b"x" * 100)
    with pytest.raises(OSError, match="larger than 10 bytes"):
        read_bytes_nofollow(untrusted, "big.json", 10)
    assert read_bytes_nofollow(untrusted, "big.json", 10, head=True) == b"x" * 10
    for bad in ("../outside", "/etc/passwd", ""):
        with pytest.raises(ValueError, match="not a relative path"):
            read_bytes_nofollow(untrusted, bad)


def test_a_rewritten_file_keeps_its_mode(untrusted: Path) -> None:
    script = untrusted / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    write_bytes_nofollow(untrusted, "run.sh", b"#!/bin/sh\necho edited\n")
    assert script.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in untrusted.iterdir()] == ["run.sh"]  # no temporary file left
