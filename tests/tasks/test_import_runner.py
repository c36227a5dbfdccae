"""``tasks import`` on pytest-dev/pytest's shape: the runner under test, and its artefact ids.

Drafts of real SWE-bench-shaped instances of a real git repository (the calc history of
``_tasks_repo``), once as it is and once with pytest's own layout added at the base.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _tasks_repo import build_history, instance
from repogate import git
from repogate.tasks.ingest import Candidate
from repogate.tasks.recipe import load_env_map
from repogate.tasks.swebench import draft, read_instances

# PASS_TO_PASS of pytest-dev__pytest-5227 as SWE-bench publishes it holds these three.
ARTEFACTS = ["[", "[100%]", "[100%]------------------------------"]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("runner-import")
    return root / "mirrors" / "acme+calc", build_history(root / "mirrors" / "acme+calc")


def _draft(mirror: Path, commits: dict[str, str], tmp_path: Path, **fields: object) -> Candidate:
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps(instance(mirror, commits, **fields)) + "\n")
    (inst,) = read_instances(path)
    made = draft(inst, path, load_env_map(None), mirror.parent, "swebench")
    assert isinstance(made, Candidate), made
    return made


def test_ids_that_name_no_test_are_left_out_and_recorded(
    history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """pytest-5227 was refused ``ids_missing`` for ids no run can report ('[', '[100%]')."""
    repo, c = history
    made = _draft(repo, c, tmp_path, PASS_TO_PASS=["tests/test_calc.py::test_add", *ARTEFACTS])
    assert made.contract["oracles"]["pass_to_pass"] == ["tests/test_calc.py::test_add"]
    assert "3 declared id(s) name no test" in made.source["not_test_ids"]
    assert "'[100%]'" in made.source["not_test_ids"]


def test_ids_cut_at_a_blank_are_named_in_the_record(
    history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The record counted the cut ids only; it names the first three and counts the rest."""
    repo, c = history
    cut = [f"tests/test_calc.py::test_add[a {n}" for n in range(4)]
    made = _draft(repo, c, tmp_path, PASS_TO_PASS=["tests/test_calc.py::test_add", *cut])
    assert made.source["cut_ids"] == (
        "4 id(s) cut at a blank by SWE-bench's log parser, matched as its grading matches them "
        "(repogate.oracles.junit.match_ids): 'tests/test_calc.py::test_add[a 0', "
        "'tests/test_calc.py::test_add[a 1', 'tests/test_calc.py::test_add[a 2' and 1 more"
    )


def test_a_parametrized_id_is_kept(history: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """Only an id with no name before its brackets goes: ``test_x[True]`` is a test."""
    repo, c = history
    kept = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_add[True]"]
    made = _draft(repo, c, tmp_path, PASS_TO_PASS=kept)
    assert made.contract["oracles"]["pass_to_pass"] == kept
    assert "not_test_ids" not in made.source


def test_a_base_holding_the_runner_is_declared_runner_under_test(
    history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Detected from the base tree: the contract says the runner is under test, and its cohort."""
    repo, c = history
    made = _draft(repo, c, tmp_path)
    assert "runner_under_test" not in made.contract["oracles"]
    mirror = tmp_path / "mirrors" / "acme+pytest"
    files = {
        "calc.py": "def add(a, b):\n    return a + b\n",
        "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n",
        "src/_pytest/__init__.py": "",
        "src/pytest/__init__.py": "",
    }
    for path, text in files.items():
        (mirror / path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / path).write_text(text)
    git.init_repo(mirror)
    base = git.commit_all(mirror, "base, in pytest's layout")
    (mirror / "calc.py").write_text(files["calc.py"] + "\n\ndef sub(a, b):\n    return a - b\n")
    (mirror / "tests/test_calc.py").write_text(
        files["tests/test_calc.py"] + "\n\ndef test_sub():\n    assert calc.sub(5, 3) == 2\n"
    )
    fix = git.commit_all(mirror, "sub")
    made = _draft(mirror, {"base": base, "sub": fix}, tmp_path, repo="acme/pytest")
    assert made.contract["oracles"]["runner_under_test"] is True
    assert made.contract["cohort"]["runner"] == "under-test"
