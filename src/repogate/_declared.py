"""What a Python project's packaging files declare, read as text (never by running its code).

``[options]`` lists of ``setup.cfg`` (setuptools' declarative configuration: ``install_requires``,
``setup_requires``), one requirement a line, a ``#`` comment after whitespace dropped, and
``[project] dependencies`` of ``pyproject.toml`` (PEP 621). A file that cannot be parsed
declares nothing: callers use these for recipes and diagnoses, never as a verdict.
"""

from __future__ import annotations

import configparser
import re
import tomllib

_COMMENT = re.compile(r"\s+#.*$")


def setup_cfg_list(text: str, key: str) -> tuple[str, ...]:
    r"""Return the lines of ``[options] key`` in a ``setup.cfg``'s ``text``, comments dropped.

    ``setup_cfg_list("[options]\nsetup_requires =\n    setuptools_scm  # versions\n",
    "setup_requires")`` is ``("setuptools_scm",)``. Empty when the file, section or key is
    missing, or the text is no INI file.
    """
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text)
        value = parser.get("options", key, fallback="")
    except configparser.Error:
        return ()
    lines = (_COMMENT.sub("", line).strip() for line in value.splitlines())
    return tuple(line for line in lines if line)


def pyproject_dependencies(text: str) -> tuple[str, ...]:
    """Return ``[project] dependencies`` of a ``pyproject.toml``'s ``text`` (PEP 621), or ``()``."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):  # arrays nested past the stack
        return ()
    project = data.get("project")
    deps = project.get("dependencies") if isinstance(project, dict) else None
    return tuple(d for d in deps if isinstance(d, str)) if isinstance(deps, list) else ()
