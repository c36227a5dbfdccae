"""Gate check ``generated_artifacts_fresh``: regenerating in a clean tree changes nothing.

A contract declares generators: a command, the authoritative ``inputs`` and the derived ``outputs``
(globs). In a clean checkout of the candidate tree each generator runs in the sandbox (network
only when that generator is granted it; ``python`` is the environment's interpreter), then the
status of the tree must be empty: modified *and* untracked files both count (``git diff
--exit-code`` would miss new files). The status is read with a git directory the harness sealed
before the generators ran (:func:`repogate.git.sealed`): a generator is candidate code and may
rewrite the checkout's ``.git`` (a filter driver, attributes, a ``.git`` file pointing elsewhere),
none of which the harness's git then reads. A patch that edits a derived output without any
of its inputs is named as such: the next regeneration would overwrite the edit.

A generator that fails or times out leaves freshness unverified: ``error``, never ``passed``. With
no generator declared, a patch that edits a file marked generated (a ``Code generated ... DO NOT
EDIT.`` line as Go's convention writes it, https://go.dev/s/generatedcode; an ``@generated`` tag;
or ``linguist-generated`` in ``.gitattributes``, as GitHub Linguist reads it) cannot be verified
either: ``error``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repogate import git, sandbox
from repogate._files import read_bytes_nofollow
from repogate.contract import Generator
from repogate.gates._commands import describe_failure, granted, looks_like_network_failure
from repogate.git import ChangedPath
from repogate.globs import matches_any
from repogate.receipt import Check, Observation, Status
from repogate.sandbox import SandboxPolicy
from repogate.vocabulary import CheckName, ErrorKind

CHECK: CheckName = "generated_artifacts_fresh"
HEADER_LINES = 40
_COMMENT = r"^\s*(?:#|//|/\*|\*|--|;|<!--|\"\"\"|'''|%|rem\b)"
MARKERS = (
    re.compile(_COMMENT + r".*\bCode generated\b.*\bDO NOT EDIT\b", re.IGNORECASE),
    re.compile(_COMMENT + r".*@generated\b"),
)
"""A comment line marking its file generated (searched in a file's first lines)."""


def is_marker_line(line: str) -> bool:
    """True when ``line`` is a comment marking its file generated (``DO NOT EDIT``, ``@generated``)."""
    return any(marker.search(line) for marker in MARKERS)


def _marked_in_header(checkout: Path, path: str) -> bool:
    try:  # the candidate's checkout: a link is not followed
        data = read_bytes_nofollow(checkout, path, 16 * 1024, head=True) or b""
    except OSError:
        return False
    head = data.decode("utf-8", "replace").splitlines()[:HEADER_LINES]
    return any(is_marker_line(line) for line in head)


def marked_generated(checkout: Path, changed: Sequence[ChangedPath]) -> tuple[str, ...]:
    """Return the changed paths marked as generated, in the candidate checkout.

    Args:
        checkout: the candidate tree, checked out (a git work tree).
        changed: the patch's changed paths.

    Returns:
        Paths whose header carries ``Code generated ... DO NOT EDIT`` or ``@generated`` in a
        comment, or whose ``linguist-generated`` attribute is set (deleted paths: attribute only).

    Raises:
        GitError: git could not read the attributes.
    """
    paths = [c.path for c in changed if not c.is_symlink]
    attrs = git.check_attr(checkout, "linguist-generated", paths)
    marked = [
        c.path
        for c in changed
        if attrs.get(c.path) in ("set", "true")
        or (c.status != "D" and not c.is_symlink and _marked_in_header(checkout, c.path))
    ]
    return tuple(marked)


def _derived_without_source(
    generators: Sequence[Generator], changed: Sequence[ChangedPath], overwritten: set[str]
) -> list[str]:
    paths = [c.path for c in changed]
    found = []
    for gen in generators:
        if not gen.inputs or any(matches_any(p, gen.inputs) for p in paths):
            continue
        found += [p for p in paths if p in overwritten and matches_any(p, gen.outputs)]
    return sorted(set(found))


def _observation(
    status: Status, detail: str, details: dict[str, Any], kind: ErrorKind | None = None
) -> Observation:
    """The one check; an ``error`` is an ``other evaluator error`` unless ``kind`` says more."""
    if status == "error":
        check = Check.error(CHECK, detail, kind or "other evaluator error")
    else:
        check = Check(name=CHECK, status=status, detail=detail)
    return Observation(checks=(check,), details=details)


def _run_generators(
    checkout: Path, generators: Sequence[Generator], policy: SandboxPolicy, python_bin: Path | None
) -> tuple[list[dict[str, Any]], list[str], bool]:
    """Run every generator in order.

    Returns:
        What each did, the failures (as sentences), and whether one reached its time budget.
    """
    runs: list[dict[str, Any]] = []
    failures: list[str] = []
    timed_out = False
    extra = {"PYTHONDONTWRITEBYTECODE": "1"}
    for gen in generators:
        grant = granted(policy, network=gen.network, python_bin=python_bin, extra=extra)
        result = sandbox.run(shlex.split(gen.command), checkout, grant)
        runs.append(
            {
                "name": gen.name,
                "command": gen.command,
                "returncode": result.returncode,
                "timed_out": result.timed_out,
                "duration_s": round(result.duration_s, 3),
                "network": gen.network,
                "isolation": result.isolation.kind,
            }
        )
        if not result.ok:
            timed_out |= result.timed_out
            why = describe_failure(f"generator {gen.name!r} ({gen.command})", result)
            if not gen.network and looks_like_network_failure(result.stderr):
                why += "; it seems to need the network, which this generator is not granted"
            failures.append(why)
    return runs, failures, timed_out


def check_generated(
    checkout: Path,
    generators: Sequence[Generator],
    changed: Sequence[ChangedPath],
    policy: SandboxPolicy,
    python_bin: Path | None,
) -> Observation:
    """Decide ``generated_artifacts_fresh`` for one candidate.

    Args:
        checkout: a clean git checkout of the candidate tree (``git.export_tree``); the generators
            write into it.
        generators: the contract's ``oracles.generators``, run in order.
        changed: the patch's changed paths (base to candidate).
        policy: the sandbox policy (timeout per generator, environment); the network grant is
            each generator's own.
        python_bin: the environment's interpreter, so ``python`` in a command resolves to it;
            None leaves ``PATH`` as the policy has it.

    Returns:
        One check: ``passed`` when no generator changed anything (or none is declared and no
        marked-generated file was edited); ``failed`` naming the paths regeneration changed and
        any derived output edited without its source; ``error`` when a generator failed or timed
        out, the checkout was not clean to begin with, or a marked-generated file was edited with
        no generator declared. ``details``: ``generators`` (each run), ``regenerated`` (status
        entries), ``derived_without_source``, ``marked_generated``.

    Raises:
        GitError: git failed in the checkout.
    """
    marked = marked_generated(checkout, changed)
    details: dict[str, Any] = {"marked_generated": list(marked), "generators": []}
    if not generators:
        if marked:
            detail = (
                f"the patch edits files marked generated ({', '.join(marked)}) but the contract "
                "declares no generator: freshness cannot be verified"
            )
            return _observation("error", detail, details)
        return _observation("passed", "no generator declared; no generated file edited", details)
    with git.sealed(checkout) as seal:  # the generators may rewrite the checkout's .git
        before = seal.status()
        if before:
            detail = f"checkout is not clean before regeneration: {', '.join(before[:10])}"
            return _observation("error", detail, details)
        ran = _run_generators(checkout, generators, policy, python_bin)
        details["generators"], failures, timed_out = ran
        if failures:
            detail = "cannot verify freshness: " + "; ".join(failures)
            return _observation("error", detail, details, "timeout" if timed_out else None)
        entries = seal.status()
    paths = sorted({entry[3:] for entry in entries})
    details["regenerated"] = list(entries)
    if not paths:
        names = ", ".join(g.name for g in generators)
        return _observation("passed", f"regenerated ({names}): nothing changed", details)
    derived = _derived_without_source(generators, changed, set(paths))
    details["derived_without_source"] = derived
    detail = f"regeneration changed {', '.join(paths)}"
    for path in derived:
        detail += f"; edited derived output {path} without its source: regeneration overwrites it"
    return _observation("failed", detail, details)
