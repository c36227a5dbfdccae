"""Red team red37: gate I reads ``setup.cfg``'s test sections as pytest's own parser does too.

The end-to-end break (``[tool:pytest]#]`` with ``addopts = --import-mode=append`` and a shadowing
top-level ``test_unit.py``, accepted unfixed) is ``test_red37_setup_cfg_header.py``; these are
the parser shapes, checked against the real ``iniconfig`` pytest reads ``setup.cfg`` with.
"""

from __future__ import annotations

import configparser

import iniconfig
import pytest

from repogate.gates.imports import import_names_of_tests, shadowed_tests
from repogate.gates.integrity import oracle_edits
from repogate.git import ChangedPath

BASE = b"[metadata]\nname = units\n\n[flake8]\nmax-line-length = 100\n"
SHAPES = [
    "[tool:pytest]#]",
    "[tool:pytest];]",
    "[tool:pytest] # ]",
    "[tool:pytest]\t;comment]",
    "[tool:pytest]#",
    "[tool:pytest];x",
    "[ tool:pytest ]",
]


def _edits(after: bytes, before: bytes = BASE) -> list[str]:
    files = {"base": before, "candidate": after}
    changed = [ChangedPath(status="M", path="setup.cfg", old_path=None, is_symlink=False)]
    return oracle_edits(changed, lambda rev, path: files[rev], "base", "candidate")


@pytest.mark.parametrize("header", SHAPES)
def test_a_header_pytest_reads_as_its_section_is_test_configuration(header: str) -> None:
    after = BASE + f"\n{header}\naddopts = --import-mode=append\n".encode()
    sections = iniconfig.IniConfig("setup.cfg", after.decode()).sections
    assert "tool:pytest" in {s.strip() for s in sections}  # how pytest reads it
    assert _edits(after) == ["setup.cfg (its test configuration changed)"]


def test_configparser_alone_reads_another_section_there() -> None:
    """The root of the break: configparser's greedy header names a section gate I ignored."""
    parser = configparser.RawConfigParser()
    parser.read_string((BASE + b"\n[tool:pytest]#]\naddopts = -x\n").decode())
    assert "tool:pytest]#" in parser.sections()


def test_a_bom_before_the_section_is_read_as_pytest_reads_it() -> None:
    after = "\ufeff[tool:pytest]\naddopts = -x\n\n[flake8]\nmax-line-length = 100\n".encode()
    assert "tool:pytest" in iniconfig.IniConfig("setup.cfg", after.decode("utf-8")).sections
    assert _edits(after) == ["setup.cfg (its test configuration changed)"]


@pytest.mark.parametrize(
    "after",
    [
        BASE.replace(b"100", b"120"),  # another tool's section
        BASE + b"\n# [tool:pytest]\n",  # a comment line
        BASE + b"\n[options]\nzip_safe = false\n",
    ],
    ids=["flake8", "comment", "options"],
)
def test_other_edits_of_setup_cfg_are_not_test_configuration(after: bytes) -> None:
    assert _edits(after) == []


def test_an_edit_inside_the_real_section_is_still_seen() -> None:
    before = BASE + b"\n[tool:pytest]\naddopts = -x\n"
    assert _edits(before + b"    --import-mode=append\n", before) == [
        "setup.cfg (its test configuration changed)"
    ]
    assert _edits(before + b"# a comment\n", before) == []


TREE = (
    "tests/test_unit.py",
    "tests/test_describe.py",
    "pkgtests/__init__.py",
    "pkgtests/test_api.py",
    "units/__init__.py",
)


def _shadowed(added: str, tree: tuple[str, ...] = TREE) -> list[str]:
    paths = {*tree, added}
    names = import_names_of_tests(tree, lambda folder: f"{folder}/__init__.py" in tree)
    changed = [ChangedPath(status="A", path=added, old_path=None, is_symlink=False)]

    def read(rev: str, path: str) -> bytes | None:
        return b"" if path in paths else None

    return shadowed_tests(changed, read, "candidate", names)


@pytest.mark.parametrize(
    "added",
    [
        "test_unit.py",
        "src/test_unit.py",
        "other/test_describe.py",
        "pkgtests.py",
        "test_unit/__init__.py",
    ],
)
def test_a_new_module_named_like_a_test_module_elsewhere_is_refused(added: str) -> None:
    """The kind of the shadowing ``test_unit.py``: whatever import mode or path brings it first."""
    found = _shadowed(added)
    assert len(found) == 1 and "pytest may import it in that one's place" in found[0], found


@pytest.mark.parametrize(
    "added", ["tests/test_plural.py", "pkgtests/test_new.py", "units/helpers.py", "test_new.py"]
)
def test_a_new_test_of_its_own_name_or_package_is_allowed(added: str) -> None:
    assert _shadowed(added) == []
