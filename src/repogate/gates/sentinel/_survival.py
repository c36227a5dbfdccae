"""Regeneration survival and the Python matrix, for the sentinel.

Regeneration survival: the contract's generators are rerun on a clean checkout of the merged state;
the candidate's intent must still be there afterwards. Two rules:

- every generated output (a path matching a generator's ``outputs``) is byte-identical to what the
  merged state holds (a hand edit of a generated file that the next regeneration undoes fails here,
  as the seed's generator that restores the old constant two weeks later);
- every line the candidate added to a non-generated file is still present in that file.

A generator that exits non-zero or times out makes the result ``error`` (environment-suspect, as
every unknown failure is until shown otherwise).

Python matrix: the contract's versions each need an interpreter on this machine (``pythonX.Y`` on
``PATH`` that reports that version); a missing one is an ``error`` naming it. Running the tests on
each is a hook (:data:`MatrixRunner`) because it needs an environment built per interpreter.
"""

from __future__ import annotations

import difflib
import shlex
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from repogate import git
from repogate._counted import counted
from repogate._files import read_bytes_nofollow
from repogate._model import FrozenModel
from repogate._toolchain import find_python
from repogate.contract import Generator
from repogate.errors import EnvironmentBuildError
from repogate.globs import matches_any
from repogate.sandbox import ExecResult, SandboxPolicy
from repogate.sandbox import run as sandbox_run

SurvivalStatus = Literal["passed", "failed", "error", "skipped"]
CommandRunner = Callable[[Sequence[str], Path, bool], ExecResult]
"""Runs one command: ``(argv, cwd, network allowed) -> ExecResult``."""
MatrixRunner = Callable[[str, Path, Path, Sequence[str]], Mapping[str, str]]
"""Runs tests under one interpreter: ``(version, interpreter, checkout, test ids) -> outcomes``."""

_PROBE = "import sys; print('%d.%d' % sys.version_info[:2])"


def sandboxed_command(argv: Sequence[str], cwd: Path, network: bool) -> ExecResult:
    """Run ``argv`` in ``cwd`` through :func:`repogate.sandbox.run` (10-minute budget)."""
    return sandbox_run(argv, cwd, SandboxPolicy(network=network, timeout_s=600.0))


class LostLines(FrozenModel):
    """Lines the candidate added to ``path`` that regeneration removed."""

    path: str
    lines: tuple[str, ...]


class Regeneration(FrozenModel):
    """What rerunning the generators on the merged state did to the candidate's intent.

    Attributes:
        status: ``passed``, ``failed`` (intent lost), ``error`` (a generator failed), ``skipped``.
        generators: the generator names run, in order.
        drifted_outputs: generated outputs that differ from what the merged state holds.
        lost: lines the candidate added that are gone afterwards, by file.
        detail: one sentence for people.
        timed_out: a generator reached its time budget (then ``error``).
    """

    status: SurvivalStatus
    generators: tuple[str, ...] = ()
    drifted_outputs: tuple[str, ...] = ()
    lost: tuple[LostLines, ...] = ()
    detail: str = ""
    timed_out: bool = False


class MatrixEntry(FrozenModel):
    """One Python version of the matrix: its interpreter and what the tests did there.

    Attributes:
        version: ``X.Y`` as the contract lists it.
        status: ``passed``; ``failed`` (a focused or regression test did not pass); ``error``
            (no interpreter for it here, or no matrix runner wired).
        interpreter: the interpreter's path, when found.
        failures: test ids that did not pass.
        detail: one sentence for people.
    """

    version: str
    status: SurvivalStatus
    interpreter: str | None = None
    failures: tuple[str, ...] = ()
    detail: str = ""


def _added_lines(before: str, after: str) -> list[str]:
    diff = difflib.ndiff(before.splitlines(), after.splitlines())
    return [line[2:] for line in diff if line.startswith("+ ") and line[2:].strip()]


def _lost_lines(
    repo: Path, base: str, candidate: str, checkout: Path, outputs: Sequence[str]
) -> list[LostLines]:
    lost: list[LostLines] = []
    for change in git.changed_paths(repo, base, candidate):
        if change.status == "D" or change.is_symlink or matches_any(change.path, outputs):
            continue
        before = git.show_text(repo, base, change.path)
        after = git.show_text(repo, candidate, change.path)
        try:  # the checkout ran generators: a link there is not followed
            data = read_bytes_nofollow(checkout, change.path) or b""
        except OSError:
            data = b""
        now = data.decode("utf-8", "replace").splitlines()
        gone = tuple(line for line in _added_lines(before, after) if line not in now)
        if gone:
            lost.append(LostLines(path=change.path, lines=gone))
    return lost


def regeneration_survival(
    repo: Path,
    base: str,
    candidate: str,
    merged_tree: str,
    generators: Sequence[Generator],
    run_command: CommandRunner,
    work: Path | None = None,
) -> Regeneration:
    """Rerun ``generators`` on a clean checkout of ``merged_tree``; check the candidate's intent.

    Args:
        repo: the repository (full history).
        base: the base commit.
        candidate: the candidate commit (its diff from ``base`` is the intent).
        merged_tree: the merged state's tree.
        generators: the contract's generators, run in order with ``shlex``-split commands.
        run_command: runs one command (the sandbox, with the environment's interpreter on PATH).
        work: folder for the temporary checkout (None: the system's temporary folder).

    Returns:
        The regeneration result; ``skipped`` when there are no generators.

    Raises:
        GitError: git failed.
    """
    if not generators:
        return Regeneration(status="skipped", detail="the contract names no generators")
    names = tuple(g.name for g in generators)
    outputs = [o for g in generators for o in g.outputs]
    with tempfile.TemporaryDirectory(prefix="repogate-regen-", dir=work) as tmp:
        checkout = Path(tmp) / "checkout"
        git.checkout_tree(repo, merged_tree, checkout)
        for gen in generators:
            result = run_command(shlex.split(gen.command), checkout, gen.network)
            if not result.ok:
                why = "timed out" if result.timed_out else f"exited {result.returncode}"
                tail = result.stderr.strip()[-300:]
                return Regeneration(
                    status="error",
                    generators=names,
                    detail=f"generator {gen.name} {why}: {tail}",
                    timed_out=result.timed_out,
                )
        after = git.tree_from_dir(repo, checkout)
        drifted = tuple(
            c.path
            for c in git.changed_paths(repo, merged_tree, after)
            if matches_any(c.path, outputs)
        )
        lost = tuple(_lost_lines(repo, base, candidate, checkout, outputs))
    if drifted or lost:
        parts = [f"outputs changed by regeneration: {', '.join(drifted)}"] if drifted else []
        parts += [f"candidate lines lost in {', '.join(x.path for x in lost)}"] if lost else []
        return Regeneration(
            status="failed",
            generators=names,
            drifted_outputs=drifted,
            lost=lost,
            detail="; ".join(parts),
        )
    return Regeneration(status="passed", generators=names, detail="the candidate's intent survived")


def find_interpreter(version: str, run_command: CommandRunner) -> Path | None:
    """Return an installed interpreter that really reports ``version``, or None.

    Looked up as environments are built (:func:`repogate._toolchain.find_python`: uv's and
    pyenv's installed versions, never a download), then as ``python{version}`` on PATH. A
    launcher shim for a version that is not installed exits non-zero and counts as missing.
    """
    try:
        found: str | None = str(find_python(version, Path.cwd()))
    except EnvironmentBuildError:
        found = shutil.which(f"python{version}")
    if found is None:
        return None
    probe = run_command([found, "-c", _PROBE], Path(found).parent, False)
    return Path(found) if probe.ok and probe.stdout.strip() == version else None


def python_matrix(
    versions: Sequence[str],
    checkout: Path,
    tests: Sequence[str],
    matrix_runner: MatrixRunner | None,
    run_command: CommandRunner,
) -> tuple[MatrixEntry, ...]:
    """Run ``tests`` (ids that must pass) on ``checkout`` under each Python version of the matrix.

    Returns:
        One entry per version, in the contract's order.
    """
    entries: list[MatrixEntry] = []
    for version in versions:
        interpreter = find_interpreter(version, run_command)
        if interpreter is None:
            entries.append(
                MatrixEntry(
                    version=version,
                    status="error",
                    detail=f"python{version} not found on this machine",
                )
            )
            continue
        if matrix_runner is None:
            entries.append(
                MatrixEntry(
                    version=version,
                    status="error",
                    interpreter=str(interpreter),
                    detail="no matrix runner is wired to build an environment for it",
                )
            )
            continue
        outcomes = matrix_runner(version, interpreter, checkout, tests)
        failures = tuple(t for t in tests if outcomes.get(t) != "passed")
        entries.append(
            MatrixEntry(
                version=version,
                status="failed" if failures else "passed",
                interpreter=str(interpreter),
                failures=failures,
                detail=f"{len(failures)} of {counted(len(tests), 'test')} did not pass"
                if failures
                else "",
            )
        )
    return tuple(entries)


def matrix_on_tree(
    repo: Path,
    tree: str,
    versions: Sequence[str],
    tests: Sequence[str],
    matrix_runner: MatrixRunner | None,
    run_command: CommandRunner,
    work: Path | None = None,
) -> tuple[MatrixEntry, ...]:
    """Check ``tree`` out and run :func:`python_matrix` on it; nothing when ``versions`` is empty.

    Raises:
        GitError: the tree is unknown.
    """
    if not versions:
        return ()
    with tempfile.TemporaryDirectory(prefix="repogate-matrix-", dir=work) as tmp:
        checkout = Path(tmp) / "checkout"
        git.checkout_tree(repo, tree, checkout)
        return python_matrix(versions, checkout, tests, matrix_runner, run_command)
