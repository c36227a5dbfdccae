"""`--help` as a new user reads it: no `<bool>` or `<list[str]>` placeholders, nothing cut short.

New user: `repogate run --help` showed `--json <bool>` and `--agent <list[str]>` in a panel that cut
option and variable names at narrow widths, and the command list ended its lines with `...`.
"""

from __future__ import annotations

import re

import pytest
import typer

from repogate.cli import ExitCode, app, main


def _commands(group: object, path: list[str]) -> list[list[str]]:
    """Every command and group below ``group``, as argument lists (the root as ``[]``)."""
    found = [path]
    commands: dict[str, object] = getattr(group, "commands", {})  # typer's own click's Group
    for name, sub in sorted(commands.items()):
        found += _commands(sub, [*path, name])
    return found


COMMANDS = _commands(typer.main.get_command(app), [])


def _groups(group: object, path: list[str]) -> list[list[str]]:
    """Every group at or below ``group`` (the root as ``[]``): commands that take a command."""
    commands: dict[str, object] = getattr(group, "commands", {})
    if not commands:
        return []
    return [
        path,
        *(g for name, sub in sorted(commands.items()) for g in _groups(sub, [*path, name])),
    ]


GROUPS = _groups(typer.main.get_command(app), [])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "repogate")
def test_help_names_values_and_cuts_nothing(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main([*command, "--help"]) == 0
    text = capsys.readouterr().out
    options = [line.split() for line in text.splitlines() if line.startswith("  -")]
    assert options, text
    for words in options:  # `--out DIR  Run directory ...`: a metavar, never a type in brackets
        assert not words[1].startswith("<"), words
    body = "\n".join(line for line in text.splitlines() if not line.startswith("Usage:"))
    assert "…" not in body and not re.search(r"\.\.\.\s*$", body, re.MULTILINE), text
    assert "\\[" not in text, text  # no markup escape shown as text
    usage = next(line for line in text.splitlines() if line.startswith("Usage:"))
    # every argument has a metavar: `{CONTRACT.toml|DIR}...`, never the parameter's own name
    # (new user: `tasks strength` showed `{contracts}...` and `contracts... <list[Path]>`)
    assert not re.search(r"\s[{\[][a-z_]+[}\]]", usage), usage
    # an argument is named by its metavar alone, as an option is (new user: `report --help`
    # listed `RUN_DIR <list[Path]>`, a Python annotation, under Arguments)
    arguments = text.split("Arguments:", 1)[1].split("\n\n", 1)[0] if "Arguments:" in text else ""
    assert "<" not in arguments, arguments


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["report", "run-dir", "--by"], "repogate report"),
        (["tasks", "check", "c.toml", "--repeats"], "repogate tasks check"),
        (["run", "--out"], "repogate run"),
    ],
)
def test_an_option_missing_its_value_points_at_its_own_commands_help(
    argv: list[str], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """New user: `report RUN --by` said "see `repogate --help`", whose page lists no --by."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: option '--"), err
    assert err.rstrip().endswith(f"see `{command} --help` for the valid options"), err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["shwo", "runs/demo", "1"],
            "error: no such command 'shwo' (did you mean 'show'?); "
            "see `repogate --help` for the valid commands",
        ),
        (
            ["tasks", "strenght", "set"],
            "error: no such command 'strenght' (did you mean 'strength'?); "
            "see `repogate tasks --help` for the valid commands",
        ),
        (
            ["report", "run", "--htlm", "x.html"],
            "error: no such option: --htlm (possible options: --help, --html); "
            "see `repogate report --help` for the valid options",
        ),
    ],
)
def test_a_misspelt_word_is_named_with_its_suggestion_in_one_clause(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """New user: `repogate shwo` said "...'shwo'. Did you mean 'show'?; see ... for the valid
    options" (two sentences glued by a semicolon, and "options" for a command)."""
    assert main(argv) == 2
    assert capsys.readouterr().err.rstrip("\n") == expected


@pytest.mark.parametrize("command", [["run"], ["tasks", "import"], ["tasks", "mine"]])
def test_the_repository_cache_help_gives_its_layout(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """New user: `--repo-cache DIR  Local mirrors of URLs.` did not say how to lay them out."""
    monkeypatch.setenv("COLUMNS", "200")
    assert main([*command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "one per repository as owner+name/" in text and "git clone --mirror" in text, text


def _help_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What ``repogate ARGV`` prints, asserting it exits 0 and says nothing on standard error."""
    assert main(argv) == 0
    said = capsys.readouterr()
    assert said.err == "", said.err
    return said.out


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "repogate")
def test_h_prints_the_same_help_as_help(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """New user: `repogate -h` said "no such option: -h" (exit 2); every command takes it."""
    monkeypatch.setenv("COLUMNS", "80")
    long = _help_text([*command, "--help"], capsys)
    assert _help_text([*command, "-h"], capsys) == long
    assert "  -h, --help " in long, long  # the help says it takes both


@pytest.mark.parametrize("group", GROUPS, ids=lambda c: " ".join(c) or "repogate")
def test_a_group_given_no_command_prints_its_help_as_help_does(
    group: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """New user: `repogate` and `repogate tasks` alone printed `error: usage: repogate [OPTIONS]
    COMMAND ...`, the whole help squashed into one line. The help as `--help` prints it, on
    standard error (no command was given: a usage error), exit 2 unchanged."""
    monkeypatch.setenv("COLUMNS", "80")
    long = _help_text([*group, "--help"], capsys)
    assert main(group) == ExitCode.USAGE
    said = capsys.readouterr()
    assert (said.out, said.err) == ("", long)
    assert len(long.splitlines()) > 5 and "Commands:" in long, long


def test_version_option_prints_the_program_and_its_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """New user: `repogate --version` said "no such option: --version" (exit 2)."""
    from repogate._version import __version__

    assert _help_text(["--version"], capsys) == f"repogate {__version__}\n"
    # new user: `repogate version` printed the bare `0.1.0`; both say it the same
    assert _help_text(["version"], capsys) == f"repogate {__version__}\n"
    assert "  --version " in _help_text(["--help"], capsys)


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        (["show"], "Usage: repogate show [OPTIONS] RUN_DIR [N|ATTEMPT_ID]"),
        (["report"], "Usage: repogate report [OPTIONS] RUN_DIR..."),
        (["tasks", "check"], "Usage: repogate tasks check [OPTIONS] CONTRACT.toml|DIR..."),
        (["verify"], "Usage: repogate verify [OPTIONS] TARGET"),
    ],
    ids=["show", "report", "tasks-check", "verify"],
)
def test_a_required_argument_is_shown_plainly_in_the_usage_line(
    command: list[str],
    usage: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """New user: usage lines said `{RUN_DIR}`, in braces no other argument or option has."""
    monkeypatch.setenv("COLUMNS", "200")
    text = _help_text([*command, "--help"], capsys)
    assert text.splitlines()[0] == usage


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "repogate")
def test_no_usage_line_has_braces(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    usage = _help_text([*command, "--help"], capsys).splitlines()[0]
    assert "{" not in usage and "}" not in usage, usage
