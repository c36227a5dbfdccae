"""Command-line edges a new user meets: ``--out`` given a file, and the attempts table telling
the agent's own status and an interrupted attempt."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from repogate.cli import ExitCode, load_evidence, main
from repogate.cli.terminal import attempts_table
from repogate.decision import decide
from repogate.store import AttemptRecord


@pytest.mark.parametrize("below", ["", "run"])
def test_out_that_is_a_file_is_a_one_line_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], below: str
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("keep me\n")
    out = taken / below if below else taken
    code = main(["run", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert err.startswith(f"error: --out {out} is ") and err.count("\n") == 1, err
    assert str(taken) in err and "give a folder" in err
    assert taken.read_text() == "keep me\n"


def _record(
    status: str = "done", *, decided: bool = True, root: Path | None = None
) -> AttemptRecord:
    decision = None
    if decided and root is not None:
        decision = decide(
            load_evidence(root / "examples" / "evidence" / "pure-parser-function.json")
        )
    return AttemptRecord(
        attempt_id="t1__cmd-a__e0",
        contract_id="t1",
        agent="cmd:./fix.sh --fast",
        epoch=0,
        status=status,
        started_at="2026-01-05T00:00:00Z",
        decision=decision,
    )


def _text(*args: object, **kwargs: object) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=200).print(attempts_table(*args, **kwargs))  # type: ignore[arg-type]
    return buffer.getvalue()


def test_table_shows_the_agents_status_when_not_done(root: Path) -> None:
    """An agent stopped at its budget must not pass for one that finished and was judged."""
    record = _record(root=root)
    stopped = _text([record], "run", {record.attempt_id: "stopped"})
    assert "accepted" in stopped and "(agent stopped)" in stopped
    assert "cmd:fix.sh" in stopped
    done = _text([record], "run", {record.attempt_id: "done"})
    assert "(agent" not in done
    assert "(agent" not in _text([record], "run")


def test_show_calls_an_unfinished_attempt_interrupted() -> None:
    record = _record("running", decided=False)
    assert "interrupted" in _text([record], "run", interrupted=True)
    assert "interrupted" not in _text([record], "run")


def test_show_tells_a_running_attempt_from_an_interrupted_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An attempt still being worked on by a live run must not be reported as interrupted."""
    from repogate.agent_spec import GoldSpec
    from repogate.store import Store

    with Store.create(tmp_path) as store:  # holds the run directory's lock, as a live run does
        store.start_attempt(store.begin_attempt("t", GoldSpec(), 0).attempt_id)
        assert main(["show", str(tmp_path)]) == ExitCode.OK
        live = capsys.readouterr().out
        assert "running" in live and "interrupted" not in live
    # the run ends without finishing the attempt (killed)
    assert main(["show", str(tmp_path)]) == ExitCode.OK
    assert "interrupted" in capsys.readouterr().out


def test_show_calls_an_attempt_not_started_yet_not_started(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run begins every attempt in the store before the first one starts: those waiting their
    turn were shown as ``running`` (and ``interrupted`` once the run stopped), as if work on them
    had been under way."""
    from repogate.agent_spec import GoldSpec, NullSpec
    from repogate.store import Store

    with Store.create(tmp_path) as store:
        first = store.begin_attempt("t", GoldSpec(), 0)
        waiting = store.begin_attempt("t", NullSpec(), 0)
        assert waiting.status == "planned"
        store.start_attempt(first.attempt_id)
        assert main(["show", str(tmp_path)]) == ExitCode.OK
        rows = _rows(capsys.readouterr().out)
        assert rows == {"1": "running", "2": "not started"}
        assert main(["show", str(tmp_path), "2"]) == ExitCode.OK
        assert "attempt status: not started" in capsys.readouterr().out
    assert main(["show", str(tmp_path)]) == ExitCode.OK
    assert _rows(capsys.readouterr().out) == {"1": "interrupted", "2": "not started"}
    assert main(["show", str(tmp_path), "--json"]) == ExitCode.OK
    shown = json.loads(capsys.readouterr().out)
    assert [(r["status"], r["evidence"]) for r in shown] == [
        ("running", "unfinished"),
        ("planned", "unfinished"),
    ]


def _rows(table: str) -> dict[str, str]:
    """Row number to verdict column of ``show``'s table (the verdict may be two words)."""
    found = {}
    for line in table.splitlines():
        words = line.split()
        if words and words[0].isdigit():
            verdict = " ".join(words[4:6]) if words[4:6] == ["not", "started"] else words[4]
            found[words[0]] = verdict
    return found


@pytest.mark.parametrize("command", ["show", "report"])
@pytest.mark.parametrize("below", ["", "run"])
def test_a_file_given_as_the_run_directory_is_named_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, below: str
) -> None:
    """A file is not a run directory that "does not exist": the message names what it is."""
    taken = tmp_path / "notes.txt"
    taken.write_text("keep me\n")
    run_dir = taken / below if below else taken
    assert main([command, str(run_dir)]) == ExitCode.USAGE
    where = "is a file" if not below else f"is below the file {taken}"
    assert capsys.readouterr().err == (
        f"error: run directory {run_dir} {where}; give the --out folder of a repogate run\n"
    )
    assert taken.read_text() == "keep me\n"


@pytest.mark.parametrize("content", [None, "notes.txt"])
def test_tasks_check_on_a_folder_that_is_not_a_task_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    """A folder without ``tasks.jsonl`` must get one line saying so, not "Is a directory"."""
    folder = tmp_path / "not-a-set"
    folder.mkdir()
    if content:
        (folder / content).write_text("x\n")
    code = main(["tasks", "check", str(folder)])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "; " in err, err
    assert "Is a directory" not in err
    assert str(folder) in err and "tasks.jsonl" in err


def test_report_html_into_a_missing_folder_creates_it_and_says_so(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ``pytest --junitxml`` and ``coverage html`` do, a missing folder is made; the user is
    told which (never silently), and ``--help`` says so."""
    run = _one_attempt_run(root, tmp_path / "run")
    page = tmp_path / "site" / "reports" / "page.html"
    assert main(["report", str(run), "--html", str(page)]) == ExitCode.OK
    err = capsys.readouterr().err
    assert page.is_file()
    assert f"wrote {page} (created 2 folders: {tmp_path / 'site'}, {page.parent})\n" in err
    assert main(["report", "--help"]) == ExitCode.OK
    helped = capsys.readouterr().out.replace("│", " ")  # the help's box borders
    assert "missing folders are created" in " ".join(helped.split())
    # one folder, none, and more than are named: the file written is named each time
    for parts, said in (
        (("one",), f" (created the folder {tmp_path / 'one'})"),
        (("one",), ""),
        (
            ("d1", "d2", "d3", "d4", "d5"),
            f" (created 5 folders: {tmp_path / 'd1'}, {tmp_path / 'd1' / 'd2'}, "
            f"{tmp_path / 'd1' / 'd2' / 'd3'} and 2 more)",
        ),
    ):
        page = tmp_path.joinpath(*parts, "page.html")
        assert main(["report", str(run), "--html", str(page)]) == ExitCode.OK
        assert capsys.readouterr().err.endswith(f"wrote {page}{said}\n")
        assert page.is_file()


def _one_attempt_run(root: Path, run: Path) -> Path:
    """A run directory holding one finished attempt (the gold agent's, accepted)."""
    from repogate.agent_spec import GoldSpec
    from repogate.store import Store

    decision = decide(load_evidence(root / "examples" / "evidence" / "pure-parser-function.json"))
    with Store.create(run) as store:
        record = store.begin_attempt("t", GoldSpec(), 0)
        store.finish_attempt(record.attempt_id, decision)
    return run


@pytest.mark.parametrize("below", ["page.html", "site/page.html"])
def test_report_html_below_a_file_names_the_file(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], below: str
) -> None:
    """``--html taken/page.html`` where ``taken`` is a file said "File exists" (or "Not a
    directory"), naming neither the file nor what to do."""
    run = _one_attempt_run(root, tmp_path / "run")
    taken = tmp_path / "taken"
    taken.write_text("keep me\n")
    page = taken / below
    assert main(["report", str(run), "--html", str(page)]) == ExitCode.USAGE
    assert capsys.readouterr().err == (
        f"error: --html {page} is below the file {taken}; "
        "give a file name in a folder (missing folders are created), e.g. report.html\n"
    )
    assert taken.read_text() == "keep me\n"


def test_the_runs_brief_counts_in_the_singular(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "1 epochs", "1 agents": the run's brief must read as English for one of each."""
    from repogate.agent_spec import GoldSpec
    from repogate.sandbox import Isolation
    from repogate.store import RunManifest, Store

    decision = decide(load_evidence(root / "examples" / "evidence" / "pure-parser-function.json"))
    iso = Isolation(kind="bwrap", network_off=True)
    run = tmp_path / "run"
    with Store.create(run) as store:
        store.write_manifest(
            RunManifest(
                agents=({"spec": "gold"},),
                contracts=(),
                selection="s",
                isolation_agent=iso,
                isolation_tests=iso,
            )
        )
        record = store.begin_attempt("t", GoldSpec(), 0)
        store.finish_attempt(record.attempt_id, decision)
    page = tmp_path / "page.html"
    assert main(["report", str(run), "--html", str(page)]) == ExitCode.OK
    shown = " ".join(capsys.readouterr().out.split())
    assert "1 agent, 0 contracts, 1 epoch<" in page.read_text()
    assert "1 epochs" not in shown + page.read_text() and "1 agents" not in shown


def _usage(block: str) -> dict[str, str]:
    """Each ``repogate`` command of a usage block (``tasks`` and ``reviews`` ones by two words) to its text,
    continuation lines joined and ``# comments`` left out."""
    usage: dict[str, str] = {}
    for line in block.splitlines():
        text = line.split("  # ", 1)[0]
        if text.startswith("repogate "):
            words = text.split()
            name = " ".join(words[1:3] if words[1] in ("tasks", "reviews") else words[1:2])
            usage[name] = text
        elif text.strip() and usage:
            usage[list(usage)[-1]] += " " + text.strip()
    return usage


def _help_options() -> dict[str, set[str]]:
    """Every command path (``run``, ``tasks mine``...) to the long options its ``--help`` lists."""
    import typer

    from repogate.cli import app

    root_cmd: Any = typer.main.get_command(app)  # a click group (typer vendors click)
    found = {}
    for name, command in root_cmd.commands.items():
        subs = getattr(command, "commands", None) or {"": command}
        for sub, leaf in subs.items():
            options = {o for p in leaf.params for o in p.opts if o.startswith("--")}
            found[f"{name} {sub}".strip()] = options - {"--help"}
    return found


def test_readme_usage_lines_name_every_option_of_each_command(root: Path) -> None:
    """The README's usage block is a new user's reference: an option ``--help`` lists and the
    block omits (``tasks mine --test-timeout``, ``tasks check --json``) is one they never find."""
    readme = (root / "README.md").read_text()
    usage = _usage(readme.split("## Commands", 1)[1].split("```sh", 1)[1].split("```", 1)[0])
    missing = []
    for path, options in _help_options().items():
        if path == "version":
            continue
        assert path in usage, f"README usage block has no line for `repogate {path}`"
        missing += [f"{path} {o}" for o in sorted(options) if o not in usage[path]]
    assert missing == []


def test_the_task_supply_synopsis_lists_exactly_the_options_of_each_command(root: Path) -> None:
    """docs/tasks.md's synopsis left out ``--test-timeout`` and ``check --repo-cache``: each
    ``tasks`` line must name every option its ``--help`` offers, and none it does not."""
    text = (root / "docs" / "tasks.md").read_text()
    usage = _usage(text.split("```sh", 1)[1].split("```", 1)[0])
    offered = _help_options()
    for path in ("tasks import", "tasks mine", "tasks check"):
        named = set(re.findall(r"--[a-z][a-z-]*", usage[path]))
        assert (path, sorted(named)) == (path, sorted(offered[path]))


@pytest.mark.parametrize(
    ("command", "shown"),
    [("report", "[cohort]"), ("run", "repogate[ray]"), ("show", "'not started'")],
)
def test_help_texts_show_their_brackets_and_no_markup(
    capsys: pytest.CaptureFixture[str], command: str, shown: str
) -> None:
    """The help is rendered as rich markup: ``[cohort]`` and ``[ray]`` vanished as tags, and
    reStructuredText's double backquotes were shown as they are (new user)."""
    assert main([command, "--help"]) == ExitCode.OK
    helped = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert shown in helped
    assert "``" not in helped
