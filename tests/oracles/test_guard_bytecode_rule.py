"""The guard's rule for which bytecode it watches agrees with the suite's test-path rule.

The guard plugin (``oracles/_guard_plugin.py``) imports nothing of repogate, so it keeps its own
copy of :func:`repogate.tasks.mine.is_test_path` for the source of an opened ``.pyc``; the copy is
read out of the plugin's file here and checked against the original on every shape of path.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from pathlib import Path

import pytest

import repogate.oracles
from repogate.tasks.mine import is_test_path


def _guard_rule() -> Callable[[str], bool]:
    """Return the plugin's ``_test_side``, compiled from its source with the names it uses."""
    source = Path(repogate.oracles.__file__).with_name("_guard_plugin.py").read_text()
    wanted: list[ast.stmt] = [
        node
        for node in ast.parse(source).body
        if (isinstance(node, ast.FunctionDef) and node.name == "_test_side")
        or (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_TEST_DIRS" for t in node.targets)
        )
    ]
    assert len(wanted) == 2
    namespace: dict[str, object] = {"os": os}
    code = compile(ast.Module(body=wanted, type_ignores=[]), "guard", "exec")
    exec(code, namespace)  # noqa: S102 (the plugin's own two definitions, nothing else)
    rule = namespace["_test_side"]
    assert callable(rule)
    return rule


SOURCES = (
    "tests/helpers.py",
    "tests/test_unit.py",
    "testing/test_collection.py",
    "test/util.py",
    "pkg/tests/data/make.py",
    "conftest.py",
    "src/pkg/conftest.py",
    "pkg/test_io.py",
    "pkg/io_test.py",
    "src/_pytest/cacheprovider.py",
    "units/extra.py",
    "units/__init__.py",
    "docs/tests.py",
    "pkg/testing_utils.py",
    "latest/contest.py",
)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize(
    "tag", ["cpython-311", "cpython-39-pytest-5.0.1", "cpython-313-pytest-9.2.0"]
)
def test_the_cache_of_a_file_is_watched_when_the_file_is_the_suite_s(source: str, tag: str) -> None:
    folder, _, name = source.rpartition("/")
    stem = name.removesuffix(".py")
    cached = f"{folder}/__pycache__/{stem}.{tag}.pyc" if folder else f"__pycache__/{stem}.{tag}.pyc"
    assert _guard_rule()(cached) is is_test_path(source)


@pytest.mark.parametrize("source", SOURCES)
def test_a_legacy_pyc_beside_its_source_is_judged_the_same(source: str) -> None:
    assert _guard_rule()(source.removesuffix(".py") + ".pyc") is is_test_path(source)


def test_the_shapes_cover_both_answers() -> None:
    answers = [is_test_path(s) for s in SOURCES]
    assert answers.count(True) == 9 and answers.count(False) == 6
