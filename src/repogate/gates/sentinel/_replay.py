"""Replay accounting for the sentinel: step records, conflicted hunks and lines, the changelog policy.

What replaying one follow-up did is a :class:`StepRecord` (its outcomes: :mod:`repogate.gates.sentinel`).

A replayed follow-up that conflicts leaves, in git's result tree, conflict markers in each file with
a content conflict (``<<<<<<< ours``, optional ``||||||| base``, ``=======``, ``>>>>>>> theirs``,
as git-merge(1) "HOW CONFLICTS ARE PRESENTED" describes them). Repair effort is read from those
markers: one hunk per marked block, and its lines are the lines between the markers (both sides).
A structural conflict (modify/delete, rename/delete, add/add of different types) has no markers; it
counts one hunk, and its lines are the lines by which the version git left in the tree differs from
the follow-up's parent: what a person must port by hand.

Conflicts confined to changelog and news files are resolved by the contract's declared policy
(``union``: keep both sides' lines, ours first, like ``git merge-file --union`` but keeping a line
both sides hold only once; ``theirs``: take the follow-up's side) and counted apart from semantic
conflicts.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from repogate import git
from repogate._model import FrozenModel
from repogate.globs import matches_any

ChangelogPolicy = Literal["union", "theirs"]
ReplayOutcome = Literal["clean", "resolved", "conflict", "empty", "blocked"]
StepStatus = Literal["clean", "resolved", "conflict", "empty", "blocked", "error", "regressed"]
TestsOutcome = Literal["passed", "regressed", "error", "none"]

_OURS, _BASE, _SEP, _THEIRS = "<<<<<<<", "|||||||", "=======", ">>>>>>>"


class ConflictFile(FrozenModel):
    """One conflicted path of a replay step.

    Attributes:
        path: the path, repository-relative.
        kind: git's conflict type without the ``CONFLICT`` prefix: ``contents``,
            ``modify/delete``, ``rename/delete`` ...
        changelog: True when the path matches the contract's changelog globs.
        hunks: conflicted hunks (marked blocks; 1 for a structural conflict).
        lines: conflicted lines (see the module docstring).
        superseded: the follow-up deleted the path the candidate changed (``modify/delete``):
            the deletion wins, as it would for the real change, and the follow-up's tests judge
            whether anything the candidate did was lost; not a blocking conflict.
    """

    path: str
    kind: str
    changelog: bool
    hunks: int
    lines: int
    superseded: bool = False


class StepRecord(FrozenModel):
    """What replaying one follow-up did.

    Attributes:
        sha: the follow-up commit.
        parent: the parent its change was taken against.
        subject: its subject line.
        replay: how the change applied (see :mod:`repogate.gates.sentinel`).
        status: the step as a whole: ``replay``, except that a replayed step none of whose
            selected files could be collected in history is ``error`` and one with regressions
            is ``regressed``.
        conflicts: conflicted files, changelog and semantic.
        tree: the state after the step (None when blocked or conflicted).
        tests: the test files selected.
        uncollectable: selected files that failed to collect in history (a plugin or package the
            environment lacks): left out of the step, counted per file, named in ``detail``.
        tests_outcome: ``passed``, ``regressed``, ``error`` (no selected file collectable in
            history) or
            ``none`` (nothing selected, or not run).
        history_cached: True when the history's results came from the cache.
        history_passed: how many tests passed at the follow-up in real history.
        regressions: ids that passed in history and did not pass here.
        detail: one sentence for people.
    """

    sha: str
    parent: str
    subject: str
    replay: ReplayOutcome
    status: StepStatus
    conflicts: tuple[ConflictFile, ...] = ()
    tree: str | None = None
    tests: tuple[str, ...] = ()
    uncollectable: tuple[str, ...] = ()
    tests_outcome: TestsOutcome = "none"
    history_cached: bool = False
    history_passed: int = 0
    regressions: tuple[str, ...] = ()
    detail: str = ""


@dataclass
class _Block:
    ours: list[str] = field(default_factory=list)
    base: list[str] = field(default_factory=list)
    theirs: list[str] = field(default_factory=list)


def _marker(line: str, marker: str) -> bool:
    return line.startswith(marker) and line[len(marker) : len(marker) + 1] in ("", " ", "\n")


def split_conflicts(text: str) -> list[str | _Block]:
    """Split ``text`` into plain lines and conflict blocks (lines keep their line endings).

    An unterminated block (a ``<<<<<<<`` with no ``>>>>>>>``) is kept as plain lines.
    """
    out: list[str | _Block] = []
    block: _Block | None = None
    section: list[str] = []
    pending: list[str] = []
    for line in text.splitlines(keepends=True):
        if block is None:
            if _marker(line, _OURS):
                block, section, pending = _Block(), [], [line]
                section = block.ours
            else:
                out.append(line)
            continue
        pending.append(line)
        if _marker(line, _BASE):
            section = block.base
        elif _marker(line, _SEP):
            section = block.theirs
        elif _marker(line, _THEIRS):
            out.append(block)
            block = None
        else:
            section.append(line)
    if block is not None:
        out.extend(pending)
    return out


def count_markers(text: str) -> tuple[int, int]:
    """Return ``(hunks, lines)`` of the conflict blocks in ``text``; lines exclude the markers."""
    blocks = [b for b in split_conflicts(text) if isinstance(b, _Block)]
    return len(blocks), sum(len(b.ours) + len(b.base) + len(b.theirs) for b in blocks)


def resolve_text(text: str, policy: ChangelogPolicy) -> str:
    """Resolve every conflict block in ``text`` by ``policy`` (``union`` or ``theirs``)."""
    out: list[str] = []
    for part in split_conflicts(text):
        if isinstance(part, str):
            out.append(part)
        elif policy == "union":
            out.extend(part.ours + [line for line in part.theirs if line not in part.ours])
        else:
            out.extend(part.theirs)
    return "".join(out)


def changed_line_count(before: str, after: str) -> int:
    """Return how many lines differ between two texts (removed plus added), at least 1."""
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    changed = sum(
        (i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )
    return max(changed, 1)


def _kind(path: str, messages: Iterable[git.MergeMessage]) -> str:
    for message in messages:
        if path in message.paths and message.kind.startswith("CONFLICT"):
            return message.kind.removeprefix("CONFLICT").strip(" ()")
    return "contents"


def _decode(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")


def conflict_files(
    repo: Path, step: git.ReplayStep, changelog_globs: Sequence[str]
) -> tuple[ConflictFile, ...]:
    """Describe each conflicted path of ``step``: kind, changelog or not, hunks and lines.

    Raises:
        GitError: git failed reading a blob.
    """
    files: list[ConflictFile] = []
    for path, data in step.conflict_text:
        text = _decode(data)
        hunks, lines = count_markers(text)
        if hunks == 0:
            parent_text = _decode(git.show_file(repo, step.parent, path))
            hunks, lines = 1, changed_line_count(parent_text, text)
        kind = _kind(path, step.merge.messages)
        changelog = matches_any(path, changelog_globs)
        superseded = kind == "modify/delete" and git.show_file(repo, step.commit, path) is None
        files.append(
            ConflictFile(
                path=path,
                kind=kind,
                changelog=changelog,
                hunks=hunks,
                lines=lines,
                superseded=superseded,
            )
        )
    return tuple(files)


def resolve_changelog(repo: Path, step: git.ReplayStep, policy: ChangelogPolicy) -> str:
    """Resolve ``step``'s conflicts (all in changelog files) by ``policy`` and return the tree.

    A content conflict is resolved inside its markers; a structural one takes the follow-up's
    version of the path (or its absence).

    Raises:
        GitError: git failed.
    """
    files: dict[str, bytes | None] = {}
    for path, data in step.conflict_text:
        hunks, _ = count_markers(_decode(data))
        if hunks:
            files[path] = resolve_text(_decode(data), policy).encode()
        else:
            files[path] = git.show_file(repo, step.commit, path)
    return git.tree_with_files(repo, step.merge.tree, files)
