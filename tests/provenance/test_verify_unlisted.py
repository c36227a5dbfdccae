"""Red team 2026-12-02: ``repogate verify`` skipped, silently, the folders it could not list.

A signed attempt folder is checked entry by entry: an unsigned file in it fails verification.
A folder the walk could not list (a path past the system's limit, no permission) was left out
without a word, so a file planted in it verified. Each shape below is a signed run whose folder
cannot be listed: verify fails, naming the folder, and checks the rest.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from _stored_run import stored_run
from repogate.cli import ExitCode, main
from repogate.provenance import generate, load_signer, sign_run
from repogate.state import CandidateState

STATE = CandidateState(base_commit="a" * 40, candidate_commit="b" * 40, patch_digest="c" * 64)
LEVEL = "d" * 200  # 25 of them pass Linux's PATH_MAX (4096 bytes)
AS_ROOT = os.geteuid() == 0


def _signed_run(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    private, public = generate(tmp_path / "keys")
    run_dir = tmp_path / "run"
    ids = stored_run(run_dir, STATE, (("E", STATE), ("I", STATE)), "passed")
    (run_dir / "manifest.json").write_text('{"run": "t"}\n')
    sign_run(run_dir, load_signer(str(private)))
    return run_dir, public, ids


def _verify(target: Path, key: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["verify", str(target), "--key", str(key)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _plant_deep(folder: Path, levels: int) -> str:
    """Make ``levels`` nested folders under ``folder`` and a file in the last; return its path.

    Made through descriptors: the path as a whole is too long to name.
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(LEVEL, dir_fd=fd)
            inner = os.open(LEVEL, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        planted = os.open("planted.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(planted, b"not signed\n")
        os.close(planted)
    finally:
        os.close(fd)
    return "/".join([LEVEL] * levels + ["planted.txt"])


def test_a_planted_file_below_a_folder_too_deep_to_list_fails_naming_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, public, ids = _signed_run(tmp_path)
    attempt = run_dir / "attempts" / ids[0]
    _plant_deep(attempt, 25)
    code, said = _verify(run_dir, public, capsys)
    assert code == ExitCode.NOT_ACCEPTED, said
    failing = [line for line in said.splitlines() if line.startswith("FAIL ")]
    assert len(failing) == 1, said
    assert failing[0].startswith(f"FAIL attempts/{ids[0]}/{LEVEL}/")
    assert "cannot be listed (File name too long)" in failing[0]
    # the other attempt still checked
    assert ": 1 failing file; 1 decision verified and the run summary" in said


def test_a_folder_just_short_of_the_limit_is_listed_and_its_file_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control: 15 levels (3,000 bytes) are listed, and the planted file is named as such."""
    run_dir, public, ids = _signed_run(tmp_path)
    planted = _plant_deep(run_dir / "attempts" / ids[0], 15)
    code, said = _verify(run_dir, public, capsys)
    assert code == ExitCode.NOT_ACCEPTED
    assert f"FAIL attempts/{ids[0]}/{planted}: not covered by the signature" in said
    assert "cannot be listed" not in said


@pytest.fixture
def unreadable() -> Iterator[list[Path]]:
    """Folders a test takes every permission from; given back afterwards (for the clean-up)."""
    taken: list[Path] = []
    yield taken
    for folder in taken:
        folder.chmod(0o755)


@pytest.mark.skipif(AS_ROOT, reason="root lists a folder without permissions")
@pytest.mark.parametrize("where", ["receipts", "tests-candidate"])
def test_a_folder_without_permissions_fails_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unreadable: list[Path], where: str
) -> None:
    run_dir, public, ids = _signed_run(tmp_path)
    folder = run_dir / "attempts" / ids[0] / where
    folder.mkdir(exist_ok=True)
    folder.chmod(0)
    unreadable.append(folder)
    code, said = _verify(run_dir, public, capsys)
    assert code == ExitCode.NOT_ACCEPTED, said
    assert f"FAIL attempts/{ids[0]}/{where}: cannot be listed (Permission denied)" in said


@pytest.mark.skipif(AS_ROOT, reason="root lists a folder without permissions")
def test_an_attempt_folder_without_permissions_fails_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unreadable: list[Path]
) -> None:
    run_dir, public, ids = _signed_run(tmp_path)
    folder = run_dir / "attempts" / ids[1]
    folder.chmod(0)
    unreadable.append(folder)
    code, said = _verify(run_dir, public, capsys)
    assert code == ExitCode.NOT_ACCEPTED, said
    assert f"FAIL attempts/{ids[1]}: cannot be listed (Permission denied)" in said
