"""Red team 2026-12-02: files added to a signed attempt folder under names a terminal mangles.

Each is named by ``verify`` (escaped on one line), and verify fails; it never crashes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _stored_run import stored_run
from repogate.cli import ExitCode, main
from repogate.provenance import generate, load_signer, sign_run
from repogate.state import CandidateState

STATE = CandidateState(base_commit="a" * 40, candidate_commit="b" * 40, patch_digest="c" * 64)


@pytest.mark.parametrize(
    "name", [b"agent/\xff\xfe.log", b"agent/evil\nOK attempts.log", b"tests-x/\x1b[2Kjunit.xml"]
)
def test_an_added_file_with_a_strange_name_is_named_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: bytes
) -> None:
    private, public = generate(tmp_path / "keys")
    run_dir = tmp_path / "run"
    ids = stored_run(run_dir, STATE, (("E", STATE),), "passed")
    (run_dir / "manifest.json").write_text('{"run": "t"}\n')
    sign_run(run_dir, load_signer(str(private)))
    folder = run_dir / "attempts" / ids[0]
    path = folder / os.fsdecode(name)  # a non-UTF-8 byte is kept as a surrogate
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"planted\n")
    code = main(["verify", str(run_dir), "--key", str(public)])
    said = capsys.readouterr()
    assert code == ExitCode.NOT_ACCEPTED, said
    shown = said.out + said.err
    assert "not covered by the signature" in shown
    assert "\x1b" not in shown
    assert "\nOK attempts.log" not in shown
