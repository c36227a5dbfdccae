"""``tasks import`` on a mirror lacking objects of the base's history (astropy, issue 21).

The astropy snapshot on this machine lacks four blobs of 4 MiB and more (the store keeps no file
that large), one of them ``astropy/utils/iers/data/eopc04.1962-now`` in the base tree of
astropy__astropy-14995: the base commit is there, its tree cannot be checked out. The import
rejected it ``evaluator_error`` (git's "unable to read" from a fetch deep in validation), as if
repogate had failed. It is now ``base_commit_missing`` at drafting, naming what the mirror lacks.
Real parts: the calc history of ``_tasks_repo`` with one loose blob removed from its objects.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from _tasks_repo import build_history, instance
from repogate.tasks.recipe import load_env_map
from repogate.tasks.swebench import draft, read_instances
from repogate.tasks.taskset import RejectedEntry


def _blob(repo: Path, text: str) -> str:
    done = subprocess.run(
        ["git", "hash-object", "--stdin"], input=text.encode(), cwd=repo, capture_output=True
    )
    return done.stdout.decode().strip()


def _draft(mirror: Path, commits: dict[str, str], tmp_path: Path) -> object:
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps(instance(mirror, commits)) + "\n")
    (inst,) = read_instances(path)
    return draft(inst, path, load_env_map(None), mirror.parent)


def test_a_base_whose_tree_the_mirror_lacks_is_base_commit_missing(tmp_path: Path) -> None:
    mirror = tmp_path / "mirrors" / "acme+calc"
    commits = build_history(mirror)
    row = instance(mirror, commits)  # the diffs, read while the mirror is whole
    sha = _blob(mirror, "calc\n")  # README.md of the base
    (mirror / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (inst,) = read_instances(path)
    made = draft(inst, path, load_env_map(None), mirror.parent)
    assert isinstance(made, RejectedEntry), made
    assert made.reason == "base_commit_missing"
    assert sha in made.detail and "README.md" in made.detail
    assert "lacks 1 object(s)" in made.detail


def test_a_whole_mirror_drafts_as_before(tmp_path: Path) -> None:
    mirror = tmp_path / "mirrors" / "acme+calc"
    commits = build_history(mirror)
    made = _draft(mirror, commits, tmp_path)
    assert not isinstance(made, RejectedEntry), made
