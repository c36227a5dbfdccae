"""JSON files the commands read that hold valid JSON of the wrong type, or JSON Python cannot load.

Threat closed (new-user finding): ``repogate decide`` given a file holding a list said
"schema_version None", naming a key the user never wrote; JSON nested too deeply or a number
too long for Python ended in a traceback. Each JSON input (the evidence ``decide`` reads, the
manifest ``report`` reads, a review file gate A reads, the receipts ``show`` checks) must name
what is wrong in one line: bad input exits 2, a changed evidence file is named as changed (exit 3).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _stored_run import finished_run
from repogate.cli import ExitCode, main
from repogate.errors import EvidenceError
from repogate.gates.authority import load_reviews

WRONG_TYPES = {
    "[]": "got a list",
    '[{"schema_version": 1}]': "got a list",
    '"evidence"': "got a string",
    "1": "got a number",
    "null": "got null",
    "true": "got a boolean",
}
UNLOADABLE = {
    "[" * 100_000 + "]" * 100_000: "nested too deeply",
    "1" + "0" * 5000: "4300",  # Python's int digit limit (sys.get_int_max_str_digits)
}


def _one_line(capsys: pytest.CaptureFixture[str], code: int, argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "; " in err, err
    return err


@pytest.mark.parametrize(("text", "said"), [*WRONG_TYPES.items(), *UNLOADABLE.items()])
def test_decide_names_what_is_wrong_with_the_evidence_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    path = tmp_path / "evidence.json"
    path.write_text(text)
    err = _one_line(capsys, ExitCode.USAGE, ["decide", str(path)])
    assert f"evidence file {path}" in err and said in err, err
    assert "schema_version None" not in err
    if text in WRONG_TYPES:
        assert "expected a JSON object" in err and "repogate schema evidence" in err, err


def _run(tmp_path: Path) -> tuple[Path, str]:
    """A run with two finished attempts (two receipts each); return (run dir, the second's id)."""
    run_dir, _, second = finished_run(tmp_path / "run")
    return run_dir, second


@pytest.mark.parametrize(("text", "said"), [*WRONG_TYPES.items(), *UNLOADABLE.items()])
def test_report_names_what_is_wrong_with_the_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    run_dir, _ = _run(tmp_path)
    (run_dir / "manifest.json").write_text(text)
    err = _one_line(capsys, ExitCode.USAGE, ["report", str(run_dir)])
    assert str(run_dir / "manifest.json") in err and said in err, err


@pytest.mark.parametrize(
    "predicate", ['"passed"', "[]", "7", "null", "[" * 100_000 + "]" * 100_000]
)
def test_show_calls_a_receipt_of_the_wrong_shape_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], predicate: str
) -> None:
    """A receipt rewritten to valid JSON of another shape is changed evidence, never a crash."""
    run_dir, attempt = _run(tmp_path)
    receipt = sorted((run_dir / "attempts" / attempt / "receipts").iterdir())[0]
    receipt.write_text('{"predicate": ' + predicate + "}")
    capsys.readouterr()
    assert main(["show", str(run_dir)]) == ExitCode.INTERNAL
    err = capsys.readouterr().err
    assert err.startswith(f"error: attempt {attempt}: evidence changed"), err
    assert f"receipts/{receipt.name} changed" in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("text", "said"), [*WRONG_TYPES.items(), ('{"reviews": 5}', "key 'reviews'")]
)
def test_a_review_file_of_the_wrong_type_is_one_line(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "reviews.json"
    path.write_text(text)
    with pytest.raises(EvidenceError) as caught:
        load_reviews(path, candidate_digest="c" * 64)
    message = str(caught.value)
    assert f"review file {path}" in message and said in message and "\n" not in message
    json.dumps(message)  # plain text, no object leaked into it


def test_decide_on_an_object_without_schema_version_says_it_has_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An object lacking the key said "has schema_version None" (new user, twice)."""
    path = tmp_path / "evidence.json"
    path.write_text('{"foo": 1}')
    err = _one_line(capsys, ExitCode.USAGE, ["decide", str(path)])
    assert f"evidence file {path} has no schema_version" in err, err
    assert "None" not in err
