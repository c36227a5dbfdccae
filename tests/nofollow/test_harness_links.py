"""The harness never follows a link that untrusted code planted, for reads or writes (issue 8).

Each test plants links where the harness touches files after untrusted code ran: the agent's
output folder (captured output, requirements, usage), the JUnit report copy the test process can
reach, the candidate's tree (hidden test files written into it, its lockfile read and
replayed), and the environment the base's install commands built (its ``.pth`` hooks). Every test holds with or without bubblewrap:
the sandbox keeps the run folder out of reach, and these tests check the harness's own side.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _lifecycle_git import commit, diff, new_repo
from _lifecycle_git import git as lifecycle_git
from conftest import requires_bwrap, run_json
from repogate import git
from repogate.contract import Lockfile
from repogate.environments._editable import detach
from repogate.errors import EnvironmentBuildError
from repogate.gates import graded_trees
from repogate.gates.dependency import check_dependency_policy
from repogate.patches import touched_paths
from repogate.sandbox import SandboxPolicy
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario

CANARY = "canary-4711-not-for-receipts"


def _agent(tmp_path: Path, body: str) -> str:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return f"cmd:{script}"


def _all_evidence(out: Path) -> str:
    return "\n".join(
        p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and not p.is_symlink()
    )


def test_links_in_the_agent_output_folder_are_never_followed(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Threat: the agent plants ``agent.stdout.txt -> a file of the user's``, ``agent.stderr.txt
    -> another attempt's decision.json`` and ``requirements.json -> ~/.pgpass``; the harness
    writes its captured output through the first two and reads the secret into a receipt."""
    outside = tmp_path / "written-by-harness-for-agent"
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f'[{{"claim": "{CANARY}", "source": "x", "confidence": 1}}]')
    out = tmp_path / "run"
    body = (
        f'ln -s {outside} "$REPOGATE_OUTPUT/agent.stdout.txt"\n'
        f"ln -s ../../$(ls {out}/attempts | grep null)/decision.json "
        '"$REPOGATE_OUTPUT/agent.stderr.txt"\n'
        f'ln -s {pgpass} "$REPOGATE_OUTPUT/requirements.json"\n'
        "echo 'text chosen by the agent'\n"
        "echo '{\"forged\": true}' >&2\n"
    )
    code, rows = run_json(
        capsys,
        str(parser.contracts[0]),
        *("--agent", "null", "--agent", _agent(tmp_path, body), "--out", str(out)),
    )
    assert code == 0, rows
    assert not outside.exists()
    null_dir = next((out / "attempts").glob("*null*"))
    decision = json.loads((null_dir / "decision.json").read_text())
    assert "forged" not in decision
    assert decision["outcome"] == "rejected"
    with Store.open(out) as store:
        attempt = next(a for a in store.attempts() if a.agent.startswith("cmd:"))
        agent_dir = out / "attempts" / attempt.attempt_id
        assert (agent_dir / "agent.stdout.txt").read_text() == "text chosen by the agent\n"
        assert (agent_dir / "agent.stderr.txt").read_text() == '{"forged": true}\n'
        propose = next(r for r in store.receipts(attempt.attempt_id) if r.gate == "propose")
    proposal = propose.details["proposal"]
    assert proposal["refused_links"] == [
        "agent.stderr.txt",
        "agent.stdout.txt",
        "requirements.json",
    ]
    assert proposal["requirements"] is None  # the linked claims were not read
    assert CANARY not in _all_evidence(out)


def test_a_link_where_the_harness_copies_the_test_report_is_replaced(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Threat: the candidate's code, run by the tests, plants ``junit.xml -> anywhere`` beside
    the report FIFO; the harness writes its copy of the report through it."""
    target = tmp_path / "report-written-through-link"
    plant = (
        "import sys as _s, os as _o\n"
        "for _a in _s.argv:\n"
        "    if _a.startswith('--junitxml='):\n"
        "        _t = _o.path.join(_o.path.dirname(_a.split('=', 1)[1]), 'junit.xml')\n"
        "        try:\n"
        f"            _o.symlink('{target}', _t)\n"
        "        except OSError:\n"
        "            pass\n"
    )
    body = f"cat >> confparse/__init__.py <<'PY'\n{plant}PY\n"
    out = tmp_path / "run"
    code, rows = run_json(
        capsys, str(parser.contracts[0]), "--agent", _agent(tmp_path, body), "--out", str(out)
    )
    assert code == 0, rows
    assert not target.exists()
    reports = list((out / "attempts").rglob("junit.xml"))
    assert reports
    assert all(not r.is_symlink() and r.read_text().startswith("<?xml") for r in reports)


def test_hidden_tests_are_written_into_the_candidate_tree_not_through_its_links(
    tmp_path: Path,
) -> None:
    """Threat: the candidate replaces ``tests/`` by a link to a folder of the user's; the harness,
    putting the hidden tests in place, writes (or deletes) files there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_hidden.py").write_text("the user's file")
    repo, base = new_repo(tmp_path / "repo", {"tests/test_a.py": "def test_a():\n    pass\n"})
    with_hidden = commit(repo, {"tests/test_hidden.py": "def test_hidden():\n    pass\n"})
    hidden = diff(repo, base, with_hidden)
    lifecycle_git(repo, "reset", "-q", "--hard", base)
    lifecycle_git(repo, "rm", "-rq", "tests")
    (repo / "tests").symlink_to(outside)
    candidate = commit(repo, {}, "candidate: tests is a link")
    dest = tmp_path / "tree"
    graded_trees.graded_tree(repo, base, candidate, hidden, touched_paths(hidden), dest)
    assert (outside / "test_hidden.py").read_text() == "the user's file"
    assert not (dest / "tests").is_symlink()
    assert (dest / "tests" / "test_hidden.py").read_text().startswith("def test_hidden")


def test_a_lockfile_that_is_a_link_is_not_read_nor_written_through(tmp_path: Path) -> None:
    """Threat: the candidate commits ``uv.lock -> ~/.pgpass``; the harness reads the secret into
    the receipt's first difference, and its replay writes the base lockfile over the user's file."""
    secret = tmp_path / "pgpass"
    secret.write_text(CANARY)
    base, candidate = tmp_path / "base", tmp_path / "candidate"
    for tree in (base, candidate):
        tree.mkdir()
        (tree / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1.0"\n')
    (base / "uv.lock").write_text("version = 1\n")
    (candidate / "uv.lock").symlink_to(secret)
    changed = [git.ChangedPath(status="T", path="uv.lock", old_path=None, is_symlink=True)]
    seen = check_dependency_policy(
        lambda: (base, candidate), Lockfile(manager="uv"), changed, SandboxPolicy(timeout_s=60)
    )
    assert seen.checks[0].status == "failed"
    assert "uv.lock is not a regular file" in seen.checks[0].detail
    assert CANARY not in json.dumps(seen.model_dump(mode="json"))
    assert secret.read_text() == CANARY


def test_a_pth_link_planted_by_install_commands_is_neither_read_nor_rewritten(
    tmp_path: Path,
) -> None:
    """Threat: the repository's install commands plant ``x.pth -> a file of the user's`` in the
    venv; the harness, removing hooks into the build checkout, rewrites the user's file."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text(f"{checkout}\nthe user's line\n")
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "hook.pth").symlink_to(victim)
    with pytest.raises(
        EnvironmentBuildError, match=r"hook\.pth in the environment is a symbolic link"
    ):
        detach(tmp_path / "venv", checkout)
    assert victim.read_text() == f"{checkout}\nthe user's line\n"


SABOTAGE = """python3 - <<'PY'
p = 'confparse/parser.py'
s = open(p).read()
s = s.replace('"retries": 3,', '"retries": 4,')
s = s.replace('''    if value < low:
        raise ConfigError(f"{key}: {value} is below {low}")''', '''    if not low <= value <= high:
        raise ConfigError(f"{key}: {value} is outside {low}..{high}")''')
s = s.replace('''            settings["mode"] = raw
    return settings''', '''            settings["mode"] = raw
        else:
            raise ConfigError(f"unknown key {key!r}")
    return settings''')
open(p, 'w').write(s)
PY
cat >> confparse/__init__.py <<'PY'

import os as _os
for _name in ("base-for-candidate", "base-suite", "reference-graded"):
    try:
        _os.symlink("OUTSIDE/" + _name, _os.path.join(_os.path.dirname(_os.getcwd()), _name))
    except OSError:
        pass
PY
"""


@requires_bwrap
def test_test_time_code_cannot_plant_links_where_the_harness_builds_trees_later(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Threat (red team): code run by the tests links ``work/<id>/base-for-candidate`` (or
    ``base-suite``) elsewhere; the harness later builds the base tree for reruns there, through
    the link: the base's ids go missing, the regression is called flaky and a breaking patch is
    accepted, the whole-suite record is poisoned, or the harness writes a repository wherever the
    candidate chose. Test runs may write only their own tree, never the scratch folder beside it."""
    outside = tmp_path / "outside"
    body = SABOTAGE.replace("OUTSIDE", str(outside))
    out = tmp_path / "run"
    code, rows = run_json(
        capsys, str(parser.contracts[0]), "--agent", _agent(tmp_path, body), "--out", str(out)
    )
    assert code == 0, rows
    (row,) = rows
    assert row["outcome"] == "rejected", row
    assert "regression_tests_passed" in str(row["failed"])
    assert not outside.exists()
