"""A project's compiled extension modules, built once, reach every graded tree (astropy, issue 21).

astropy builds C and Cython extensions (``astropy/time/_parse_times.*.so``, ...) in place into the
tree it is installed from (setuptools' editable install runs ``build_ext --inplace``). The cached
environment imports the project from each graded tree instead (the editable hooks are detached);
a graded tree, written afresh from git, holds no built extension, so ``import astropy`` failed
there (astropy refuses to import from a source tree that was not built). The build now keeps the
extension modules it wrote below the import roots, as it keeps setuptools-scm's ``_version.py``,
and places them into each tree lacking them.

Real parts: a setuptools project with one C extension (built by gcc), installed the way the env
map's astropy recipes install it (setuptools 68 first, then ``--no-build-isolation -e .``) in a
real uv environment; a fresh tree run through pytest with the harness's JUnit reading.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from repogate.contract import EnvironmentRecipe
from repogate.environments.uv import UvEnvironment, build_environment
from repogate.oracles.pytest_runner import TestRun, run_tests
from repogate.sandbox import SandboxPolicy

pytestmark = pytest.mark.slow

FILES = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools", "wheel"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "extproj"
        version = "0.1"
        """,
    "setup.py": """
        from setuptools import Extension, setup

        setup(
            packages=["extproj"],
            ext_modules=[Extension("extproj._speed", ["extproj/_speed.c"])],
        )
        """,
    "extproj/__init__.py": "from extproj._speed import three\n",
    "extproj/_speed.c": """
        #include <Python.h>

        static PyObject *three(PyObject *self, PyObject *args) { return PyLong_FromLong(3); }
        static PyMethodDef methods[] = {{"three", three, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
        static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", "", -1, methods};
        PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }
        """,
    "tests/test_speed.py": """
        from extproj import three


        def test_three():
            assert three() == 3
        """,
}
RECIPE = EnvironmentRecipe(
    python="3.11",
    install=(
        "uv pip install setuptools==68.0.0 wheel==0.40.0 pytest==8.3.4",
        "uv pip install --no-build-isolation -e .",
    ),
)
IDS = ("tests/test_speed.py::test_three",)
COMMAND = "python -m pytest -p no:cacheprovider"


def _project(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def _extension(env: UvEnvironment) -> str:
    suffixes = [g.path for g in env.generated if g.path.startswith("extproj/_speed.")]
    assert len(suffixes) == 1, env.generated
    return suffixes[0]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> UvEnvironment:
    base = _project(tmp_path_factory.mktemp("base"))
    cache = tmp_path_factory.mktemp("cache")
    return build_environment(RECIPE, base, cache, SandboxPolicy(timeout_s=900))


def _run(env: UvEnvironment, tree: Path, where: Path) -> TestRun:
    policy = SandboxPolicy(network=False, timeout_s=300, writable=(), writable_cwd=True)
    return run_tests(env, tree, COMMAND, IDS, where / "report", policy)


def test_the_build_keeps_the_extension_module_it_compiled(env: UvEnvironment) -> None:
    """The in-place build's ``.so`` below the import root is kept and recorded with its digest."""
    assert env.import_roots == (".",)
    path = _extension(env)
    assert path.endswith(".so") and len(env.generated) == 1
    assert (env.venv.parent / "generated" / path).stat().st_size > 0


def test_a_fresh_tree_imports_the_built_extension(env: UvEnvironment, tmp_path: Path) -> None:
    """A tree written afresh (no build output) runs the project's test: the module is placed."""
    tree = _project(tmp_path / "tree")
    run = _run(env, tree, tmp_path)
    assert run.status == "ok", run.reason
    assert run.outcomes == {IDS[0]: "passed"}
    assert (tree / _extension(env)).is_file()


def test_without_the_kept_extension_the_fresh_tree_cannot_import(
    env: UvEnvironment, tmp_path: Path
) -> None:
    """The fault as it was: the graded tree lacks the build's extension and the test errors."""
    bare = env.model_copy(update={"generated": ()})
    run = _run(bare, _project(tmp_path / "tree"), tmp_path)
    assert run.outcomes.get(IDS[0]) != "passed"


def test_an_extension_the_tree_holds_is_left_as_it_is(env: UvEnvironment, tmp_path: Path) -> None:
    """A tree holding its own file at the name (a candidate's rebuild) keeps it."""
    tree = _project(tmp_path / "tree")
    (tree / _extension(env)).write_bytes(b"the tree's own")
    assert env.place_generated(tree) == ()
    assert (tree / _extension(env)).read_bytes() == b"the tree's own"


def test_a_tree_whose_extension_source_changed_still_runs_the_base_build(
    env: UvEnvironment, tmp_path: Path
) -> None:
    """Why gate I refuses an edit of a prebuilt extension's sources (red team rt33).

    The C source says 4; the placed base build answers 3 and the test passes: the graded tree
    does not run the candidate's edit. The environment names the build it places, which gate I
    reads (:meth:`UvEnvironment.prebuilt_extensions`).
    """
    tree = _project(tmp_path / "tree")
    source = tree / "extproj" / "_speed.c"
    source.write_text(source.read_text().replace("PyLong_FromLong(3)", "PyLong_FromLong(4)"))
    run = _run(env, tree, tmp_path)
    assert run.outcomes == {IDS[0]: "passed"}
    assert env.prebuilt_extensions() == (_extension(env),)
