"""The one line a failure record shows names the cause, never the tool's closing advice."""

from __future__ import annotations

from repogate._logs import cause_line

# uv 0.13's output for a 2021 setuptools_scm build under the newest setuptools (trimmed, paths
# replaced): the cause is the exception, not uv's closing hint (issue 21).
UV_BUILD = """\
  × Failed to build `eraproj @ file:///<checkout>`
  ├─▶ The build backend returned an error
  ╰─▶ Call to `setuptools.build_meta.build_editable` failed (exit status: 1)

      [stderr]
      Traceback (most recent call last):
        File "<build>/setuptools_scm/version.py", line 11, in <module>
          from pkg_resources import iter_entry_points
      ModuleNotFoundError: No module named 'pkg_resources'

hint: This error likely indicates that `eraproj` depends on `pkg_resources`, but doesn't declare it as a build dependency. If `eraproj` is a first-party package, consider adding `pkg_resources` to its `build-system.requires`. Otherwise, either add it to your `pyproject.toml` under:

[tool.uv.extra-build-dependencies]
eraproj = ["pkg_resources"]

or `uv pip install pkg_resources` into the environment and re-run with `--no-build-isolation`.
"""

PIP_BUILD = """\
      File "setup.py", line 3, in <module>
        import numpy
    ModuleNotFoundError: No module named 'numpy'
    [end of output]

note: This error originates from a subprocess, and is likely not a problem with pip.
error: metadata-generation-failed
hint: See above for output.
"""

PYTEST_CONFTEST = """\
ImportError while loading conftest '/<checkout>/tests/conftest.py'.
tests/conftest.py:3: in <module>
    import hypothesis
E   ModuleNotFoundError: No module named 'hypothesis'
"""


def test_the_exception_is_the_cause_not_uvs_hint() -> None:
    assert cause_line(UV_BUILD) == "ModuleNotFoundError: No module named 'pkg_resources'"


def test_pip_and_pytest_shapes_of_the_same_fault() -> None:
    assert cause_line(PIP_BUILD) == "ModuleNotFoundError: No module named 'numpy'"
    assert cause_line(PYTEST_CONFTEST) == "E ModuleNotFoundError: No module named 'hypothesis'"


def test_without_an_exception_the_last_error_line_and_never_advice() -> None:
    assert cause_line("building\nerror: no space left\nhint: free some space\n") == (
        "error: no space left"
    )
    assert cause_line("hint: only advice\n") == "hint: only advice"
    assert cause_line("") == ""
