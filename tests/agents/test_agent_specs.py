"""``--agent`` specs as a new user writes them: relative command files, bad quoting, short names,
and predictions files with repeated or mistyped rows."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from repogate.agent_spec import CmdSpec, label_of, parse_agent_spec
from repogate.agents import make_agent
from repogate.cli import ExitCode, main
from repogate.contract import load_contract
from repogate.errors import AgentSpecError


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    """A one-commit repository and a minimal contract on it (id ``t1``)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    _git(repo, "add", "a.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
    path = tmp_path / "c.toml"
    path.write_text(
        f'id = "t1"\nrepo = "repo"\nbase_commit = "{_git(repo, "rev-parse", "HEAD")}"\n'
        '[requirement]\nstatement = "x"\n'
    )
    return path


def _usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run the CLI, check it failed as a one-line usage error, and return that line."""
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("./fix.sh", ["{fix}"]),
        ("sh fix.sh", ["sh", "{fix}"]),
        ("sh ./fix.sh --input missing.txt .", ["sh", "{fix}", "--input", "missing.txt", "."]),
    ],
)
def test_relative_command_file_is_found_from_the_start_folder(
    contract: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, argv: list[str]
) -> None:
    """``cmd:./fix.sh`` runs inside the agent's workspace, where the file is not: it must not
    look like an agent that did nothing. Words that name no existing file are left alone."""
    start = tmp_path / "start"
    start.mkdir()
    (start / "fix.sh").write_text("#!/bin/sh\n")
    monkeypatch.chdir(start)
    agent = make_agent(
        parse_agent_spec(f"cmd:{command}"), load_contract(contract), tmp_path / "repo"
    )
    fix = str((start / "fix.sh").resolve())
    assert agent.describe()["argv"] == [word.format(fix=fix) for word in argv]
    assert agent.spec == f"cmd:{command}"


@pytest.mark.parametrize(("spec", "message"), [("cmd:'unterminated", "quot"), ("cmd:  ", "empty")])
def test_unusable_command_is_a_one_line_usage_error(
    contract: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, message: str
) -> None:
    err = _usage_error(capsys, "run", str(contract), "--agent", spec, "--out", str(tmp_path / "r"))
    assert message in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("cmd:./fix.sh", "cmd:fix.sh"),
        # the script an interpreter runs names the agent, never the interpreter (new user: one
        # `cmd:python3 examples/agents/bounds_agent.py` was labelled `cmd:python3`)
        ("cmd:sh fix.sh", "cmd:fix.sh"),
        ("cmd:/usr/bin/python3 -m agent --fast", "cmd:agent"),
        ("cmd:python3 examples/agents/bounds_agent.py --model gpt-4.1", "cmd:bounds_agent.py"),
        ("cmd:uv run --no-project agents/fix.py", "cmd:fix.py"),
        ("cmd:sleep 30.5", "cmd:sleep"),
        ("cmd:'my agent' --x", "cmd:my agent"),
        ("cmd:'unterminated", "cmd:'unterminated"),
        ("gold", "gold"),
        ("null", "null"),
        ("scripted:agents/edits-tests.toml", "edits-tests"),
        ("predictions:/data/preds.jsonl", "preds"),
    ],
)
def test_agent_name_tells_command_agents_apart(spec: str, name: str) -> None:
    assert label_of(spec) == name


def test_repeated_instance_id_names_both_rows(contract: Path, tmp_path: Path) -> None:
    """A repeated row must not silently replace the first: which patch was graded is ambiguous."""
    row = {"instance_id": "t1", "model_name_or_path": "m", "model_patch": ""}
    other = {**row, "instance_id": "t2"}
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in (row, other, row)))
    with pytest.raises(AgentSpecError) as info:
        make_agent(
            parse_agent_spec(f"predictions:{preds}"), load_contract(contract), tmp_path / "repo"
        )
    message = str(info.value)
    assert "'t1'" in message and "rows 1 and 3" in message


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "p.json",
            [{"instance_id": "t1", "model_name_or_path": "m", "model_patch": {"diff": "x"}}],
            "model_patch",
        ),
        (
            "p.jsonl",
            {"instance_id": "t1", "model_name_or_path": "m", "model_patch": {"diff": "x"}},
            "model_patch",
        ),
        ("p.json", {"t1": "a patch, not a row"}, "row 1"),
        ("p.json", [["t1", "m", "patch"]], "row 1"),
    ],
)
def test_mistyped_prediction_row_is_a_one_line_usage_error(
    contract: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: object,
    message: str,
) -> None:
    preds = tmp_path / name
    preds.write_text(json.dumps(content) + "\n")
    spec = f"predictions:{preds}"
    err = _usage_error(capsys, "run", str(contract), "--agent", spec, "--out", str(tmp_path / "r"))
    assert message in err


def test_repeated_instance_id_is_a_one_line_usage_error(
    contract: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {"instance_id": "t1", "model_name_or_path": "m", "model_patch": ""}
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps([row, row]))
    spec = f"predictions:{preds}"
    err = _usage_error(capsys, "run", str(contract), "--agent", spec, "--out", str(tmp_path / "r"))
    assert "rows 1 and 2" in err


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("gold", "gold"),
        ("null", "null"),
        ("cmd:python3 a.py", "cmd"),
        ("scripted:agents/x.toml", "scripted"),
        ("predictions:p.jsonl#model-a", "predictions"),
        ("commit:0123abcd", "commit"),
    ],
)
def test_a_spec_is_parsed_once_into_its_typed_value(text: str, kind: str) -> None:
    """The text rebuilds the value; the value, not the text, is what the rest of the code takes."""
    spec = parse_agent_spec(text)
    assert spec.kind == kind and spec.text == text
    assert parse_agent_spec(spec.text) == spec


def test_a_command_spec_carries_its_words() -> None:
    spec = parse_agent_spec("cmd:python3 -m agent 'two words'")
    assert isinstance(spec, CmdSpec)
    assert spec.argv == ("python3", "-m", "agent", "two words")


def test_a_predictions_spec_names_its_file_and_model() -> None:
    spec = parse_agent_spec("predictions:/data/preds.jsonl#org/model-7b")
    assert spec.kind == "predictions"
    assert (spec.file, spec.model) == (Path("/data/preds.jsonl"), "org/model-7b")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt", "unknown agent 'gpt'; use one of: gold, null, predictions:FILE"),
        ("gold:x", "agent 'gold:x' takes no argument; write it as gold"),
        ("scripted:", "agent 'scripted:' needs an argument"),
        ("commit:HEAD", "agent 'commit:HEAD' names no commit; write it as commit:SHA"),
        ("commit:", "agent 'commit:' needs an argument"),
    ],
)
def test_a_malformed_spec_is_refused_at_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, message: str
) -> None:
    """Refused before any contract is read or folder written: the contract need not exist."""
    out = tmp_path / "r"
    err = _usage_error(
        capsys, "run", str(tmp_path / "none.toml"), "--agent", spec, "--out", str(out)
    )
    assert message in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("spec", "meant"),
    [
        ("predictons:FILE.json", "predictions:FILE.json"),  # the argument is kept
        ("gld", "gold"),
        ("Gold", "gold"),  # case
        ("nul", "null"),
        ("comit:abc1234", "commit:abc1234"),
        ("baselin:gpt-4o", "baseline:gpt-4o"),
        ("scriptd", "scripted:..."),  # a kind that takes an argument, given none
        ("GOLD:x", "gold"),  # a bare kind: its argument is not offered back
    ],
)
def test_a_misspelt_agent_kind_names_the_closest_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, meant: str
) -> None:
    """``--agent predictons:FILE`` and ``--agent gld`` listed every kind but named none."""
    out = tmp_path / "r"
    err = _usage_error(
        capsys, "run", str(tmp_path / "none.toml"), "--agent", spec, "--out", str(out)
    )
    assert err == (
        f"error: unknown agent {spec!r} (did you mean {meant!r}?); use one of: gold, null, "
        "predictions:FILE, cmd:'COMMAND', scripted:FILE, baseline:MODEL, mini:MODEL, commit:SHA\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("spec", ["gpt", "python agent.py", "./run.sh", "x:y"])
def test_an_agent_kind_near_none_is_offered_none(spec: str) -> None:
    with pytest.raises(AgentSpecError) as caught:
        parse_agent_spec(spec)
    assert str(caught.value).startswith(f"unknown agent {spec!r}; use one of: gold, null")


def test_show_labels_two_command_agents_of_one_interpreter_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``cmd:python3 a.py`` and ``cmd:python3 b.py`` are two agents: a table must not show
    them alike (both used to read ``cmd:python3``)."""
    from repogate.store import Store

    with Store.create(tmp_path) as store:
        for text in ("cmd:python3 a.py", "cmd:python3 b.py", "gold"):
            store.begin_attempt("t", parse_agent_spec(text), 0)
    assert main(["show", str(tmp_path)]) == ExitCode.OK
    shown = capsys.readouterr().out
    rows = [line[1:] for line in shown.splitlines() if line[:1] in ("1", "2", "3")]
    assert len(rows) == 3 and rows[0] != rows[1], shown  # the row number aside, they differ
    assert "a.py" in rows[0] and "b.py" in rows[1] and " gold " in rows[2], shown


@pytest.mark.parametrize(
    ("agents", "twice"),
    [
        (["null", "null"], "null"),  # the shape: the same --agent given twice
        # not next to each other
        (["predictions:{p}#a", "null", "predictions:{p}#a"], "predictions:{p}#a"),
        # a predictions file of two models is one agent per model: naming one of them again
        (["predictions:{p}", "predictions:{p}#b"], "predictions:{p}#b"),
    ],
)
def test_an_agent_named_twice_is_refused_in_one_line(
    contract: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    agents: list[str],
    twice: str,
) -> None:
    """``--agent gold --agent gold`` planned one attempt but its progress counted two
    (``running [1/2]``, never 2/2); a repeat is refused rather than merged silently."""
    preds = tmp_path / "p.jsonl"
    rows = [{"instance_id": "t1", "model_name_or_path": m, "model_patch": ""} for m in "ab"]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    specs = [a.format(p=preds) for a in agents]
    code = main(
        ["run", str(contract), *(x for s in specs for x in ("--agent", s)), "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert err == (
        f"error: agent {twice.format(p=preds)!r} is named twice; name each agent once "
        "(--epochs N repeats every attempt)\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "spellings",
    [
        ("{abs}", "one.jsonl"),  # absolute, then relative to the folder repogate started in
        ("./one.jsonl", "sub/../one.jsonl"),
        ("one.jsonl", "link.jsonl"),  # a link to the same file
    ],
)
def test_one_predictions_file_spelt_two_ways_is_refused_as_named_twice(
    contract: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    spellings: tuple[str, str],
) -> None:
    """A new user's shape: ``--agent predictions:/abs/p.jsonl --agent predictions:../p.jsonl``
    ran as two agents (every contract counted twice); the file is the agent, not its spelling."""
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    row = {"instance_id": "t1", "model_name_or_path": "m", "model_patch": ""}
    (work / "one.jsonl").write_text(json.dumps(row) + "\n")
    (work / "link.jsonl").symlink_to(work / "one.jsonl")
    monkeypatch.chdir(work)
    first, second = (s.format(abs=work / "one.jsonl") for s in spellings)
    out = tmp_path / "run"
    code = main(
        [
            "run",
            str(contract),
            *("--agent", f"predictions:{first}", "--agent", f"predictions:{second}"),
            *("--out", str(out)),
        ]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert err == (
        f"error: agent 'predictions:{second}' is named twice (it is 'predictions:{first}'); name "
        "each agent once (--epochs N repeats every attempt)\n"
    )
    assert not out.exists()
