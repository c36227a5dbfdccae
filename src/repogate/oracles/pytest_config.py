"""Which pytest configuration file a checkout's tests run with (pytest's ``-c``).

pytest takes the first of these files at the top of the root folder that holds a pytest section
(https://docs.pytest.org/en/stable/reference/customize.html, pytest 9): ``pytest.toml`` and
``.pytest.toml`` (any content), ``pytest.ini`` and ``.pytest.ini`` (any content),
``pyproject.toml`` with a ``[tool.pytest]`` or ``[tool.pytest.ini_options]`` table, ``tox.ini``
with a ``[pytest]`` section, ``setup.cfg`` with a ``[tool:pytest]`` section. The harness names
the file itself (``-c``) so that pytest never reads one from a folder above the checkout nor one
a patch adds beside the tests.

Whether a file holds its section is decided by parsing it as pytest would (a TOML table, an INI
section header), never by a substring: a comment ``# [tool.pytest.ini_options]`` a patch adds to
``pyproject.toml`` made the harness take it over the project's ``tox.ini`` and drop its
``filterwarnings = error`` (red team 2026-12-02). A file that exists but cannot be judged (past
:data:`MAX_CONFIG_BYTES`, not UTF-8, not valid TOML) is an error, never a reason to run with no
configuration: a patch padding ``pyproject.toml`` past the size limit ran the tests with
``-c /dev/null``.
"""

from __future__ import annotations

import errno
import re
import tomllib
from collections.abc import Callable
from pathlib import Path

from repogate._files import PlantedLinkError, read_bytes_nofollow

MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""The largest configuration file the harness reads (bytes)."""


class ConfigError(ValueError):
    """A configuration file exists but cannot be judged: the tests cannot be run as configured."""


def _toml_has_pytest(data: bytes, name: str) -> bool:
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{name} is not valid TOML ({exc}); fix it") from exc
    tool = table.get("tool")
    return isinstance(tool, dict) and isinstance(tool.get("pytest"), dict)


def _ini_section(section: str) -> Callable[[bytes, str], bool]:
    header = re.compile(rb"^\[" + re.escape(section.encode()) + rb"\]\s*(?:[#;].*)?$", re.M)

    def has(data: bytes, name: str) -> bool:
        return header.search(data) is not None

    return has


def _always(data: bytes, name: str) -> bool:
    return True


# pytest's configuration files, in its order of precedence, each with its test of "counts".
CONFIG_FILES: dict[str, Callable[[bytes, str], bool]] = {
    "pytest.toml": _always,
    ".pytest.toml": _always,
    "pytest.ini": _always,
    ".pytest.ini": _always,
    "pyproject.toml": _toml_has_pytest,
    "tox.ini": _ini_section("pytest"),
    "setup.cfg": _ini_section("tool:pytest"),
}


def choose_config(workdir: Path) -> str | None:
    """Return the name of the pytest configuration file at ``workdir``'s top, or None.

    Args:
        workdir: a checkout (the base's, to choose the file every state then runs with).

    Returns:
        A name from :data:`CONFIG_FILES` (relative to ``workdir``), or None when none counts.
        A file that is a symbolic link is not read by the harness and counts (pytest reads it
        inside the sandbox).

    Raises:
        ConfigError: a file earlier in the order than the one chosen cannot be judged (larger
            than :data:`MAX_CONFIG_BYTES`, unreadable, not UTF-8 or not TOML where TOML is due).
    """
    for name, counts in CONFIG_FILES.items():
        try:
            data = read_bytes_nofollow(workdir, name, MAX_CONFIG_BYTES)
        except PlantedLinkError:
            return name
        except OSError as exc:
            why = "is larger than 4 MiB" if exc.errno == errno.EFBIG else f"cannot be read ({exc})"
            raise ConfigError(
                f"{name} {why}: whether it configures pytest cannot be told; fix it"
            ) from exc
        if data is not None and counts(data, name):
            return name
    return None
