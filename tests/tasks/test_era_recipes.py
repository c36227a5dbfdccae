"""Derived recipes build what the project's own era could build (issue 21, reach).

Real uv installs of small fixture projects dated by their commits, against PyPI: a 2021 project
built by setuptools_scm (which imports ``pkg_resources``, gone from the newest setuptools), and a
2022 project pinning ``setuptools~=62.6`` in ``[build-system]`` (no PEP 660 ``build_editable``,
so no editable build under uv). Each must build, import from its checkout, and pass its test.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from repogate.contract import EnvironmentRecipe
from repogate.environments.uv import build_environment
from repogate.oracles.pytest_runner import run_tests
from repogate.sandbox import SandboxPolicy
from repogate.tasks.recipe import DROP_RELEASE_TAGS, derive_recipe

POLICY = SandboxPolicy(timeout_s=600)
TEST = "from eraproj import VALUE\n\n\ndef test_value():\n    assert VALUE == 3\n"

SCM_2021 = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=42", "wheel", "setuptools_scm[toml]>=3.4"]\n'
        'build-backend = "setuptools.build_meta"\n\n[tool.setuptools_scm]\n'
    ),
    "setup.cfg": (
        "[metadata]\nname = eraproj\n\n[options]\npackages = find:\n"
        "python_requires = >=3.7\n\n[options.extras_require]\ntests = pytest\n"
    ),
    "setup.py": "from setuptools import setup\n\nsetup(use_scm_version=True)\n",
    "eraproj/__init__.py": "VALUE = 3\n",
    "tests/test_value.py": TEST,
}

PINNED_2022 = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools~=62.6", "wheel~=0.37.1"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "eraproj"\nversion = "1.0"\ndependencies = []\n'
        'requires-python = ">=3.7"\n\n[tool.setuptools]\npackages = ["eraproj"]\n'
    ),
    "eraproj/__init__.py": "VALUE = 3\n",
    "tests/test_value.py": TEST,
}


TAGGED_2020 = {  # sphinx-doc/sphinx 3.x to 5.x: a development snapshot's version suffix
    "setup.py": (
        "from setuptools import setup\n\nsetup(name='eraproj', version='3.1.0', "
        "packages=['eraproj'], extras_require={'test': ['pytest']})\n"
    ),
    "setup.cfg": "[metadata]\nlicense_file = LICENSE\n\n[egg_info]\ntag_build = .dev\ntag_date = true\n",
    "LICENSE": "MIT\n",
    "eraproj/__init__.py": "VALUE = 3\n",
    "tests/test_value.py": TEST,
}


SETUP_REQUIRES_2020 = {  # pydata/xarray of 2020: setup.py develop fetched today's setuptools_scm
    "setup.cfg": (
        "[metadata]\nname = eraproj\n\n[options]\npackages = find:\npython_requires = >=3.7\n"
        "install_requires =\n    setuptools >= 40.4  # For pkg_resources\n"
        "setup_requires =\n    setuptools >= 40.4\n    setuptools_scm\n\n"
        "[options.extras_require]\ntests = pytest\n"
    ),
    "setup.py": "from setuptools import setup\n\nsetup(use_scm_version=True)\n",
    "eraproj/__init__.py": "VALUE = 3\n",
    "tests/test_value.py": TEST,
}


def _dated_repo(path: Path, files: Mapping[str, str], when: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    out = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=path, env=env, check=True, capture_output=True
    )
    return out.stdout.decode().strip()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("files", "when", "setuptools"),
    [
        (SCM_2021, "2021-03-01T00:00:00Z", "setuptools==5"),  # the era's, with pkg_resources
        (PINNED_2022, "2022-10-01T00:00:00Z", "setuptools==62."),  # the pin, honoured
        (TAGGED_2020, "2020-05-01T00:00:00Z", "setuptools==46."),  # tags written twice
        (SETUP_REQUIRES_2020, "2020-10-01T00:00:00Z", "setuptools==50."),  # dated, not fetched
    ],
    ids=[
        "setuptools_scm-2021",
        "setuptools-pinned-below-64",
        "egg_info-tags-2020",
        "setup_requires-2020",
    ],
)
def test_an_era_project_builds_and_imports_from_its_checkout(
    tmp_path: Path, files: Mapping[str, str], when: str, setuptools: str
) -> None:
    repo = tmp_path / "repo"
    base = _dated_repo(repo, files, when)
    data = derive_recipe(repo, base)
    assert all("--exclude-newer-package" not in c for c in data["install"])
    assert data["install"][-1].endswith("develop --no-deps")
    recipe = EnvironmentRecipe.model_validate(data)
    env = build_environment(recipe, repo, tmp_path / "cache", POLICY)
    assert any(p.startswith(setuptools) for p in env.packages), env.packages
    assert env.import_roots  # served from each run's checkout, not a copy of the base
    run = run_tests(env, repo, "python -m pytest", ["tests/test_value.py"], tmp_path / "r", POLICY)
    assert run.outcomes == {"tests/test_value.py::test_value": "passed"}, run.reason


_HATCH = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
_MODERN = (
    '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "eraproj"\nversion = "1"\n'
)


@pytest.mark.parametrize(
    ("files", "when", "develop", "source"),
    [
        ({"pyproject.toml": _MODERN}, "2023-05-01T00:00:00Z", False, ""),  # PEP 660 of its era
        ({"pyproject.toml": _MODERN}, "2021-05-01T00:00:00Z", True, "-r pyproject.toml"),
        ({"pyproject.toml": _HATCH}, "2021-05-01T00:00:00Z", False, ""),  # not setuptools
        (
            {"setup.py": "from setuptools import setup\nsetup()\n"},
            "2019-01-01T00:00:00Z",
            True,
            "-r setup.py",
        ),
        (
            {"pyproject.toml": _MODERN.replace(">=61", "<64")},
            "2024-01-01T00:00:00Z",
            True,
            "-r pyproject.toml",
        ),
        (  # setuptools_scm's own bound is not setuptools'
            {
                "pyproject.toml": _MODERN.replace(
                    '"setuptools>=61"', '"setuptools>=61", "setuptools_scm<8"'
                )
            },
            "2023-05-01T00:00:00Z",
            False,
            "",
        ),
    ],
    ids=["modern", "before-pep660", "hatchling", "setup.py-2019", "pinned-below-64", "scm-bound"],
)
def test_the_recipe_builds_as_the_era_did(
    tmp_path: Path, files: Mapping[str, str], when: str, develop: bool, source: str
) -> None:
    base = _dated_repo(tmp_path / "repo", files, when)
    install = derive_recipe(tmp_path / "repo", base)["install"]
    assert all("--exclude-newer-package" not in c for c in install)  # setuptools is dated too
    if develop:
        assert len(install) == 2 and source in install[0] and "-e " not in install[0]
        assert install[1].endswith("develop --no-deps")
    else:
        assert install == [install[0]] and "-e '.'" in install[0]


def test_the_release_tags_are_dropped_in_the_build_checkout_only(tmp_path: Path) -> None:
    """setuptools before 62 writes ``3.1.0.dev20261203.dev-20261203`` as PEP 517 metadata when
    ``setup.cfg`` sets ``[egg_info] tag_build``/``tag_date``, and uv refuses it: sphinx-doc/sphinx
    3.x to 5.x failed their first install command. The derived recipe drops the two options
    first; a project without them, or built the PEP 660 way, gets no such command."""
    base = _dated_repo(tmp_path / "repo", TAGGED_2020, "2020-05-01T00:00:00Z")
    install = derive_recipe(tmp_path / "repo", base)["install"]
    assert len(install) == 3 and install[0] == DROP_RELEASE_TAGS
    assert "-r setup.cfg" in install[1] and install[2].endswith("develop --no-deps")
    subprocess.run(shlex.split(install[0]), cwd=tmp_path / "repo", check=True)
    text = (tmp_path / "repo" / "setup.cfg").read_text()
    assert text == "[metadata]\nlicense_file = LICENSE\n\n[egg_info]\n"
    untagged = {**TAGGED_2020, "setup.cfg": "[metadata]\nlicense_file = LICENSE\n"}
    base = _dated_repo(tmp_path / "plain", untagged, "2020-05-01T00:00:00Z")
    assert DROP_RELEASE_TAGS not in derive_recipe(tmp_path / "plain", base)["install"]
    modern = {**TAGGED_2020, "pyproject.toml": _MODERN}
    base = _dated_repo(tmp_path / "modern", modern, "2023-05-01T00:00:00Z")
    assert DROP_RELEASE_TAGS not in derive_recipe(tmp_path / "modern", base)["install"]


@pytest.mark.parametrize(
    "options",
    [
        "tag_build: .dev\ntag_date: true\n",  # configparser's other delimiter
        "tag-build = .dev\ntag-date = 1\n",  # the dashed spelling setuptools reads too
        "tag_date = 1\n",  # the date alone
    ],
    ids=["colon", "dashed", "date-only"],
)
def test_every_spelling_of_the_release_tags_is_dropped(tmp_path: Path, options: str) -> None:
    """setuptools reads ``setup.cfg`` with configparser (``=`` or ``:``) and takes ``tag-build``
    as ``tag_build``: each spelling writes the tags twice before 62.0, so each is dropped."""
    files = {**TAGGED_2020, "setup.cfg": f"[metadata]\nname = eraproj\n\n[egg_info]\n{options}"}
    base = _dated_repo(tmp_path / "repo", files, "2020-05-01T00:00:00Z")
    install = derive_recipe(tmp_path / "repo", base)["install"]
    assert install[0] == DROP_RELEASE_TAGS
    subprocess.run(shlex.split(install[0]), cwd=tmp_path / "repo", check=True)
    text = (tmp_path / "repo" / "setup.cfg").read_text()
    assert text == "[metadata]\nname = eraproj\n\n[egg_info]\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (SETUP_REQUIRES_2020, ["'setuptools >= 40.4'", "setuptools_scm"]),  # comment dropped
        (  # a literal list in setup.py, read as text
            {
                "setup.py": "from setuptools import setup\nsetup(setup_requires=['cffi>=1.0', \"six\"])\n"
            },
            ["'cffi>=1.0'", "six"],
        ),
        ({"setup.py": "from setuptools import setup\nsetup()\n"}, []),
    ],
    ids=["setup.cfg", "setup.py-literal", "none"],
)
def test_setup_requires_are_installed_dated_before_develop(
    tmp_path: Path, files: Mapping[str, str], expected: list[str]
) -> None:
    """``setup.py develop`` fetches ``setup_requires`` undated through easy_install: pydata/xarray
    4094, 4248 and 4493 got setuptools_scm 10.3 (2026), which failed on Python 3.8 and 3.9."""
    base = _dated_repo(tmp_path / "repo", files, "2020-10-01T00:00:00Z")
    first, develop = derive_recipe(tmp_path / "repo", base)["install"]
    words = shlex.split(first.removeprefix("env SETUPTOOLS_SCM_PRETEND_VERSION=9999.0 "))
    build = words[words.index("2020-10-02") + 1 : words.index("-r")]
    assert build == ["setuptools", "wheel", *(shlex.split(e)[0] for e in expected)]
    assert develop.endswith("develop --no-deps")
