"""Importing an instance whose tests call httpbin: the shipped env map's local httpbin answers them.

Five of six SWE-bench requests instances were rejected ``needs_network``: their tests call
httpbin.org through ``HTTPBIN_URL``. The shipped env map (``examples/tasks/env-map.toml``) starts
PyPI's ``httpbin`` on loopback inside each test run's sandbox and points ``HTTPBIN_URL`` at it. A
PASS_TO_PASS test that still needs the outside network leaves the graded set with its reason; it
no longer costs the task.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _lifecycle_git import write
from repogate import git
from repogate.cli import main
from repogate.tasks.taskset import TaskSet

pytestmark = pytest.mark.slow

ENV_MAP = Path(__file__).parents[2] / "examples" / "tasks" / "env-map.toml"

_PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "fakereq"
version = "0.1"

[tool.setuptools]
py-modules = ["fakereq"]
"""
_CODE = """import json
import urllib.request


def status(url):
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.status
"""
_JSON = """

def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())
"""
_TESTS = """import os
import urllib.request

import fakereq

HTTPBIN_URL = os.environ.get("HTTPBIN_URL", "http://httpbin.org/")


def test_status():
    assert fakereq.status(HTTPBIN_URL + "get") == 200


def test_outside():
    urllib.request.urlopen("http://repogate-test.invalid/", timeout=5)
"""
_TEST_JSON = """

def test_get_json():
    assert fakereq.get_json(HTTPBIN_URL + "get?a=1")["args"] == {"a": "1"}
"""


def test_requests_like_instance_validates_with_the_shipped_local_httpbin(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = tmp_path / "mirrors" / "psf+requests"
    git.init_repo(mirror)
    write(mirror, {"pyproject.toml": _PYPROJECT, "fakereq.py": _CODE, "tests/test_req.py": _TESTS})
    base = git.commit_all(mirror, "base")
    write(mirror, {"fakereq.py": _CODE + _JSON, "tests/test_req.py": _TESTS + _TEST_JSON})
    fix = git.commit_all(mirror, "get_json")
    row = {
        "instance_id": "psf__requests-1",
        "repo": "psf/requests",
        "base_commit": base,
        "patch": git.diff_binary(mirror, base, fix, (), ("tests/",)).decode(),
        "test_patch": git.diff_binary(mirror, base, fix, ("tests/",)).decode(),
        "FAIL_TO_PASS": ["tests/test_req.py::test_get_json"],
        "PASS_TO_PASS": ["tests/test_req.py::test_status", "tests/test_req.py::test_outside"],
        "version": "2.0",
    }
    instances = tmp_path / "i.jsonl"
    instances.write_text(json.dumps(row) + "\n")
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    out = tmp_path / "set"
    args = ["tasks", "import", str(instances), "--out", str(out), "--env-map", str(ENV_MAP)]
    assert main([*args, "--repo-cache", str(tmp_path / "mirrors")]) == 0
    taskset = TaskSet.open(out)
    assert [r.reason for r in taskset.rejected()] == []
    (task,) = taskset.tasks()
    assert task.validation.fail_to_pass == ("tests/test_req.py::test_get_json",)
    assert task.validation.pass_to_pass == ("tests/test_req.py::test_status",)
    # the test that still needs the outside network leaves grading, with its reason
    assert task.validation.dropped == {"tests/test_req.py::test_outside": "needs network"}
    contract = (out / task.contract).read_text()
    assert 'HTTPBIN_URL = "http://127.0.0.1:8765/"' in contract
    assert "tests/test_req.py::test_outside: left out of grading (needs network)" in contract
