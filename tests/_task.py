"""A small task of our own: a repository (base, fix), a contract over it, scripted agents."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from _lifecycle_git import ENV, write


def commit_at(repo: Path, files: Mapping[str, str | bytes | None], date: str, message: str) -> str:
    """Commit ``files`` in ``repo`` (made when absent) with author and committer date ``date``."""
    env = {**os.environ, **ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env, check=True)
    write(repo, {k: v for k, v in files.items() if not isinstance(v, bytes)})
    for name, data in files.items():
        if isinstance(data, bytes):
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_bytes(data)
    for args in (["add", "-A"], ["commit", "-q", "--allow-empty", "-m", message]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True)
    return done.stdout.decode().strip()


def toml_list(values: Sequence[str]) -> str:
    return json.dumps(list(values))


def make_task(
    root: Path,
    base: Mapping[str, str | bytes | None],
    fix: Mapping[str, str | None],
    *,
    install: Sequence[str],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str] = (),
    editable: Sequence[str] = ("**",),
    environment: str = "",
    oracles: str = "",
    name: str = "contract.toml",
    date: str = "2024-06-01T00:00:00Z",
) -> tuple[Path, str, str]:
    """Build ``root/repo`` (commits base, fix) and ``root/<name>``; return (contract, base, fix).

    The hidden tests are the fix commit's ``tests/``, the reference the rest of the fix.
    """
    repo = root / "repo"
    base_sha = commit_at(repo, base, date, "base")
    fix_sha = commit_at(repo, fix, date, "fix")
    text = f"""
id = "{name.removesuffix(".toml")}"
repo = "repo"
base_commit = "{base_sha}"

[requirement]
statement = "make the graded tests pass"

[[requirement.criteria]]
id = "R1"
claim = "the FAIL_TO_PASS tests pass"
oracles = {toml_list(fail_to_pass)}

[environment]
install = {toml_list(install)}
{environment}

[permissions]
editable = {toml_list(editable)}
time_budget_s = 60

[oracles]
hidden_tests = {{ commit = "{fix_sha}", paths = ["tests/"] }}
fail_to_pass = {toml_list(fail_to_pass)}
pass_to_pass = {toml_list(pass_to_pass)}
{oracles}

[reference]
commit = "{fix_sha}"
exclude = ["tests/"]
"""
    path = root / name
    path.write_text(text, encoding="utf-8")
    return path, base_sha, fix_sha


def scripted(root: Path, name: str, files: Mapping[str, str]) -> str:
    """Write a scripted agent that writes ``files``; return its ``--agent`` spec."""
    edits = "".join(
        f"[[edit]]\npath = {json.dumps(path)}\nwrite = {json.dumps(text)}\n"
        for path, text in files.items()
    )
    spec = root / f"{name}.toml"
    spec.write_text(f'description = "{name}"\n{edits}', encoding="utf-8")
    return f"scripted:{spec}"


def run_rows(
    contract: Path, agents: Sequence[str], out: Path, capsys: Any
) -> tuple[list[dict[str, Any]], str]:
    """Run ``agents`` on ``contract`` into ``out`` (``run --json``); return its rows and stderr."""
    from repogate.cli import main

    main(
        [
            "run",
            str(contract),
            *[a for s in agents for a in ("--agent", s)],
            "--out",
            str(out),
            "--json",
        ]
    )
    said = capsys.readouterr()
    rows: list[dict[str, Any]] = json.loads(said.out)
    return rows, str(said.err)


def verdicts(rows: Sequence[Mapping[str, object]]) -> dict[str, str]:
    """Map each row's agent (scripted specs by file stem) to its outcome."""
    found = {}
    for row in rows:
        agent = str(row["agent"])
        key = Path(agent.removeprefix("scripted:")).stem if agent.startswith("scripted:") else agent
        found[key] = str(row["outcome"])
    return found


def check_detail(out: Path, name: str) -> str:
    """Return the detail of check ``name`` in the first attempt's decision under run ``out``."""
    from repogate.store import Store

    with Store.open(out) as store:
        decision = store.attempts()[0].decision
    assert decision is not None
    return next(c.detail for c in decision.checks if c.name == name)
