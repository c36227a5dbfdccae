"""Signed verdicts: DSSE envelopes over in-toto Statements, and ``repogate verify``.

Threat closed: a verdict is a file anyone with write access to the run folder could edit; a
signature by a key the writer does not hold makes every such edit visible, named by file.
"""

from __future__ import annotations

import base64
import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from _stored_run import stored_run
from conftest import run_json
from repogate.cli import ExitCode, main
from repogate.provenance import generate, load_signer, sign_run
from repogate.provenance.sign import DECISION_ENVELOPE, RUN_ENVELOPE, sign_attempt
from repogate.state import CandidateState, sha256_hex
from repogate.store import DECISION_FILE
from repogate.tasks.scenarios import BuiltScenario

STATE = CandidateState(base_commit="a" * 40, candidate_commit="b" * 40, patch_digest="c" * 64)
OTHER = CandidateState(base_commit="a" * 40, candidate_commit="d" * 40, patch_digest="e" * 64)


def _keys(tmp_path: Path) -> tuple[Path, Path]:
    return generate(tmp_path / "keys")


def _run(run_dir: Path, state_of_second_receipt: CandidateState = STATE) -> list[str]:
    """A run with two decided attempts, two receipts each; returns the attempt ids."""
    ids = stored_run(run_dir, STATE, (("E", STATE), ("I", state_of_second_receipt)), "passed")
    (run_dir / "manifest.json").write_text('{"run": "t"}\n')
    return ids


def _verify(target: Path, key: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["verify", str(target), "--key", str(key)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keygen", "--out", str(tmp_path / "k")]) == ExitCode.OK
    private = tmp_path / "k" / "repogate-signing.key"
    public = json.loads((tmp_path / "k" / "repogate-signing.pub.json").read_text())
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert public["keytype"] == "ed25519" and len(public["keyid"]) == 64
    said = capsys.readouterr().out
    assert private.read_text().splitlines()[1] not in said  # the key's bytes are never printed
    before = private.read_bytes()
    assert main(["keygen", "--out", str(tmp_path / "k")]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "exist already" in err and err.count("\n") == 1
    assert private.read_bytes() == before


def test_a_signed_run_verifies_whole_and_by_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private, public = _keys(tmp_path)
    ids = _run(tmp_path / "run")
    sign_run(tmp_path / "run", load_signer(str(private)))
    code, said = _verify(tmp_path / "run", public, capsys)
    assert code == ExitCode.OK, said
    assert "verified 2 decisions and the run summary" in said
    decision = tmp_path / "run" / "attempts" / ids[0] / "decision.json"
    code, said = _verify(decision, public, capsys)
    assert code == ExitCode.OK and "verified 1 decision with key" in said
    envelope = json.loads((decision.parent / DECISION_ENVELOPE).read_text())
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    statement = json.loads(base64.b64decode(envelope["payload"]))
    names = [s["name"] for s in statement["subject"]]
    assert names == ["decision.json", "receipts/00-E.intoto.json", "receipts/01-I.intoto.json"]
    assert statement["predicate"]["state_id"] == STATE.state_id


def _signed_files(run_dir: Path) -> list[Path]:
    """Every file a signature covers: envelopes, decisions, receipts, the manifest."""
    return sorted(
        p
        for p in run_dir.rglob("*")
        if p.is_file() and p.suffix == ".json" and not p.name.startswith(".")
    )


def test_a_changed_byte_in_any_signed_file_is_reported_with_that_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private, public = _keys(tmp_path)
    run_dir = tmp_path / "run"
    _run(run_dir)
    sign_run(run_dir, load_signer(str(private)))
    files = _signed_files(run_dir)
    assert len(files) == 10  # manifest, run envelope, 2 x (decision, envelope, 2 receipts)
    for path in files:
        original = path.read_bytes()
        for offset in (len(original) // 3, len(original) // 2, len(original) - 3):
            changed = bytearray(original)
            changed[offset] ^= 0x01
            path.write_bytes(bytes(changed))
            code, said = _verify(run_dir, public, capsys)
            name = path.relative_to(run_dir).as_posix()
            assert code == ExitCode.NOT_ACCEPTED, (name, offset)
            assert f"FAIL {name}: " in said, (name, offset, said)
        path.write_bytes(original)
    assert _verify(run_dir, public, capsys)[0] == ExitCode.OK


def test_an_added_or_removed_receipt_and_an_unsigned_attempt_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private, public = _keys(tmp_path)
    run_dir = tmp_path / "run"
    ids = _run(run_dir)
    sign_run(run_dir, load_signer(str(private)))
    receipts = run_dir / "attempts" / ids[0] / "receipts"
    (receipts / "02-V.intoto.json").write_bytes((receipts / "01-I.intoto.json").read_bytes())
    (run_dir / "attempts" / ids[1] / "receipts" / "00-E.intoto.json").unlink()
    code, said = _verify(run_dir, public, capsys)
    assert code == ExitCode.NOT_ACCEPTED
    assert f"FAIL attempts/{ids[0]}/receipts/02-V.intoto.json: not covered by the signature" in said
    assert f"FAIL attempts/{ids[1]}/receipts/00-E.intoto.json: missing" in said
    (run_dir / "attempts" / ids[1] / DECISION_ENVELOPE).unlink()
    code, said = _verify(run_dir, public, capsys)
    assert (
        f"FAIL attempts/{ids[1]}/{DECISION_ENVELOPE}: missing: this verdict is not signed" in said
    )


def test_a_receipt_bound_to_another_state_fails_verification_though_signed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private, public = _keys(tmp_path)
    run_dir = tmp_path / "run"
    ids = _run(run_dir, state_of_second_receipt=OTHER)
    signer = load_signer(str(private))
    for attempt in ids:
        sign_attempt(run_dir / "attempts" / attempt, signer)
    code, said = _verify(run_dir / "attempts" / ids[0], public, capsys)
    assert code == ExitCode.NOT_ACCEPTED
    assert (
        f"FAIL receipts/01-I.intoto.json: names state {OTHER.state_id[:12]}, "
        f"the decision names {STATE.state_id[:12]}" in said
    )
    assert "receipts/00-E" not in said


def test_the_wrong_key_fails_every_envelope_and_a_missing_key_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private, _ = _keys(tmp_path)
    _, other_public = generate(tmp_path / "other")
    run_dir = tmp_path / "run"
    ids = _run(run_dir)
    sign_run(run_dir, load_signer(str(private)))
    code, said = _verify(run_dir, other_public, capsys)
    assert code == ExitCode.NOT_ACCEPTED
    failing = sorted(line.split(":")[0] for line in said.splitlines() if line.startswith("FAIL"))
    assert failing == sorted(
        [f"FAIL attempts/{i}/{DECISION_ENVELOPE}" for i in ids] + [f"FAIL {RUN_ENVELOPE}"]
    )
    code, said = _verify(run_dir, tmp_path / "nope.pub.json", capsys)
    assert code == ExitCode.USAGE
    assert said.startswith("error: key file ") and said.count("\n") == 1
    (tmp_path / "bad.pub.json").write_text('{"keyid": "x"}')
    code, said = _verify(run_dir, tmp_path / "bad.pub.json", capsys)
    assert code == ExitCode.USAGE and "is not a public key" in said


def _private_forms(private: Path) -> dict[str, bytes]:
    """The private key ``repogate keygen`` wrote, and the same key as other tools write it."""
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(private.read_bytes(), password=None)
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return {
        "keygen's PEM": private.read_bytes(),
        "encrypted PEM": key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"pass"),
        ),
        "OpenSSH": key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.OpenSSH,
            serialization.NoEncryption(),
        ),
        "key JSON": json.dumps(
            {"keytype": "ed25519", "scheme": "ed25519", "keyval": {"private": raw.hex()}}
        ).encode(),
    }


def test_a_private_key_given_to_verify_is_said_to_be_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was "not a PEM public key": true, but it did not say the user passed the private one."""
    private, public = _keys(tmp_path)
    run_dir = tmp_path / "run"
    _run(run_dir)
    sign_run(run_dir, load_signer(str(private)))
    secret = private.read_text().splitlines()[1]
    for form, data in _private_forms(private).items():
        key = tmp_path / f"key-{len(data)}"
        key.write_bytes(data)
        code, said = _verify(run_dir, key, capsys)
        assert (code, said) == (
            ExitCode.USAGE,
            f"error: key file {key} is a private key, not a public one (keep it secret); give "
            "--key the public key: the .pub.json `repogate keygen` wrote beside it\n",
        ), form
        assert secret not in said
    assert _verify(run_dir, public, capsys)[0] == ExitCode.OK


def test_a_public_pem_given_to_sign_key_is_said_to_be_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cryptography.hazmat.primitives import serialization

    private, _ = _keys(tmp_path)
    loaded = serialization.load_pem_private_key(private.read_bytes(), password=None)
    key = tmp_path / "public.pem"
    key.write_bytes(
        loaded.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    out = tmp_path / "out"
    assert main(["run", "--out", str(out), "--sign-key", str(key)]) == ExitCode.USAGE
    assert capsys.readouterr().err.startswith(
        f"error: key file {key} is a public key, not the private one that signs; give --sign-key"
    )
    assert not out.exists()


def test_a_folder_holding_no_verdict_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, public = _keys(tmp_path)
    (tmp_path / "empty").mkdir()
    code, said = _verify(tmp_path / "empty", public, capsys)
    assert (
        code == ExitCode.USAGE and said.startswith("error: ") and "holds no decision.json" in said
    )


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "cannot be read"),
        ("not a key", "is not an unencrypted PEM private key"),
        ("public", "is a public key, not the private one that signs"),
    ],
)
def test_an_unusable_signing_key_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, said: str
) -> None:
    _, public = _keys(tmp_path)
    key = tmp_path / "sign.key"
    if content is not None:
        key.write_text(public.read_text() if content == "public" else content)
    out = tmp_path / "out"
    assert main(["run", "--out", str(out), "--sign-key", str(key)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"error: key file {key} {said}") and err.count("\n") == 1
    assert not out.exists()


def test_a_key_from_an_environment_variable_signs_and_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    private, public = _keys(tmp_path)
    pem = private.read_text()
    monkeypatch.setenv("RG_TEST_SIGNING_KEY", pem)
    run_dir = tmp_path / "run"
    _run(run_dir)
    sign_run(run_dir, load_signer("env:RG_TEST_SIGNING_KEY"))
    assert _verify(run_dir, public, capsys)[0] == ExitCode.OK
    secret = pem.splitlines()[1]
    assert not [p for p in run_dir.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    monkeypatch.delenv("RG_TEST_SIGNING_KEY")
    code = main(["run", "--out", str(tmp_path / "o"), "--sign-key", "env:RG_TEST_SIGNING_KEY"])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert err.startswith("error: environment variable RG_TEST_SIGNING_KEY is not set")


def test_run_with_sign_key_signs_each_decision_and_verify_runs_as_a_subprocess(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private, public = _keys(tmp_path)
    out = tmp_path / "run"
    args = [str(parser.contracts[0]), "--agent", "gold", "--out", str(out)]
    code, rows = run_json(capsys, *args, "--sign-key", str(private))
    assert code == ExitCode.OK and rows[0]["accepted"] is True
    attempt = out / "attempts" / str(rows[0]["attempt_id"])
    assert (attempt / DECISION_ENVELOPE).is_file() and (out / RUN_ENVELOPE).is_file()
    done = subprocess.run(
        [sys.executable, "-m", "repogate.cli", "verify", str(out), "--key", str(public)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "verified 1 decision and the run summary" in done.stdout
    decision = attempt / "decision.json"
    decision.write_text(decision.read_text().replace('"accepted": true', '"accepted": false'))
    code, said = _verify(out, public, capsys)
    assert code == ExitCode.NOT_ACCEPTED
    assert f"FAIL attempts/{attempt.name}/decision.json: changed since it was signed" in said


def test_a_key_given_as_text_is_refused_without_echoing_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private, _ = _keys(tmp_path)
    pem = private.read_text()
    out = tmp_path / "out"
    assert main(["run", "--out", str(out), "--sign-key", pem]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: --sign-key was given a key's text") and err.count("\n") == 1
    assert pem.splitlines()[1] not in err
    assert not out.exists()


def _signed_pair(root: Path, run_id: str, private: Path) -> tuple[Path, list[str]]:
    """A signed run of two attempts whose manifest names ``run_id``."""
    run_dir = root / run_id
    ids = _run(run_dir)
    (run_dir / "manifest.json").write_text(json.dumps({"run_id": run_id}) + "\n")
    sign_run(run_dir, load_signer(str(private)))
    return run_dir, ids


def test_a_signed_verdict_moved_to_another_attempt_or_run_does_not_verify_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Threat (red team): a signed decision replayed where it was not made verified.

    Three shapes: another attempt's signed folder copied over an attempt of the same run
    (verified as an attempt folder, and by its ``decision.json``), and the same attempt's signed
    folder from another run (attempt ids repeat across runs of the same tasks and agents).
    """
    private, public = _keys(tmp_path)
    today, ids = _signed_pair(tmp_path, "run-today", private)
    yesterday, _ = _signed_pair(tmp_path, "run-yesterday", private)
    shapes = [  # (signed folder copied, where to, targets verified, the problem said)
        (
            today / "attempts" / ids[0],
            ids[1],
            ("", "/decision.json"),
            f"signed for attempt {ids[0]}, found in {ids[1]}",
        ),
        (
            yesterday / "attempts" / ids[0],
            ids[0],
            ("",),
            "signed in run run-yesterday, found in run-today",
        ),
    ]
    for source, name, targets, problem in shapes:
        moved = today / "attempts" / name
        shutil.rmtree(moved)
        shutil.copytree(source, moved)
        for target in targets:
            code, said = _verify(Path(f"{moved}{target}"), public, capsys)
            assert code == ExitCode.NOT_ACCEPTED, said
            assert f"FAIL {DECISION_ENVELOPE}: {problem}" in said
    assert _verify(yesterday / "attempts" / ids[0], public, capsys)[0] == ExitCode.OK


def test_a_changed_or_planted_patch_diff_fails_against_the_signed_patch_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``patch.diff`` is not a subject, but every signed receipt names its patch digest.

    New-user finding: a byte flipped in a real run's ``patch.diff`` verified as intact. Three
    shapes: a changed byte, another whole patch, and a link to a file with the right bytes (the
    verifier never follows a path the run folder could have planted)."""
    diff = b"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    state = CandidateState(
        base_commit="a" * 40, candidate_commit="b" * 40, patch_digest=sha256_hex(diff)
    )
    private, public = _keys(tmp_path)
    run_dir = tmp_path / "run"
    ids = stored_run(run_dir, state, (("E", state), ("I", state)), "passed")
    (run_dir / "manifest.json").write_text('{"run": "t"}\n')
    patches = [run_dir / "attempts" / i / "patch.diff" for i in ids]
    for patch in patches:
        patch.write_bytes(diff)
    sign_run(run_dir, load_signer(str(private)))
    code, said = _verify(run_dir, public, capsys)
    assert code == ExitCode.OK, said
    name = f"attempts/{ids[0]}/patch.diff"
    flipped = bytearray(diff)
    flipped[-2] ^= 0x01
    right = tmp_path / "right.diff"
    right.write_bytes(diff)
    for shape in (bytes(flipped), diff.replace(b"a = 2", b"a = 3"), right):
        patches[0].unlink()
        if isinstance(shape, Path):
            patches[0].symlink_to(shape)
        else:
            patches[0].write_bytes(shape)
        code, said = _verify(run_dir, public, capsys)
        assert code == ExitCode.NOT_ACCEPTED, (shape, said)
        assert f"FAIL {name}: " in said, (shape, said)
        assert f"attempts/{ids[1]}/patch.diff" not in said
        code, said = _verify(patches[0].parent, public, capsys)
        assert code == ExitCode.NOT_ACCEPTED and "FAIL patch.diff: " in said, said
    patches[0].unlink()
    patches[0].write_bytes(diff)
    assert _verify(run_dir, public, capsys)[0] == ExitCode.OK


EVIDENCE = {
    "tests-candidate/run0/junit.xml": b'<testsuite tests="1" failures="0"><testcase name="t"/></testsuite>\n',
    "tests-candidate/run0/output.log": b"1 passed in 0.01s\n",
    "tests-base-suite/plain/junit.xml": b'<testsuite tests="2" failures="0"></testsuite>\n',
    "agent/trajectory.json": b'{"steps": [{"action": "edit", "path": "x.py"}]}\n',
    "agent/agent.log": b"edited x.py\n",
}


def test_junit_copies_logs_and_agent_outputs_are_signed_and_each_change_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25: the JUnit reports, test logs and agent outputs the receipts were made from were
    outside the signature, so a rewritten report verified as intact. Each is a subject now: a
    changed byte, a removed file, a file added after signing, and a link planted in its place
    are each named."""
    private, public = _keys(tmp_path)
    run_dir = tmp_path / "run"
    ids = _run(run_dir)
    folder = run_dir / "attempts" / ids[0]
    for name, data in EVIDENCE.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    sign_run(run_dir, load_signer(str(private)))
    envelope = json.loads((folder / DECISION_ENVELOPE).read_text())
    names = [s["name"] for s in json.loads(base64.b64decode(envelope["payload"]))["subject"]]
    assert names == [
        "decision.json",
        "receipts/00-E.intoto.json",
        "receipts/01-I.intoto.json",
        *sorted(EVIDENCE),
    ]
    assert _verify(run_dir, public, capsys)[0] == ExitCode.OK
    for name, data in EVIDENCE.items():
        path, shown = folder / name, f"FAIL attempts/{ids[0]}/{name}: "
        for offset in (0, len(data) // 2, len(data) - 2):
            changed = bytearray(data)
            changed[offset] ^= 0x01
            path.write_bytes(bytes(changed))
            code, said = _verify(run_dir, public, capsys)
            assert code == ExitCode.NOT_ACCEPTED and f"{shown}changed since it was signed" in said
        path.unlink()
        code, said = _verify(run_dir, public, capsys)
        assert code == ExitCode.NOT_ACCEPTED and f"{shown}missing" in said, said
        right = tmp_path / "right"
        right.write_bytes(data)
        path.symlink_to(right)  # the right bytes, behind a link the verifier never follows
        code, said = _verify(run_dir, public, capsys)
        assert code == ExitCode.NOT_ACCEPTED and f"{shown}missing" in said, said
        assert f"{shown}not covered by the signature (a link or a special file)" in said
        path.unlink()
        path.write_bytes(data)
    assert _verify(run_dir, public, capsys)[0] == ExitCode.OK
    for planted in ("tests-candidate/run1/junit.xml", "agent/extra.log", "notes.txt"):
        (folder / planted).parent.mkdir(parents=True, exist_ok=True)
        (folder / planted).write_bytes(b"planted\n")
        code, said = _verify(folder, public, capsys)
        assert code == ExitCode.NOT_ACCEPTED
        assert f"FAIL {planted}: not covered by the signature" in said, said
        (folder / planted).unlink()
    (folder / "agent" / "linked").symlink_to(tmp_path, target_is_directory=True)
    code, said = _verify(folder, public, capsys)
    assert "FAIL agent/linked: not covered by the signature (a link or a special file)" in said
    (folder / "agent" / "linked").unlink()
    assert _verify(run_dir, public, capsys)[0] == ExitCode.OK


def test_a_changed_decision_is_named_once_though_two_signatures_cover_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``decision.json`` is a subject of its own envelope and of the run summary: one FAIL line.

    New-user finding: the same ``FAIL ...: changed since it was signed`` line was printed twice.
    The other shapes: the decision envelope (a subject of the run summary too) and a receipt."""
    private, public = _keys(tmp_path)
    run_dir = tmp_path / "run"
    ids = _run(run_dir)
    sign_run(run_dir, load_signer(str(private)))
    for name in (DECISION_FILE, DECISION_ENVELOPE, "receipts/00-E.intoto.json"):
        path = run_dir / "attempts" / ids[0] / name
        original = path.read_bytes()
        path.write_bytes(original.replace(b"}", b" }", 1))
        code, said = _verify(run_dir, public, capsys)
        assert code == ExitCode.NOT_ACCEPTED
        lines = [line for line in said.splitlines() if line.startswith("FAIL ")]
        assert lines and len(lines) == len(set(lines)), said
        path.write_bytes(original)


@pytest.mark.parametrize("shape", ["below-a-file", "in-proc", "dangling-link"])
def test_keygen_into_a_folder_that_cannot_be_made_is_one_line_of_bad_input(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """New-user finding: ``keygen --out /proc/nope`` ended in a traceback (exit 1)."""
    (tmp_path / "file").write_text("x\n")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    out = {
        "below-a-file": tmp_path / "file" / "keys",
        "in-proc": Path("/proc/repogate-no-such-folder"),
        "dangling-link": tmp_path / "link",
    }[shape]
    assert main(["keygen", "--out", str(out)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert str(out) in err and "; " in err, err
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize(
    ("shape", "said_of_it"),
    [("missing", "does not exist"), ("other-file", "is a file, not a decision.json")],
)
def test_verify_says_what_its_target_is_when_it_holds_no_verdict(
    shape: str, said_of_it: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """New user: ``verify /nonexist`` and ``verify notes.json`` both said "holds no decision.json"."""
    _, public = _keys(tmp_path)
    target = tmp_path / ("nowhere" if shape == "missing" else "notes.json")
    if shape == "other-file":
        target.write_text("{}\n")
    code, said = _verify(target, public, capsys)
    assert code == ExitCode.USAGE and said.count("\n") == 1, said
    assert said.startswith(f"error: {target} {said_of_it}; "), said


UNSIGNED = (
    "not signed: no decision or run summary carries a signature (give --sign-key FILE, a key "
    "from `repogate keygen`, to the `repogate run` or `repogate gate` command that made it and "
    "rerun it: its finished attempts are kept and signed)"
)


@pytest.mark.parametrize("shape", ["run", "attempt", "decision"])
def test_an_unsigned_run_is_said_once_to_be_unsigned_and_how_to_sign_it(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """New user: `verify RUN_DIR` on an unsigned run printed a FAIL line per attempt and one for
    the run summary, each "missing: this verdict is not signed", and not how to sign it."""
    _, public = _keys(tmp_path)
    ids = _run(tmp_path / "run")
    attempt = tmp_path / "run" / "attempts" / ids[0]
    target = {"run": tmp_path / "run", "attempt": attempt, "decision": attempt / DECISION_FILE}
    code, said = _verify(target[shape], public, capsys)
    assert code == ExitCode.NOT_ACCEPTED  # as any failed verification (docs/signing.md)
    assert said == f"{target[shape]}: {UNSIGNED}\n"


def test_a_run_with_one_decision_unsigned_names_that_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a run with no signature at all is called unsigned: one envelope gone from a signed
    run is a FAIL line naming it, as any other missing signed file."""
    private, public = _keys(tmp_path)
    ids = _run(tmp_path / "run")
    sign_run(tmp_path / "run", load_signer(str(private)))
    (tmp_path / "run" / RUN_ENVELOPE).unlink()
    code, said = _verify(tmp_path / "run", public, capsys)
    assert code == ExitCode.NOT_ACCEPTED
    assert said.splitlines()[0] == f"FAIL {RUN_ENVELOPE}: missing: this verdict is not signed"
    assert "not signed: no decision" not in said and ids


@pytest.mark.parametrize("shape", ["run", "attempt", "decision"])
def test_an_unsigned_run_whose_receipt_changed_is_named_and_not_sent_to_a_rerun(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """New user: `verify` on an unsigned run said only "not signed" and "rerun it: its finished
    attempts are kept and signed", though a receipt had been edited (`show` and `report` caught
    it, exit 3) and a rerun into that folder is refused. The receipts' digests are checked as
    `show` checks them; a changed one is a FAIL line, exit 1, and no rerun advice."""
    _, public = _keys(tmp_path)
    run_dir = tmp_path / "run"
    ids = _run(run_dir)
    attempt = run_dir / "attempts" / ids[0]
    receipt = sorted((attempt / "receipts").glob("*.json"))[0]
    receipt.write_text(receipt.read_text().replace('"passed"', '"failed"', 1))
    assert main(["show", str(run_dir)]) == ExitCode.INTERNAL  # show catches it
    shown = capsys.readouterr().err
    target = {"run": run_dir, "attempt": attempt, "decision": attempt / DECISION_FILE}
    code, said = _verify(target[shape], public, capsys)
    assert code == ExitCode.NOT_ACCEPTED
    problems = shown.split("evidence changed since it was stored (", 1)[1].split(")")[0]
    assert said.splitlines() == [
        f"FAIL attempts/{ids[0]}: evidence changed since it was stored ({problems})",
        f"{target[shape]}: not signed, and 1 attempt's evidence changed since it was stored: "
        "its verdict is not trusted (a rerun into this folder is refused); rerun into a new "
        "--out folder, with --sign-key FILE to sign it",
    ], said
    # the other attempt of the run, intact, is unsigned only: the rerun advice stands
    other = run_dir / "attempts" / ids[1]
    assert _verify(other, public, capsys) == (ExitCode.NOT_ACCEPTED, f"{other}: {UNSIGNED}\n")
