"""Red team rt32: a hostile file's validation problems stay one short, visible line.

``every_problem`` (issue 21) says every problem of a file. A file an agent writes (its
``requirements.json``, up to 4 MiB) or a hostile contract could make that line tens of
megabytes (one problem per element, each with its "valid keys here" list), quote a megabyte
key in full, or carry a C1 control (CSI, ``\\x9b``), a bidi override or a line separator to
the terminal through a value pydantic or ``_as_written`` quotes.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from repogate._problems import MAX_PROBLEM_CHARS, MAX_PROBLEMS_SAID
from repogate.agents.command import read_agent_output
from repogate.cli import main
from repogate.contract import load_contract
from repogate.errors import ContractError
from test_contract import MINIMAL

_INVISIBLE = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def _invisible(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in _INVISIBLE]


def _contract_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ContractError) as info:
        load_contract(path)
    return str(info.value)


def test_many_problems_in_an_agent_file_are_counted_not_all_listed(tmp_path: Path) -> None:
    """5,000 bad claims gave a 400 kB note (4 MiB of them: 39 MB) in the proposal's detail."""
    claims = [{"zz": 1}] * 5000
    (tmp_path / "requirements.json").write_text(json.dumps(claims))
    detail = read_agent_output(tmp_path)["detail"]
    assert detail.startswith("requirements.json ignored: 10000 problems: key '0.claim'")
    assert len(detail) < MAX_PROBLEMS_SAID * (MAX_PROBLEM_CHARS + 2) + 200, len(detail)
    assert detail.endswith(f"(and {10000 - MAX_PROBLEMS_SAID} more problems)"), detail[-200:]


def test_many_unknown_keys_in_a_contract_are_counted_not_all_listed(tmp_path: Path) -> None:
    keys = "".join(f"unknown_{n} = 1\n" for n in range(400))
    message = _contract_error(tmp_path, keys + MINIMAL.format(sha="a" * 40))
    assert "400 problems: unknown key 'unknown_0' (valid keys here: " in message
    assert len(message) < MAX_PROBLEMS_SAID * (MAX_PROBLEM_CHARS + 2) + 400, len(message)
    assert f"(and {400 - MAX_PROBLEMS_SAID} more problems); fix the keys and run" in message


def test_a_huge_key_is_cut_not_quoted_whole(tmp_path: Path) -> None:
    key = "k" * 100_000
    message = _contract_error(tmp_path, f"{key} = 1\n" + MINIMAL.format(sha="a" * 40))
    assert message.startswith("contract ")
    assert len(message) < MAX_PROBLEM_CHARS + 400, len(message)
    assert "..." in message


@pytest.mark.parametrize(
    "value",
    [
        "\\u009b31mred",  # C1 CSI: json.dumps(ensure_ascii=False) keeps it
        "yes\\u202eoN",  # a bidi override
        "yes\\u2028line",  # a line separator
        "\\u007f",  # DEL
    ],
)
def test_a_boolean_value_with_invisible_characters_is_escaped(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = MINIMAL.format(sha="a" * 40) + f'[oracles]\nrunner_under_test = "{value}"\n'
    message = _contract_error(tmp_path, text)
    assert "is not a boolean (use true or false)" in message
    assert _invisible(message) == [], message
    path = tmp_path / "c.toml"
    assert main(["run", str(path), "--agent", "null", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and _invisible(err.rstrip("\n")) == [], err


def test_a_message_quoting_the_input_is_escaped(tmp_path: Path) -> None:
    """pydantic's own message may quote the input (a literal, a pattern): escaped too."""
    text = MINIMAL.format(sha="a" * 40) + '[oracles]\nregression = "x\\u009b\\u202e\\u2028"\n'
    message = _contract_error(tmp_path, text)
    assert "oracles.regression" in message
    assert _invisible(message) == [], message


def test_claims_hint_names_the_claims_keys_not_root(tmp_path: Path) -> None:
    (tmp_path / "requirements.json").write_text(json.dumps([{"claim": "x", "sourse": "s"}]))
    detail = read_agent_output(tmp_path)["detail"]
    assert "unknown key '0.sourse' (did you mean 'source'?" in detail, detail
    assert "valid keys here: root" not in detail
