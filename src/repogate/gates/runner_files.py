"""The test runner's own files, when the repository under test is the runner (gate I's side).

With ``[oracles] runner_under_test`` (pytest-dev/pytest tested with its own pytest) the guard
trusts the checkout's ``pytest``, ``_pytest`` and ``py`` modules as the runner, so it can no
longer see a candidate's change to how verdicts are made. Gate I compensates here:

- :func:`runner_module` tells a runner file from the rest (``src/_pytest/runner.py`` is
  ``_pytest/runner.py``; ``src/helper.py`` is none);
- :func:`verdict_edits` names a candidate's edits of any runner file (the verdict-producing
  ones, :data:`repogate.vocabulary.RUNNER_VERDICT_FILES`, said so) that the reference does not
  make too;
- :func:`misplaced_runner` names an added runner module where the base holds none (a second
  ``pytest.py`` at the top, imported before ``src/``'s);
- :func:`runner_report_lines` scans the added lines of the other runner files for report
  rewriting (a narrower pattern than :data:`repogate.gates.integrity.RUNNER_HOOKS`, which every
  line of pytest's own code would trip).

An edit the reference makes to the same file is the task (pytest-7432 fixes ``skipping.py``):
it is allowed and returned apart, to be recorded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from repogate.git import ChangedPath
from repogate.globs import matches_any
from repogate.patches import added_lines
from repogate.vocabulary import RUNNER_PACKAGES, RUNNER_VERDICT_FILES

IMPORT_ROOTS = ("src/", "")
"""Where the runner's packages sit in its repository: a src layout, or the top."""

REPORT_REWRITING = re.compile(
    r"\bpytest_runtest_makereport\b|\bpytest_runtest_logreport\b|\bpytest_report_teststatus\b"
    r"|\bTestReport\b|\bLogXML\b|(?i:junit)|\.outcome\s*=[^=]|\bPYTEST_\w+"
    r"|\bos\.dup2\b|/dev/fd/|/proc/self/fd"
)
"""Added lines in a runner file that reach the report: making or rewriting a report or its
outcome, the JUnit writer, variables that switch plugins, descriptor redirection."""


def runner_module(path: str) -> str | None:
    """Return ``path`` below the runner's import root when it is a runner file, else None.

    ``src/_pytest/junitxml.py`` and ``_pytest/junitxml.py`` give ``_pytest/junitxml.py``;
    ``src/pytest.py`` gives ``pytest.py``; ``src/helper.py`` and ``testing/test_x.py`` give None.
    """
    for root in IMPORT_ROOTS:
        if root and not path.startswith(root):
            continue
        inner = path[len(root) :]
        head = inner.split("/", 1)[0]
        if head in RUNNER_PACKAGES or head in {f"{name}.py" for name in RUNNER_PACKAGES}:
            return inner
    return None


RUNNER_MARKERS = (
    ("src/_pytest/__init__.py", ("src/pytest.py", "src/pytest/__init__.py")),
    ("_pytest/__init__.py", ("pytest.py", "pytest/__init__.py")),
)
"""What makes a tree the runner's own: the ``_pytest`` package beside a ``pytest`` module or
package, in a src layout or at the top (pytest-dev/pytest since 2009 or so; src from 3.5)."""


def marker_paths() -> tuple[str, ...]:
    """Every path :data:`RUNNER_MARKERS` names (to look each up at a commit at once)."""
    return tuple(p for package, modules in RUNNER_MARKERS for p in (package, *modules))


def holds_runner(existing: Collection[str]) -> bool:
    """True when the paths ``existing`` at a commit make it the test runner's own tree.

    Args:
        existing: which of :func:`marker_paths` exist at the commit.
    """
    return any(
        package in existing and any(m in existing for m in modules)
        for package, modules in RUNNER_MARKERS
    )


def runner_root(path: str) -> tuple[str, str] | None:
    """Return ``(import root, top-level name)`` of a runner file, or None for any other path.

    ``src/_pytest/x.py`` gives ``("src/", "_pytest")``; ``pytest.py`` gives ``("", "pytest.py")``.
    """
    inner = runner_module(path)
    if inner is None:
        return None
    return path[: len(path) - len(inner)], inner.split("/", 1)[0]


def misplaced_runner(
    changed: Sequence[ChangedPath], read: Callable[[str, str], bytes | None], base: str
) -> list[str]:
    """Return the added runner files whose package or module the base does not hold there.

    The trust granted to the runner's files covers every ``pytest``/``_pytest``/``py`` below
    an import root, the checkout's top included: a new top-level ``pytest.py`` beside pytest's
    ``src/`` (imported first under ``python -m pytest``) would be a second runner the candidate
    wrote. A new module inside the base's own ``src/_pytest/`` is :func:`verdict_edits`'s to
    judge (refused unless the reference adds it).
    """
    found = []
    for change in changed:
        where = runner_root(change.path) if change.status == "A" else None
        if where is None:
            continue
        root, head = where
        held = (f"{root}{head}",) if head.endswith(".py") else (f"{root}{head}/__init__.py",)
        if all(read(base, p) is None for p in held):
            found.append(
                f"{change.path} (a runner module where the base holds none: a second runner)"
            )
    return sorted(found)


def verdict_edits(
    changed: Sequence[ChangedPath], reference_paths: Collection[str]
) -> tuple[list[str], list[str]]:
    """Return the candidate's edits of the runner's files: refused, and allowed.

    Every file below the runner's packages counts (added, changed, removed or renamed, Python
    or not): the guard trusts all of them as the runner, so an edit of any can turn a failure
    into a pass; the verdict-producing ones (:data:`RUNNER_VERDICT_FILES`) say so.

    Args:
        changed: the candidate's changed paths (old paths of renames count too).
        reference_paths: the paths the reference patch changes.

    Returns:
        ``(refused, allowed)``: each ``path (why)``, sorted; an edit is allowed when the
        reference edits the same path.
    """
    refused, allowed = set(), set()
    for change in changed:
        for path in {change.path, change.old_path} - {None}:
            assert path is not None
            inner = runner_module(path)
            if inner is None:
                continue
            kind = (
                "the runner's verdict-producing file"
                if matches_any(inner, RUNNER_VERDICT_FILES)
                else "the runner's own file, trusted as the runner"
            )
            if path in reference_paths:
                allowed.add(f"{path} ({kind}; the reference edits it)")
            else:
                refused.add(f"{path} ({kind}, the runner is under test)")
    return sorted(refused), sorted(allowed)


def runner_report_lines(patch: bytes, reference_paths: Collection[str]) -> list[str]:
    """Return the runner files whose added lines reach the report (:data:`REPORT_REWRITING`).

    Files the reference edits too are left out (their edit is the task).
    """
    found = []
    for path, lines in added_lines(patch).items():
        if runner_module(path) is None or path in reference_paths or not path.endswith(".py"):
            continue
        for line in lines:
            hit = REPORT_REWRITING.search(line)
            if hit:
                found.append(
                    f"{path} (the runner under test: reaches its report: {hit.group(0)!r})"
                )
                break
    return found
