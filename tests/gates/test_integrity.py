"""Gate I on real candidate commits: each rule closes one way patches have fooled graders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from _venv_record import make_venv, site_packages, uv_record
from repogate import git
from repogate._toolchain import find_python
from repogate.contract import Permissions
from repogate.errors import EnvironmentBuildError
from repogate.gates.imports import environment_names
from repogate.gates.integrity import check_integrity
from repogate.receipt import Check


def _sh(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (root / "tests" / "test_mod.py").write_text(
        "from pkg.mod import f\n\ndef test_f():\n    assert f() == 2\n"
    )
    (root / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\nversion = "1"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    )
    (root / "setup.cfg").write_text("[metadata]\nname = pkg\n\n[tool:pytest]\ntestpaths = tests\n")
    git.init_repo(root)
    git.commit_all(root, "base")
    return root


def _check(
    repo: Path,
    edits: dict[str, str | None],
    permissions: Permissions | None = None,
    hidden: tuple[str, ...] = (),
    importable: frozenset[str] = frozenset(),
) -> dict[str, Check]:
    base = git.rev_parse(repo, "HEAD")
    for path, content in edits.items():
        target = repo / path
        if content is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
    candidate = git.commit_candidate(repo, "candidate")
    changed = git.changed_paths(repo, base, candidate)
    patch = git.diff_binary(repo, base, candidate)
    seen = check_integrity(
        changed,
        permissions or Permissions(editable=("pkg/**",)),
        lambda rev, path: git.show_file(repo, rev, path),
        base,
        candidate,
        hidden,
        patch,
        importable,
    )
    return {c.name: c for c in seen.checks}


@pytest.mark.parametrize(
    "path",
    [
        "conftest.py",
        "pkg/conftest.py",
        "sitecustomize.py",
        "pkg/usercustomize.py",
        "pkg/zz.pth",
        "pytest_fakepass.py",
        # red team rt33: python -m pytest puts the checkout on sys.path, and pytest loads every
        # pytest11 entry point of the distributions it finds there (a failing test passed)
        "evil-0.dist-info/entry_points.txt",
        "src/evil.egg-info/entry_points.txt",
        "evil-0.dist-info/METADATA",
        "Evil-0.DIST-INFO/entry_points.txt",  # importlib.metadata matches the suffix in any case
        "pkg/Evil.Egg-Info/entry_points.txt",
    ],
)
def test_a_patch_must_not_pass_by_adding_a_test_hook(repo: Path, path: str) -> None:
    """A conftest.py, start-up hook, .pth file or pytest plugin can mark failing tests as passed:
    the patch is rejected whatever the test run says (adversarial kind 1)."""
    checks = _check(
        repo, {path: "import pytest\n", "pkg/mod.py": "def f():\n    return 2\n"}, Permissions()
    )
    assert checks["oracle_untouched"].status == "failed"
    assert path in checks["oracle_untouched"].detail


def test_package_metadata_in_the_checkout_loads_a_pytest_plugin(tmp_path: Path) -> None:
    """Why gate I refuses ``*.dist-info``/``*.egg-info`` files: ``python -m pytest`` puts the
    checkout on ``sys.path`` and loads the ``pytest11`` entry points found there, so a failing test
    passes with no conftest, ``.pth`` or ``pytest_*.py`` in sight (red team rt33)."""
    meta = tmp_path / "evil-0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 0\n")
    (meta / "entry_points.txt").write_text("[pytest11]\nevil = evilplug\n")
    (tmp_path / "evilplug.py").write_text(
        "def pytest_runtest_call(item):\n    item.runtest = lambda: None\n"
    )
    (tmp_path / "test_a.py").write_text("def test_x():\n    assert 0\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_a.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert "1 passed" in done.stdout


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("tests/test_mod.py", "def test_f():\n    pass\n"),
        ("tests/test_mod.py", None),
        (
            "pyproject.toml",
            '[project]\nname = "pkg"\nversion = "1"\n\n[tool.pytest.ini_options]\naddopts = "-q --deselect tests/test_mod.py::test_f"\n',
        ),
        ("setup.cfg", "[metadata]\nname = pkg\n\n[tool:pytest]\ntestpaths = pkg\n"),
        ("tox.ini", "[pytest]\naddopts = -k 'not test_f'\n"),
        (".github/workflows/ci.yml", "on: push\n"),
    ],
)
def test_a_patch_must_not_edit_the_tests_it_is_graded_on(
    repo: Path, path: str, content: str | None
) -> None:
    """Editing or deleting graded tests, or the configuration that selects them, is rejected and
    the edited oracle file is named (adversarial kind 3)."""
    checks = _check(repo, {path: content}, Permissions())
    assert checks["oracle_untouched"].status == "failed"
    assert path in checks["oracle_untouched"].detail


def test_agent_may_add_its_own_test_file(repo: Path) -> None:
    checks = _check(repo, {"tests/test_new_focus.py": "def test_new():\n    pass\n"}, Permissions())
    assert checks["oracle_untouched"].status == "passed"


def test_project_metadata_edit_is_not_an_oracle_edit(repo: Path) -> None:
    checks = _check(
        repo,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "2"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
        },
        Permissions(),
    )
    assert checks["oracle_untouched"].status == "passed"


@pytest.mark.parametrize(
    "path", ["reproduce_issue.py", "build/lib/pkg/mod.py", "scratch/notes.txt"]
)
def test_stray_files_outside_the_permitted_paths_are_named(repo: Path, path: str) -> None:
    """A reproduction script, or a whole build/lib copy of the package, is not the change asked
    for: the stray path is named by edits_permitted (adversarial kind 6)."""
    checks = _check(repo, {path: "print('repro')\n", "pkg/mod.py": "def f():\n    return 2\n"})
    assert checks["edits_permitted"].status == "failed"
    assert path in checks["edits_permitted"].detail
    assert checks["oracle_untouched"].status == "passed"


def test_forbidden_glob_wins_over_editable(repo: Path) -> None:
    checks = _check(
        repo,
        {"pkg/_vendor/x.py": "x = 1\n"},
        Permissions(editable=("pkg/**",), forbidden=("pkg/_vendor/**",)),
    )
    assert checks["edits_permitted"].status == "failed"
    assert "forbidden" in checks["edits_permitted"].detail


def test_files_the_hidden_tests_touch_are_oracle(repo: Path) -> None:
    checks = _check(
        repo, {"pkg/check_data.json": "{}"}, Permissions(), hidden=("pkg/check_data.json",)
    )
    assert checks["oracle_untouched"].status == "failed"
    assert "hidden tests" in checks["oracle_untouched"].detail


def test_clean_patch_passes_both(repo: Path) -> None:
    checks = _check(repo, {"pkg/mod.py": "def f():\n    return 2\n"})
    assert checks["edits_permitted"].status == "passed"
    assert checks["oracle_untouched"].status == "passed"


MONKEY = """
import _pytest.reports as _r

_orig = _r.TestReport.from_item_and_call


def _forged(item, call):
    report = _orig(item, call)
    report.outcome = "passed"
    return report


_r.TestReport.from_item_and_call = staticmethod(_forged)
"""


@pytest.mark.parametrize(
    "code",
    [
        MONKEY,
        "import sys\nsys.modules['pytest'].main = lambda *a, **k: 0\n",
        "pytest_plugins = ['pkg.helper']\n",
        "import os\nos.environ['PYTEST_ADDOPTS'] = '-p pkg.helper'\n",
        "import sys\nif 'pytest' in sys.modules:\n    f = lambda: 2\n",
        "import os\nif os.environ.get('PYTEST_CURRENT_TEST'):\n    f = lambda: 2\n",
        "import atexit, sys\natexit.register(lambda: open([a for a in sys.argv if 'junit' in a][0], 'w'))\n",
    ],
)
def test_library_code_must_not_reach_into_the_test_runner(repo: Path, code: str) -> None:
    """A patch to an allowed source file that rewrites pytest's reports passes every graded test
    while fixing nothing: rejected (adversarial kind 1, from library code instead of a conftest)."""
    checks = _check(repo, {"pkg/mod.py": "def f():\n    return 1\n" + code})
    assert checks["oracle_untouched"].status == "failed"
    assert "pkg/mod.py (reaches into the test runner" in checks["oracle_untouched"].detail
    assert checks["edits_permitted"].status == "passed"


@pytest.mark.parametrize(
    "path",
    [
        "tests/pytest.ini",
        "pkg/tox.ini",
        "pytest.py",
        "_pytest/reports.py",
        "pytest.toml",  # pytest 9's own file, first in its order (red team 2026-12-02)
        ".pytest.toml",
        "tests/pytest.toml",
    ],
)
def test_configuration_and_runner_shadows_at_any_depth_are_oracle(repo: Path, path: str) -> None:
    """A new pytest.ini beside the tests, or a module shadowing pytest itself, changes how the
    graded tests run and report."""
    checks = _check(repo, {path: "[pytest]\n"}, Permissions())
    assert checks["oracle_untouched"].status == "failed"
    assert path in checks["oracle_untouched"].detail


def test_compiled_bytecode_is_not_a_source_change(repo: Path) -> None:
    """A .pyc in the patch runs instead of its unchanged source: the fix never appears in the
    source a reviewer reads (and its code escapes every check on added lines)."""
    checks = _check(repo, {"pkg/__pycache__/mod.cpython-311.pyc": "\x00compiled"})
    assert checks["edits_permitted"].status == "failed"
    assert "compiled bytecode" in checks["edits_permitted"].detail


@pytest.mark.parametrize(
    "path", ["tests/__init__.py", "tests/unit/__init__.py", "tests/helpers.py"]
)
def test_new_non_test_module_among_the_tests_is_oracle(repo: Path, path: str) -> None:
    """A new tests/__init__.py runs before the graded tests and can patch the library they test."""
    checks = _check(repo, {path: "import pkg.mod\npkg.mod.f = lambda: 2\n"}, Permissions())
    assert checks["oracle_untouched"].status == "failed"
    assert path in checks["oracle_untouched"].detail


@pytest.mark.parametrize(
    "codec", ["utf-7", "UTF7", "cp037", "utf-16", "shift_jis", "no-such-codec"]
)
def test_a_coding_cookie_that_hides_code_is_refused(repo: Path, codec: str) -> None:
    """With ``coding: utf-7`` a "comment" decodes to code Python runs (red team, utf7-cookie):
    any codec that does not read ASCII as ASCII is refused, in any changed file."""
    hidden = "+AAo-import os"  # utf-7 for a newline, then a line the diff shows as a comment
    checks = _check(repo, {"pkg/mod.py": f"# -*- coding: {codec} -*-\n# shim {hidden}\n"})
    assert checks["edits_permitted"].status == "failed"
    assert f"pkg/mod.py (coding cookie {codec!r}" in checks["edits_permitted"].detail


@pytest.mark.parametrize("codec", ["utf-8", "latin-1", "ascii", "cp1252", "iso-8859-15"])
def test_an_ascii_preserving_coding_cookie_is_fine(repo: Path, codec: str) -> None:
    checks = _check(repo, {"pkg/mod.py": f"#!/usr/bin/env python\n# coding={codec}\nx = 1\n"})
    assert checks["edits_permitted"].status == "passed", checks["edits_permitted"].detail


@pytest.mark.parametrize(
    "path",
    [
        "pkg/mod.cpython-311-x86_64-linux-gnu.so",
        "pkg/mod.abi3.so",
        "pkg/_speed.so",
        "pkg/mod.pyd",
        "pkg/helper.dll",
        "pkg/libhelper.dylib",
    ],
)
def test_a_native_extension_module_is_refused(repo: Path, path: str) -> None:
    """A compiled module beside ``mod.py`` is imported instead of it (red team, so-shadow)."""
    checks = _check(repo, {path: "\x7fELF not really"})
    assert checks["edits_permitted"].status == "failed"
    assert f"{path} (a native extension" in checks["edits_permitted"].detail


INSTALLED = frozenset({"iniconfig", "pluggy", "packaging", "json", "pkg"})


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("iniconfig/__init__.py", "iniconfig"),
        ("packaging.py", "packaging.py"),
        ("json/__init__.py", "json"),
        ("src/pluggy/__init__.py", "src/pluggy"),
        ("tools/json.py", "tools/json.py"),  # a folder without __init__.py: a top-level module
        ("repogate_guard.py", "repogate_guard.py"),  # the harness's own plugin
        # imported by site at the interpreter's start, before the harness's bootstrap runs, when
        # the checkout (an editable install's folder) is on sys.path: ahead of the guard's key
        ("sitecustomize.py", "sitecustomize.py"),
        ("src/usercustomize.py", "src/usercustomize.py"),
    ],
)
def test_a_new_top_level_module_shadowing_an_installed_one_is_refused(
    repo: Path, path: str, where: str
) -> None:
    """``python -m pytest`` puts the checkout first on sys.path: a new top-level ``iniconfig/``
    is imported by pytest itself instead of its dependency (red team, shadow-pytest-dependency)."""
    checks = _check(repo, {path: "x = 1\n"}, Permissions(), importable=INSTALLED)
    assert checks["oracle_untouched"].status == "failed"
    assert f"{where} (a new top-level module" in checks["oracle_untouched"].detail


@pytest.mark.parametrize("path", ["pkg/json.py", "pkg/packaging/__init__.py", "pkg/new.py"])
def test_submodules_and_the_projects_own_package_do_not_shadow(repo: Path, path: str) -> None:
    """``pkg/json.py`` is ``pkg.json``; ``pkg`` itself (installed editable) was there at the base."""
    (repo / "pkg" / "__init__.py").write_text("")
    git.commit_all(repo, "package")
    checks = _check(repo, {path: "x = 1\n"}, importable=INSTALLED)
    assert checks["oracle_untouched"].status == "passed", checks["oracle_untouched"].detail
    assert checks["edits_permitted"].status == "passed"


def test_environment_names_lists_installed_and_standard_modules() -> None:
    """Read from a real venv (this one), in the sandbox: pytest's dependencies and the stdlib."""
    names = environment_names(uv_record(Path(sys.prefix)))
    assert {"iniconfig", "pluggy", "_pytest", "pytest", "json", "sys", "importlib"} <= names
    assert "repogate_not_a_module" not in names


def test_environment_names_lists_the_venvs_site_packages_and_its_bases_only_when_asked(
    tmp_path: Path,
) -> None:
    """``-S`` leaves ``sys.prefix`` at the base interpreter: its site-packages were listed and
    the venv's own, where the environment's packages are, never were (a new ``requests.py``
    beside an installed ``requests`` passed). The venv's folders are found as ``site`` finds
    them (``pyvenv.cfg`` beside or above the interpreter), the base's only with
    ``include-system-site-packages = true``."""
    venv = make_venv(tmp_path / "venv")
    installed = site_packages(venv)
    (installed / "probe_pkg").mkdir()
    (installed / "probe_pkg" / "__init__.py").write_text("")
    (installed / "probe_mod.py").write_text("")
    (installed / "probe_pkg-1.0.dist-info").mkdir()
    (installed / "pytest").mkdir()  # required in every list (the oracle's runner)
    real = (venv / "bin" / "python").resolve()
    base = next(real.parent.parent.glob("lib/python3.*/site-packages"))
    stdlib = set(sys.stdlib_module_names)
    listed = {  # what is importable from the base's site-packages, as gate I counts it
        e.name.split(".", 1)[0]
        for e in base.iterdir()
        if not e.name.endswith((".dist-info", ".egg-info", ".pth")) and e.name != "__pycache__"
    }
    base_only = (
        {n for n in listed if n.isidentifier()} - stdlib - {"probe_pkg", "probe_mod", "pytest"}
    )

    names = environment_names(uv_record(venv))
    assert {"probe_pkg", "probe_mod", "json"} <= names
    assert not names & base_only

    cfg = venv / "pyvenv.cfg"
    cfg.write_text(
        cfg.read_text().replace("system-site-packages = false", "system-site-packages = true")
    )
    names = environment_names(uv_record(venv, cache_key="with-system"))
    assert {"probe_pkg", "probe_mod", "json"} | base_only <= names


DEBIAN_PYTHON = Path("/usr/bin/python3")


@pytest.mark.skipif(not DEBIAN_PYTHON.exists(), reason="no /usr/bin/python3 on this machine")
@pytest.mark.parametrize("system", [False, True], ids=["own", "with-system"])
def test_environment_names_lists_a_distribution_pythons_venv(tmp_path: Path, system: bool) -> None:
    """Red team 2026-12-02: on a venv made from Debian's ``/usr/bin/python3`` (a patched
    ``site``), ``site.getsitepackages([venv])`` names ``venv/local/lib/python3.X/dist-packages``
    and others that do not exist, never ``venv/lib/python3.X/site-packages``: no installed
    package was listed, and a new top-level ``iniconfig/__init__.py`` passed
    ``oracle_untouched``. The venv's own folders are listed wherever its interpreter came from;
    with ``include-system-site-packages`` the base's (as its own ``site`` names them) as well."""
    venv = make_venv(tmp_path / "venv", python=DEBIAN_PYTHON)
    installed = site_packages(venv)
    for name in ("pytest", "probe_pkg"):
        (installed / name).mkdir()
        (installed / name / "__init__.py").write_text("")
    (installed / "probe_mod.py").write_text("")
    if system:
        cfg = venv / "pyvenv.cfg"
        cfg.write_text(
            cfg.read_text().replace("system-site-packages = false", "system-site-packages = true")
        )

    names = environment_names(uv_record(venv, cache_key=f"debian-{system}"))

    assert {"pytest", "probe_pkg", "probe_mod", "json"} <= names


def test_environment_names_fails_closed_without_pytest(tmp_path: Path) -> None:
    """A list lacking ``pytest`` (the oracle's runner, installed in every graded environment)
    missed the environment's site-packages: gate I would pass a module shadowing any installed
    package. The list is refused (gate I errors) instead of trusted."""
    venv = make_venv(tmp_path / "venv")
    (site_packages(venv) / "probe_mod.py").write_text("")
    with pytest.raises(OSError, match="pytest"):
        environment_names(uv_record(venv, cache_key="no-pytest"))
    (site_packages(venv) / "pytest").mkdir()
    assert {"pytest", "probe_mod"} <= environment_names(uv_record(venv, cache_key="pytest"))


@pytest.mark.parametrize("version", ["3.7", "3.9"])
def test_environment_names_on_a_python_without_stdlib_module_names(
    version: str, tmp_path: Path
) -> None:
    """``sys.stdlib_module_names`` is new in Python 3.10: on marshmallow-1745's Python 3.9 gate I
    crashed (``edits_permitted`` an error for gold). Older interpreters list their standard
    library's folders instead. The interpreter is found as an environment's is (PYENV_ROOT's
    versions, else ~/.pyenv's, then PATH): a new user's machine with PYENV_ROOT set and no
    ~/.pyenv skipped this test."""
    try:
        python = find_python(version, tmp_path)
    except EnvironmentBuildError:
        pytest.skip(f"no CPython {version} on this machine (PYENV_ROOT, ~/.pyenv, PATH)")
    names = environment_names(  # a bare interpreter: no pytest to require
        uv_record(python.parent.parent, python, cache_key=version), required=()
    )
    assert {"os", "json", "sys", "collections", "math", "email"} <= names
    assert "site-packages" not in names


BUILT = ("pkg/_speed.cpython-311-x86_64-linux-gnu.so",)
"""An extension module the environment compiled in place at the base (astropy's kind)."""


BUILD_FILES = (
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "requirements/**",
    "uv.lock",
    "sub/**",
    "requirements-docs.txt",
    "MANIFEST.in",
    "*.txt",
    "VERSION",
    "README.md",
    "*.py",
    "build_tools/**",
)
"""Build files the checks below let the patch edit, so only the build rules can refuse them."""


def _check_built(
    repo: Path,
    edits: dict[str, str | None],
    prebuilt: tuple[str, ...] = BUILT,
    install: tuple[str, ...] = (),
) -> Check:
    """``edits_permitted`` of ``edits`` when the environment placed ``prebuilt`` in every tree,
    built at the base by the ``install`` commands."""
    base = git.rev_parse(repo, "HEAD")
    for path, content in edits.items():
        if content is None:
            (repo / path).unlink()
        else:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(content)
    candidate = git.commit_candidate(repo, "candidate")
    seen = check_integrity(
        git.changed_paths(repo, base, candidate),
        Permissions(editable=("pkg/**", *BUILD_FILES)),
        lambda rev, path: git.show_file(repo, rev, path),
        base,
        candidate,
        patch=git.diff_binary(repo, base, candidate),
        prebuilt=prebuilt,
        install=install,
    )
    return {c.name: c for c in seen.checks}["edits_permitted"]


@pytest.fixture
def extension_repo(repo: Path) -> Path:
    """``repo`` with a C extension's sources (``pkg/_speed.c``, its header, a Cython file)."""
    (repo / "pkg" / "_speed.c").write_text('#include "speed.h"\nlong three(void) { return 3; }\n')
    (repo / "pkg" / "speed.h").write_text("long three(void);\n")
    (repo / "pkg" / "_fast.pyx").write_text("def four():\n    return 4\n")
    (repo / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    git.commit_all(repo, "sources")
    return repo


@pytest.mark.parametrize(
    ("edits", "named"),
    [
        # red team rt33: the tests ran the base's build, so a broken C source was accepted
        ({"pkg/_speed.c": "long three(void) { return 4; }\n"}, "pkg/_speed.c"),
        ({"pkg/speed.h": "#define three() 4\n"}, "pkg/speed.h"),
        ({"pkg/_fast.pyx": "def four():\n    return 5\n"}, "pkg/_fast.pyx"),
        # the source removed and the extension dropped from the build: the base's .so still
        # answers every import in the graded trees
        ({"pkg/_speed.c": None}, "pkg/_speed.c"),
        ({"setup.py": "from setuptools import setup\nsetup(ext_modules=[])\n"}, "setup.py"),
        ({"pkg/new.cpp": "int x;\n"}, "pkg/new.cpp"),
        # templates a build expands into a source first (tempita, numpy's .src)
        ({"pkg/_gen.pyx.in": "def f():\n    return {{n}}\n"}, "pkg/_gen.pyx.in"),
        ({"pkg/loops.C.SRC": "/* @TYPE@ */\n"}, "pkg/loops.C.SRC"),
    ],
)
def test_an_edit_of_a_prebuilt_extensions_sources_is_refused(
    extension_repo: Path, edits: dict[str, str | None], named: str
) -> None:
    """The graded trees run the base's build of the extensions: an edit to what builds them is
    not what the tests run, so it is refused, naming the path and the build it bypasses."""
    check = _check_built(extension_repo, edits)
    assert check.status == "failed"
    assert f"{named} (a source of the extension modules the environment built at the base" in (
        check.detail
    )
    assert BUILT[0] in check.detail


def test_sources_may_change_when_nothing_was_prebuilt(extension_repo: Path) -> None:
    """Without an in-place build in the environment the tree's own build is what runs."""
    check = _check_built(extension_repo, {"pkg/_speed.c": "long three(void) { return 4; }\n"}, ())
    assert check.status == "passed", check.detail


@pytest.mark.parametrize("path", ["pkg/mod.py", "pkg/data.json", "pkg/notes.in", "pkg/cfg.tpl"])
def test_python_edits_pass_beside_a_prebuilt_extension(extension_repo: Path, path: str) -> None:
    """A ``.py`` edit, a data file or a template of no compiled source is graded as it stands."""
    check = _check_built(extension_repo, {path: "x = 2\n"})
    assert check.status == "passed", check.detail


EDITABLE = ("uv pip install -e . pytest",)
"""The environment installs the project from its folder (editable), as imported tasks do."""
WHY = (
    "the environment was built once, at the base, by `{command}` reading the base's {path}, so "
    "the candidate would be tested in an environment that does not match it; the harness does "
    "not rebuild the environment per candidate)"
)


@pytest.mark.parametrize(
    ("edits", "named", "what"),
    [
        # red team: a dependency the candidate's code needs is not installed in the tests' venv
        (
            {
                "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\ndependencies = ["attrs"]\n'
                '\n[tool.pytest.ini_options]\naddopts = "-q"\n'
            },
            "pyproject.toml",
            "[project] dependencies changed",
        ),
        # the installed metadata (importlib.metadata.version) stays the base's
        (
            {
                "pyproject.toml": '[project]\nname = "pkg"\nversion = "2"\n\n'
                '[tool.pytest.ini_options]\naddopts = "-q"\n'
            },
            "pyproject.toml",
            "[project] version changed",
        ),
        (
            {
                "pyproject.toml": '[build-system]\nrequires = ["hatchling"]\n\n[project]\nname = "pkg"\n'
                'version = "1"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
            },
            "pyproject.toml",
            "[build-system] changed",
        ),
        (
            {
                "setup.cfg": "[metadata]\nname = pkg\n\n[options.entry_points]\n"
                "console_scripts =\n    pkg = pkg.mod:f\n\n[tool:pytest]\ntestpaths = tests\n"
            },
            "setup.cfg",
            "[options.entry_points] changed",
        ),
        ({"setup.py": "from setuptools import setup\nsetup(name='pkg')\n"}, "setup.py", "added"),
        ({"pyproject.toml": None}, "pyproject.toml", "deleted"),
        (
            {"pyproject.toml": "[project\n"},
            "pyproject.toml",
            "changed (it does not parse on one side)",
        ),
    ],
)
def test_an_edit_of_the_build_configuration_the_environment_was_installed_from_is_refused(
    repo: Path, edits: dict[str, str | None], named: str, what: str
) -> None:
    """The environment was installed once from the base's build files: a candidate changing
    them would be tested without its change, so ``edits_permitted`` names the file and why."""
    check = _check_built(repo, edits, (), EDITABLE)
    assert check.status == "failed"
    assert check.detail == f"{named} ({what}: " + WHY.format(command=EDITABLE[0], path=named)


@pytest.mark.parametrize(
    ("install", "edits", "named"),
    [
        # a requirements file the recipe installs from, and one it includes with -r
        (
            "uv pip install -r requirements/test.txt",
            {"requirements/base.txt": "attrs==23.1\n"},
            "requirements/base.txt",
        ),
        (
            "uv pip install -r requirements/test.txt",
            {"requirements/test.txt": "-r base.txt\npytest==8.0\n"},
            "requirements/test.txt",
        ),
        # uv sync reads the lockfile too
        ("uv sync", {"uv.lock": "version = 1\n# moved\n"}, "uv.lock"),
        # behind env's settings, as pytest-dev's recipes install it
        ("env A=1 uv sync", {"uv.lock": None}, "uv.lock"),
        # a project installed from a sub-folder
        (
            "pip install ./sub[test]",
            {"sub/pyproject.toml": '[project]\nname = "s"\nversion = "2"\n'},
            "sub/pyproject.toml",
        ),
    ],
)
def test_requirements_lockfiles_and_sub_projects_an_install_read_are_build_configuration(
    repo: Path, install: str, edits: dict[str, str | None], named: str
) -> None:
    (repo / "requirements").mkdir()
    (repo / "requirements" / "test.txt").write_text("-r base.txt\npytest\n")
    (repo / "requirements" / "base.txt").write_text("attrs\n")
    (repo / "uv.lock").write_text("version = 1\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "pyproject.toml").write_text('[project]\nname = "s"\nversion = "1"\n')
    git.commit_all(repo, "build files")
    check = _check_built(repo, edits, (), (install,))
    assert check.status == "failed"
    assert check.detail.startswith(f"{named} (")
    assert WHY.format(command=install, path=named) in check.detail


@pytest.mark.parametrize(
    ("install", "edits"),
    [
        # what no install reads: a linter's table, a description, an untouched requirements file
        (
            EDITABLE,
            {
                "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\ndescription = "d"\n\n'
                '[tool.pytest.ini_options]\naddopts = "-q"\n\n[tool.ruff]\nline-length = 99\n'
            },
        ),
        (
            EDITABLE,
            {
                "setup.cfg": "[metadata]\nname = pkg\n\n[flake8]\nmax-line-length = 99\n\n"
                "[tool:pytest]\ntestpaths = tests\n"
            },
        ),
        (EDITABLE, {"requirements-docs.txt": "sphinx\n", "MANIFEST.in": "include *.md\n"}),
        # the environment does not install the project: its build files are read by nothing
        (("uv pip install pytest",), {"setup.py": "from setuptools import setup\nsetup()\n"}),
        ((), {"pyproject.toml": '[project]\nname = "pkg"\nversion = "2"\n'}),
    ],
)
def test_build_files_no_install_read_may_change(
    repo: Path, install: tuple[str, ...], edits: dict[str, str | None]
) -> None:
    check = _check_built(repo, edits, (), install)
    assert check.status == "passed", check.detail


HATCH = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
"""A hatchling project's build system (its version, hooks and metadata read from files)."""
DYNAMIC = '[project]\nname = "pkg"\ndynamic = ["version"]\n\n'
MODULE = '"""The package."""\n\n__version__ = "1.0"\n\n\ndef g():\n    return 1\n'
"""A package module holding the version beside ordinary code."""


def _declared_check(
    repo: Path,
    base: dict[str, str],
    edits: dict[str, str | None],
    install: tuple[str, ...] = EDITABLE,
) -> Check:
    """``edits_permitted`` of ``edits`` on a base of ``repo`` with ``base`` committed over it."""
    for path, text in base.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git.commit_all(repo, "declared build inputs")
    return _check_built(repo, edits, (), install)


@pytest.mark.parametrize(
    ("base", "edits", "named", "what"),
    [
        # red team 1: hatchling reads the version from the file [tool.hatch.version] names
        (
            {
                "pyproject.toml": HATCH
                + DYNAMIC
                + '[tool.hatch.version]\npath = "pkg/__about__.py"\n',
                "pkg/__about__.py": '__version__ = "1.0.0"\n',
            },
            {"pkg/__about__.py": '__version__ = "2.0.0"\n'},
            "pkg/__about__.py",
            "the version in it changed, '1.0.0' -> '2.0.0'; pyproject.toml's "
            "[tool.hatch.version] path names it",
        ),
        # the version line deleted: hatchling finds no version any more
        (
            {
                "pyproject.toml": HATCH
                + DYNAMIC
                + '[tool.hatch.version]\npath = "pkg/__about__.py"\n',
                "pkg/__about__.py": '__version__ = "1.0.0"\n',
            },
            {"pkg/__about__.py": "# moved\n"},
            "pkg/__about__.py",
            "the version in it changed, '1.0.0' -> none; pyproject.toml's "
            "[tool.hatch.version] path names it",
        ),
        # a custom pattern is the one hatchling searches with
        (
            {
                "pyproject.toml": HATCH
                + DYNAMIC
                + '[tool.hatch.version]\npath = "pkg/ver.txt"\npattern = "v=(?P<version>.+)"\n',
                "pkg/ver.txt": "v=1\n",
            },
            {"pkg/ver.txt": "v=2\n"},
            "pkg/ver.txt",
            "the version in it changed, '1' -> '2'; pyproject.toml's [tool.hatch.version] "
            "path names it",
        ),
        # setuptools reads the version from a module attribute (statically, or by importing it)
        (
            {
                "pyproject.toml": DYNAMIC
                + '[tool.setuptools.dynamic]\nversion = {attr = "pkg.__version__"}\n',
                "pkg/__init__.py": MODULE,
            },
            {"pkg/__init__.py": MODULE.replace('"1.0"', '"2.0"')},
            "pkg/__init__.py",
            "its __version__ changed, __version__ = '1.0' -> __version__ = '2.0'; "
            "pyproject.toml's [tool.setuptools.dynamic] version names it",
        ),
        # ... or from a file, read whole
        (
            {
                "pyproject.toml": DYNAMIC
                + '[tool.setuptools.dynamic]\nversion = {file = "VERSION"}\n',
                "VERSION": "1.0\n",
            },
            {"VERSION": "2.0\n"},
            "VERSION",
            "changed; pyproject.toml's [tool.setuptools.dynamic] version names it",
        ),
        # setuptools_scm writes the version file at build time: the candidate's copy is not it
        (
            {
                "pyproject.toml": DYNAMIC + '[tool.setuptools_scm]\nwrite_to = "pkg/_version.py"\n',
                "pkg/_version.py": 'version = "1.0"\n',
            },
            {"pkg/_version.py": 'version = "9.0"\n'},
            "pkg/_version.py",
            "changed; pyproject.toml's [tool.setuptools_scm] write_to names it",
        ),
        # a hatch metadata hook is code the build runs (hatch_build.py by default)
        (
            {
                "pyproject.toml": HATCH + DYNAMIC + "[tool.hatch.metadata.hooks.custom]\n",
                "hatch_build.py": "from hatchling.metadata.plugin.interface import "
                "MetadataHookInterface\n",
            },
            {"hatch_build.py": "import os\n"},
            "hatch_build.py",
            "changed; pyproject.toml's [tool.hatch.metadata.hooks.custom] names it",
        ),
        # pdm-backend's file source: the __version__ it finds in the file
        (
            {
                "pyproject.toml": '[build-system]\nrequires = ["pdm-backend"]\n'
                'build-backend = "pdm.backend"\n\n'
                + DYNAMIC
                + '[tool.pdm.version]\nsource = "file"\npath = "pkg/__init__.py"\n',
                "pkg/__init__.py": MODULE,
            },
            {"pkg/__init__.py": MODULE.replace('"1.0"', '"1.1"')},
            "pkg/__init__.py",
            "the version in it changed, '1.0' -> '1.1'; pyproject.toml's [tool.pdm.version] "
            "path names it",
        ),
        # flit_core reads a dynamic version from the module's __version__
        (
            {
                "pyproject.toml": '[build-system]\nrequires = ["flit_core"]\n'
                'build-backend = "flit_core.buildapi"\n\n'
                '[project]\nname = "pkg"\ndynamic = ["version", "description"]\n',
                "pkg/__init__.py": MODULE,
            },
            {"pkg/__init__.py": MODULE.replace('"1.0"', '"3.0"')},
            "pkg/__init__.py",
            "its __version__ changed, __version__ = '1.0' -> __version__ = '3.0'; "
            "flit_core reads it for pyproject.toml's dynamic version",
        ),
        # red team 2: setuptools reads the dependencies from a requirements file
        (
            {
                "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\n'
                'dynamic = ["dependencies", "optional-dependencies"]\n\n'
                '[tool.setuptools.dynamic]\ndependencies = {file = ["requirements.txt"]}\n'
                'optional-dependencies.test = {file = ["requirements-test.txt"]}\n',
                "requirements.txt": "attrs\n",
                "requirements-test.txt": "pytest\n",
            },
            {"requirements.txt": "attrs\nrich\n"},
            "requirements.txt",
            "changed; pyproject.toml's [tool.setuptools.dynamic] dependencies names it",
        ),
        (
            {
                "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\n'
                'dynamic = ["optional-dependencies"]\n\n'
                "[tool.setuptools.dynamic]\n"
                'optional-dependencies.test = {file = ["requirements-test.txt"]}\n',
                "requirements-test.txt": "pytest\n",
            },
            {"requirements-test.txt": "pytest\nhypothesis\n"},
            "requirements-test.txt",
            "changed; pyproject.toml's [tool.setuptools.dynamic] optional-dependencies names it",
        ),
        # red team 5: a hatchling build hook (hatch_build.py by default, or the path named)
        (
            {
                "pyproject.toml": HATCH
                + '[project]\nname = "pkg"\nversion = "1"\n\n[tool.hatch.build.hooks.custom]\n',
                "hatch_build.py": "x = 1\n",
            },
            {"hatch_build.py": "x = 2\n"},
            "hatch_build.py",
            "changed; pyproject.toml's [tool.hatch.build.hooks.custom] names it",
        ),
        (
            {
                "pyproject.toml": HATCH + '[project]\nname = "pkg"\nversion = "1"\n\n'
                '[tool.hatch.build.targets.wheel.hooks.custom]\npath = "build_tools/hook.py"\n',
                "build_tools/hook.py": "x = 1\n",
            },
            {"build_tools/hook.py": "x = 2\n"},
            "build_tools/hook.py",
            "changed; pyproject.toml's [tool.hatch.build.targets.wheel.hooks.custom] names it",
        ),
        # poetry's build script
        (
            {
                "pyproject.toml": '[build-system]\nrequires = ["poetry-core"]\n'
                'build-backend = "poetry.core.masonry.api"\n\n'
                '[tool.poetry]\nname = "pkg"\nversion = "1"\n\n'
                '[tool.poetry.build]\nscript = "build.py"\n',
                "build.py": "def build(setup_kwargs):\n    pass\n",
            },
            {"build.py": None},
            "build.py",
            "deleted; pyproject.toml's [tool.poetry.build] script names it",
        ),
        # setup.cfg's attr: directive, as pyproject's
        (
            {
                "pyproject.toml": '[project]\nname = "pkg"\ndynamic = ["version"]\n',
                "setup.cfg": "[metadata]\nname = pkg\nversion = attr: pkg.__version__\n",
                "pkg/__init__.py": MODULE,
            },
            {"pkg/__init__.py": MODULE.replace('"1.0"', '"1.5"')},
            "pkg/__init__.py",
            "its __version__ changed, __version__ = '1.0' -> __version__ = '1.5'; "
            "setup.cfg's [metadata] version names it",
        ),
    ],
)
def test_a_file_the_build_configuration_names_is_a_build_input(
    repo: Path, base: dict[str, str], edits: dict[str, str | None], named: str, what: str
) -> None:
    """Red team: the install read the version, dependencies or hook code from a file the
    project's build configuration names; the candidate's change to it was tested in the base's
    build. A version the build reads from a module counts only when the value it reads
    changes."""
    check = _declared_check(repo, base, edits)
    assert check.status == "failed"
    assert check.detail == f"{named} ({what}: " + WHY.format(command=EDITABLE[0], path=named)


@pytest.mark.parametrize(
    ("install", "base", "edits", "named"),
    [
        # red team 3: a requirements file that installs the project reads its build files
        (
            "pip install -r requirements.txt",
            {"requirements.txt": "-e .\npytest\n"},
            {"pyproject.toml": '[project]\nname = "pkg"\nversion = "2"\n'},
            "pyproject.toml",
        ),
        (
            "uv pip install -r requirements.txt",
            {"requirements.txt": "pytest\n.[test]\n"},
            {"setup.cfg": "[metadata]\nname = pkg\nversion = 2\n"},
            "setup.cfg",
        ),
        (
            "pip install -r requirements/dev.txt",
            {"requirements/dev.txt": "--editable=./sub\n", "sub/setup.py": "setup()\n"},
            {"sub/setup.py": "setup(name='s')\n"},
            "sub/setup.py",
        ),
        # ... and what the project's configuration names in turn
        (
            "pip install -r requirements.txt",
            {
                "requirements.txt": "-e.\n",
                "pyproject.toml": HATCH + DYNAMIC + '[tool.hatch.version]\npath = "pkg/v.py"\n',
                "pkg/v.py": "VERSION = '1'\n",
            },
            {"pkg/v.py": "VERSION = '2'\n"},
            "pkg/v.py",
        ),
        # red team 4: pip's attached forms of an include inside a requirements file
        (
            "pip install -r requirements.txt",
            {"requirements.txt": "-rbase.txt\n", "base.txt": "attrs\n"},
            {"base.txt": "attrs==23.1\n"},
            "base.txt",
        ),
        (
            "pip install -r requirements.txt",
            {"requirements.txt": "pytest\n-cconstraints.txt\n", "constraints.txt": "attrs<24\n"},
            {"constraints.txt": "attrs<23\n"},
            "constraints.txt",
        ),
        (
            "pip install -r requirements.txt",
            {"requirements.txt": "--requirement=base.txt\n", "base.txt": "attrs\n"},
            {"base.txt": "attrs==23.1\n"},
            "base.txt",
        ),
        # and on the command line
        (
            "pip install -rrequirements.txt",
            {"requirements.txt": "attrs\n"},
            {"requirements.txt": "attrs==23.1\n"},
            "requirements.txt",
        ),
    ],
)
def test_a_requirements_file_that_installs_the_project_or_includes_another_reads_it(
    repo: Path, install: str, base: dict[str, str], edits: dict[str, str | None], named: str
) -> None:
    check = _declared_check(repo, base, edits, (install,))
    assert check.status == "failed"
    assert check.detail.startswith(f"{named} (")
    assert WHY.format(command=install, path=named) in check.detail


@pytest.mark.parametrize(
    ("install", "base", "edits"),
    [
        # ordinary source edits of the module the version is read from: the version unchanged
        (
            EDITABLE,
            {
                "pyproject.toml": DYNAMIC
                + '[tool.setuptools.dynamic]\nversion = {attr = "pkg.__version__"}\n',
                "pkg/__init__.py": MODULE,
            },
            {"pkg/__init__.py": MODULE.replace("return 1", "return 2") + "\n# note\n"},
        ),
        (
            EDITABLE,
            {
                "pyproject.toml": '[build-system]\nrequires = ["flit_core"]\n'
                'build-backend = "flit_core.buildapi"\n\n'
                '[project]\nname = "pkg"\ndynamic = ["version", "description"]\n',
                "pkg/__init__.py": MODULE,
            },
            {"pkg/__init__.py": MODULE.replace("return 1", "return 2")},
        ),
        (
            EDITABLE,
            {
                "pyproject.toml": HATCH
                + DYNAMIC
                + '[tool.hatch.version]\npath = "pkg/__init__.py"\n',
                "pkg/__init__.py": MODULE,
            },
            {"pkg/__init__.py": "import os\n\n" + MODULE.replace("return 1", "return os.sep")},
        ),
        (
            EDITABLE,
            {
                "pyproject.toml": '[build-system]\nrequires = ["pdm-backend"]\n'
                'build-backend = "pdm.backend"\n\n'
                + DYNAMIC
                + '[tool.pdm.version]\nsource = "file"\npath = "pkg/__init__.py"\n',
                "pkg/__init__.py": MODULE,
            },
            {"pkg/__init__.py": MODULE.replace("return 1", "return 2")},
        ),
        # a flit project with a static version does not read the module's
        (
            EDITABLE,
            {
                "pyproject.toml": '[build-system]\nrequires = ["flit_core"]\n'
                'build-backend = "flit_core.buildapi"\n\n'
                '[project]\nname = "pkg"\nversion = "1.0"\ndynamic = ["description"]\n',
                "pkg/__init__.py": MODULE,
            },
            {"pkg/__init__.py": MODULE.replace('"1.0"', '"2.0"')},
        ),
        # a comment beside the version in hatchling's version file: the version it finds stays
        (
            EDITABLE,
            {
                "pyproject.toml": HATCH
                + DYNAMIC
                + '[tool.hatch.version]\npath = "pkg/__about__.py"\n',
                "pkg/__about__.py": '__version__ = "1.0.0"\n',
            },
            {"pkg/__about__.py": '# bumped by the release script\n__version__ = "1.0.0"\n'},
        ),
        # hatch_build.py with no custom hook table is not run by hatchling
        (EDITABLE, {"pyproject.toml": HATCH + DYNAMIC}, {"hatch_build.py": "x = 1\n"}),
        # a readme setuptools reads is no part of what is installed (as [project] readme)
        (
            EDITABLE,
            {
                "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\ndynamic = ["readme"]\n\n'
                '[tool.setuptools.dynamic]\nreadme = {file = "README.md"}\n',
                "README.md": "# pkg\n",
            },
            {"README.md": "# pkg\n\nMore.\n"},
        ),
        # a requirements file that does not install the project: its build files are unread
        (
            ("pip install -r requirements.txt",),
            {"requirements.txt": "attrs\n-e git+https://example.org/x.git#egg=x\n"},
            {"pyproject.toml": '[project]\nname = "pkg"\nversion = "2"\n'},
        ),
    ],
)
def test_the_source_a_build_reads_a_version_from_may_change_around_it(
    repo: Path, install: tuple[str, ...], base: dict[str, str], edits: dict[str, str | None]
) -> None:
    """The module holding ``__version__`` is ordinary source: an edit keeping the value the
    build reads (the assignment's text, hatchling's or pdm's match) is graded as it stands."""
    check = _declared_check(repo, base, edits, install)
    assert check.status == "passed", check.detail


@pytest.mark.parametrize(
    ("install", "base"),
    [
        # xarray-4493's derived recipe reads setup.cfg as requirements (`-r setup.cfg`)
        (("uv pip install -r setup.cfg pytest",), {"setup.cfg": "[options]\nx =\n    -e ..\n"}),
        # a requirements file in a subfolder installing the folder above the checkout
        (("pip install -r ci/req.txt",), {"ci/req.txt": "-e ../..\n-r ../../outside.txt\n"}),
        # an install argument naming a folder outside the checkout
        (("uv pip install -e ../sibling",), {"setup.py": "from setuptools import setup\n"}),
    ],
    ids=["setup.cfg-as-requirements", "nested-requirements", "install-argument"],
)
def test_paths_outside_the_checkout_are_never_read(
    repo: Path, install: tuple[str, ...], base: dict[str, str]
) -> None:
    """pydata/xarray-4493: the gold attempt's `edits_permitted` and `oracle_untouched` crashed
    (`git ls-tree ... -- ../pyproject.toml`: outside repository); an install's path that leaves
    the checkout names no file of it."""
    check = _declared_check(repo, base, {"pkg/__init__.py": "X = 2\n"}, install)
    assert check.status == "passed", check.detail
