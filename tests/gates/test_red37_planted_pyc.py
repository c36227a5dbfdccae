"""Red team red37: a graded test module replaced by a pyc the candidate's code writes mid-run.

pytest's assertion rewriter caches each rewritten test module in ``__pycache__`` beside it
(``test_unit.cpython-311-pytest-9.2.0.pyc``) and, on import, loads that cache instead of reading
the source when its header matches the source (pytest 9: the source's hash). The checkout is
writable while the tests run: product code imported by the first graded file wrote such a cache
for ``tests/test_unit.py`` (a code object of no-op tests, its file name the real one's), and the
second graded file was collected from it: the bug unfixed, no pytest object changed, no hook.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_regression_set import (
    BASE_CODE,
    FIXED_CODE,
    HIDDEN,
    PYPROJECT,
    TESTS,
    scripted_row,
    units_task,
)

from conftest import run_json
from repogate.cli import ExitCode

pytestmark = pytest.mark.slow

PRIME = """

def _prime():
    import importlib.metadata
    import importlib.util
    import marshal
    import pathlib
    import sys

    here = pathlib.Path(__file__).resolve().parent.parent / "tests"
    real = here / "test_unit.py"
    if not real.is_file():
        return
    tag = sys.implementation.cache_tag + "-py" + "test-" + importlib.metadata.version("py" + "test")
    body = "def test_long():\\n    pass\\n\\n\\ndef test_short():\\n    pass\\n\\n\\n"
    body += "def test_plural():\\n    pass\\n"
    head = importlib.util.MAGIC_NUMBER + bytes([3, 0, 0, 0])
    head += importlib.util.source_hash(real.read_bytes())[:8]
    cache = here / "__pycache__"
    cache.mkdir(exist_ok=True)
    code = compile(body, str(real), "exec")
    (cache / f"test_unit.{tag}.pyc").write_bytes(head + marshal.dumps(code))


_prime()
"""
DESCRIBED = "tests/test_describe.py::test_describe[1-metre-1 metre]"


HELPERS = "def plural_of(name):\n    return name + 's'\n"
HIDDEN_WITH_HELPER = (
    "\n\ndef test_plural():\n    from tests.helpers import plural_of\n\n"
    "    assert unit('metre', plural=True) == plural_of('metre')\n"
)


def _task(root: Path, hidden: str = HIDDEN, extra: dict[str, str] | None = None) -> Path:
    files = {
        "pyproject.toml": PYPROJECT,
        "units/__init__.py": BASE_CODE,
        "tests/helpers.py": HELPERS,
        **TESTS,
        **(extra or {}),
    }
    declared = ("tests/test_unit.py::test_long", "tests/test_unit.py::test_short", DESCRIBED)
    return units_task(root, files, FIXED_CODE, hidden=hidden, permissions="", pass_to_pass=declared)


def _voided(capsys: pytest.CaptureFixture[str], root: Path, contract: Path, code: str) -> None:
    """Run a candidate writing ``code`` to ``units/__init__.py``: rejected, tampering seen."""
    row = scripted_row(capsys, root, contract, {"units/__init__.py": code}, "primes")
    assert row["outcome"] == "rejected", row
    failed = row["failed"]
    assert isinstance(failed, list) and "harness_untampered" in failed, row


def test_a_test_module_cache_written_during_the_run_is_never_read(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path)
    _voided(capsys, tmp_path, contract, BASE_CODE + PRIME)


# Python's own cache of a helper the hidden test imports (timestamp-checked: mtime and size).
PRIME_HELPER = """

def _prime():
    import importlib.util
    import marshal
    import pathlib
    import struct
    import sys

    real = pathlib.Path(__file__).resolve().parent.parent / "tests" / "helpers.py"
    if not real.is_file():
        return
    info = real.stat()
    head = importlib.util.MAGIC_NUMBER + bytes(4)
    head += struct.pack("<II", int(info.st_mtime) & 0xFFFFFFFF, info.st_size & 0xFFFFFFFF)
    code = compile("def plural_of(name):\\n    return name\\n", str(real), "exec")
    cache = real.parent / "__pycache__"
    cache.mkdir(exist_ok=True)
    tag = sys.implementation.cache_tag
    (cache / f"helpers.{tag}.pyc").write_bytes(head + marshal.dumps(code))


_prime()
"""


def test_a_module_cache_written_during_the_run_is_never_read(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same with Python's own cache of ``tests/helpers.py``: the hidden test's expected
    value came from the candidate's code, and a ``plural`` argument that does nothing passed."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path, HIDDEN_WITH_HELPER)
    _voided(
        capsys,
        tmp_path,
        contract,
        BASE_CODE.replace("short=False):", "short=False, plural=False):") + PRIME_HELPER,
    )


# The same cache, written under a ``sys.pycache_prefix`` the session's code sets (outside the
# checkout: pytest then reads every cache there).
PRIME_PREFIX = PRIME.replace(
    '    cache = here / "__pycache__"\n',
    "    import tempfile\n\n"
    "    sys.pycache_prefix = tempfile.mkdtemp()\n"
    "    cache = pathlib.Path(sys.pycache_prefix, *real.parts[1:-1])\n",
).replace("cache.mkdir(exist_ok=True)", "cache.mkdir(parents=True, exist_ok=True)")


def test_a_test_module_cache_under_a_prefix_the_session_sets_is_never_read(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "sys.pycache_prefix = tempfile.mkdtemp()" in PRIME_PREFIX
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path)
    _voided(capsys, tmp_path, contract, BASE_CODE + PRIME_PREFIX)


# The same cache, in a folder elsewhere that ``tests/__pycache__`` is made a link to.
PRIME_LINK = PRIME.replace(
    '    cache = here / "__pycache__"\n    cache.mkdir(exist_ok=True)\n',
    "    import os\n    import tempfile\n\n"
    "    cache = pathlib.Path(tempfile.mkdtemp())\n"
    '    os.symlink(cache, here / "__pycache__")\n',
)


def test_a_test_module_cache_behind_a_linked_cache_folder_is_never_read(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "os.symlink(cache" in PRIME_LINK
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path)
    _voided(capsys, tmp_path, contract, BASE_CODE + PRIME_LINK)


# The project's own tests write bytecode of product modules into the checkout, and a later test
# imports such a module in the session: pytest-dev/pytest-5103's suite did (a child process with
# its own environment compiled ``src/_pytest/cacheprovider.py``), and the first bytecode watch
# voided its base run. Product bytecode is no oracle (the candidate writes product source
# anyway); only the test suite's own files are watched.
EXTRA_MODULES = {
    "units/extra.py": "VALUE = 1\n",
    "units/other.py": "VALUE = 2\n",
    "tests/test_bytecode.py": (
        "import os\nimport pathlib\nimport subprocess\nimport sys\n\n"
        "ROOT = pathlib.Path(__file__).resolve().parent.parent\n\n\n"
        "def test_a_child_with_its_own_environment_compiles_a_module():\n"
        "    env = {k: v for k, v in os.environ.items() if k != 'PYTHONDONTWRITEBYTECODE'}\n"
        "    code = 'import sys; sys.path.insert(0, \"\"); import units.extra'\n"
        "    subprocess.run([sys.executable, '-c', code], check=True, env=env, cwd=ROOT)\n"
        "    assert list((ROOT / 'units' / '__pycache__').glob('extra.*.pyc'))\n\n\n"
        "def test_the_session_writes_bytecode_itself(monkeypatch):\n"
        "    import importlib\n\n"
        "    monkeypatch.setattr(sys, 'dont_write_bytecode', False)\n"
        "    importlib.import_module('units.other')\n"
        "    sys.modules.pop('units.other')\n"
        "    assert list((ROOT / 'units' / '__pycache__').glob('other.*.pyc'))\n\n\n"
        "def test_then_imports_them_from_their_bytecode():\n"
        "    import units.extra\n"
        "    import units.other\n\n"
        "    assert (units.extra.VALUE, units.other.VALUE) == (1, 2)\n"
    ),
}


def test_product_bytecode_the_project_s_own_tests_write_is_no_tampering(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path, extra=EXTRA_MODULES)
    out = tmp_path / "run"
    status, rows = run_json(capsys, str(contract), "--agent", "gold", "--out", str(out))
    assert status == ExitCode.OK
    (row,) = rows
    assert row["outcome"] == "accepted", row
