"""Reading and applying changes: diffs, changed paths, files, status, logs, attributes, patches."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from repogate.errors import GitError, PatchApplyError
from repogate.git._run import _checked_rev, _exec, exec_capped, run_git, tree_of
from repogate.git._safety import check_patch_paths, parse_numstat_paths


@dataclass(frozen=True)
class ChangedPath:
    """One path changed between two commits, as ``git diff --raw --no-renames`` reports it.

    Attributes:
        status: ``'A'`` added, ``'M'`` modified, ``'D'`` deleted, ``'T'`` type changed.
        path: the path, relative to the repository root, as git spells it (``/`` separators).
        old_path: always None: renames are reported as a delete plus an add (``--no-renames``).
        is_symlink: True when the path is a symbolic link (mode 120000) on either side: a link
            added, changed, deleted, or replaced by a file or a file by a link (type change
            ``T``; a link replaced by a file is a changed link, as a graded test may read
            through it).
    """

    status: str
    path: str
    old_path: str | None
    is_symlink: bool


def glob_pathspecs(patterns: Sequence[str], *, exclude: bool = False) -> list[str]:
    """Return git pathspecs that select what the contract's globs (:mod:`repogate.globs`) select.

    Plain git pathspecs let ``*`` cross ``/`` (``*.md`` matches ``docs/a.md``); the contract's
    dialect keeps ``*`` inside one folder and lets a pattern naming a folder select everything
    below it. Git's ``:(glob)`` magic gives the first rule (``**`` crosses folders); the second is
    each pattern again with ``/**`` appended. https://git-scm.com/docs/gitglossary#Documentation/gitglossary.txt-aiddefpathspecapathspec

    Args:
        patterns: contract globs, repository-relative (a leading ``/`` is ignored).
        exclude: give ``:(exclude,glob)`` pathspecs instead of ``:(glob)`` ones.
    """
    magic = ":(exclude,glob)" if exclude else ":(glob)"
    out: list[str] = []
    for pattern in patterns:
        body = pattern.strip().strip("/")
        out += [f"{magic}{body}", f"{magic}{body}/**"]
    return out


def diff_binary(
    repo: Path, a: str, b: str, paths: Sequence[str] = (), exclude: Sequence[str] = ()
) -> bytes:
    """Return the exact bytes of the binary diff from commit ``a`` to commit ``b``.

    ``git diff --binary --full-index --no-color --no-ext-diff --no-textconv --no-renames a b --
    PATHS :(exclude)EXCLUDE...``, the patterns read in the contract's glob dialect (see
    :func:`glob_pathspecs`). Renames are off so the patch is plain adds and deletes, the
    same whatever rename detection a machine has configured. These bytes are what
    :func:`repogate.state.patch_digest` hashes.

    Args:
        repo: a repository holding both commits.
        a: the old side (normally the base).
        b: the new side (normally the candidate).
        paths: contract globs to limit the diff to; empty means everything.
        exclude: contract globs to leave out.

    Raises:
        GitError: a commit is unknown.
    """
    return run_git(_diff_args(a, b, paths, exclude), repo)


def diff_binary_capped(repo: Path, a: str, b: str, max_bytes: int) -> bytes | None:
    """Return :func:`diff_binary` of ``a`` to ``b``, or None when it is longer than ``max_bytes``.

    git's output is read in chunks and git is stopped once the cap is passed, so memory stays
    within ``max_bytes`` whatever the change holds (a 5 GB file costs no 5 GB read).

    Raises:
        GitError: a commit is unknown.
    """
    return exec_capped(_diff_args(a, b, (), ()), repo, max_bytes)


def _diff_args(a: str, b: str, paths: Sequence[str], exclude: Sequence[str]) -> list[str]:
    spec = [*glob_pathspecs(paths), *glob_pathspecs(exclude, exclude=True)]
    return [
        "diff",
        "--binary",
        "--full-index",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        _checked_rev(a),
        _checked_rev(b),
        "--",
        *spec,
    ]


def changed_paths(repo: Path, a: str, b: str) -> tuple[ChangedPath, ...]:
    """Return every path that differs between commits ``a`` and ``b``, in git's order.

    Read from ``git diff --raw -z --no-renames --no-abbrev``: a status letter and the modes of both
    sides (mode 120000 is a symbolic link).

    Raises:
        GitError: a commit is unknown.
    """
    args = ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", _checked_rev(a), _checked_rev(b)]
    fields = run_git(args, repo).split(b"\0")
    changes: list[ChangedPath] = []
    for head, path in zip(fields[0::2], fields[1::2], strict=False):
        if not head.startswith(b":"):
            break
        old_mode, new_mode, _, _, status = head[1:].decode().split(" ")
        link = "120000" in (old_mode, new_mode)  # an absent side's mode is 000000
        changes.append(ChangedPath(status[0], os.fsdecode(path), None, link))
    return tuple(changes)


def patch_paths(patch: bytes) -> tuple[str, ...]:
    """Return every path a patch touches, both sides of renames, sorted.

    As git reads them: quoted, unicode and space-containing names included.

    Raises:
        PatchApplyError: git cannot read the patch.
    """
    if not patch.strip():
        return ()
    with tempfile.TemporaryDirectory(prefix="repogate-patch-") as tmp:
        done = _exec(["apply", "--numstat", "-z"], Path(tmp), patch)
    if done.returncode != 0:
        raise PatchApplyError(f"patch is not readable: {done.stderr.decode('utf-8', 'replace')}")
    return tuple(sorted(set(parse_numstat_paths(done.stdout))))


def apply_patch(repo: Path, patch: bytes, *, index: bool = False) -> None:
    """Apply ``patch`` to the work tree of ``repo`` exactly, or not at all.

    No fuzz (git's default context), no ``--reverse``, no ``--3way``, whitespace exact. Before
    anything is written the paths are checked (from ``git apply --numstat -z``): none may be
    absolute, contain ``..`` or a ``.git`` component, or pass through a symbolic link; then
    ``git apply --check`` must pass. git refuses such paths too; both layers are kept. An empty
    patch is a no-op.

    Args:
        repo: a repository with a work tree.
        patch: the patch bytes (``git diff --binary`` output included).
        index: also update the index (``git apply --index``).

    Raises:
        PatchApplyError: the patch does not apply, or touches a forbidden path; the message names
            the file and says why, from git's stderr.
    """
    if not patch.strip():
        return
    done = _exec(["apply", "--numstat", "-z"], repo, patch)
    if done.returncode != 0:
        raise PatchApplyError(f"patch is not readable: {done.stderr.decode('utf-8', 'replace')}")
    check_patch_paths(repo, parse_numstat_paths(done.stdout))
    args = ["apply", "--whitespace=nowarn", *(["--index"] if index else [])]
    for step in (["--check"], []):
        done = _exec([*args, *step], repo, patch)
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip()
            raise PatchApplyError(f"patch does not apply: {why}")


def show_file(repo: Path, rev: str, path: str) -> bytes | None:
    """Return the bytes of ``path`` at commit ``rev``, or None when no file is there.

    Raises:
        GitError: ``rev`` is unknown.
    """
    tree = tree_of(repo, rev)
    entry = run_git(["ls-tree", "-z", "--full-tree", tree, "--", path], repo).split(b"\0")[0]
    meta, _, name = entry.partition(b"\t")
    if not meta or os.fsdecode(name) != path.strip("/") or meta.split(b" ")[1] != b"blob":
        return None
    return run_git(["cat-file", "blob", meta.split(b" ")[2].decode()], repo)


def show_text(repo: Path, rev: str, path: str) -> str:
    """Return ``path`` at commit ``rev`` as text (UTF-8, bad bytes replaced), ``""`` when absent.

    Raises:
        GitError: ``rev`` is unknown.
    """
    data = show_file(repo, rev, path)
    return "" if data is None else data.decode("utf-8", "replace")


def names_word(repo: Path, rev: str, word: str) -> bool:
    """Whether ``word`` occurs as a whole word in any file of commit ``rev`` (``git grep -w -F``).

    Reads the commit's tree only (never a work tree), binary files included, no textconv.

    Raises:
        GitError: ``rev`` is unknown or git failed.
    """
    tree = tree_of(repo, rev)
    args = ["grep", "-q", "-w", "-F", "--no-textconv", "-e", word, tree, "--"]
    done = _exec(args, repo)
    if done.returncode not in (0, 1):
        raise GitError(["git", *args], done.returncode, done.stderr.decode("utf-8", "replace"))
    return done.returncode == 0


def status_porcelain(repo: Path) -> tuple[str, ...]:
    """Return ``git status --porcelain=v1 -z --untracked-files=all --no-renames`` entries.

    Each entry is ``"XY path"``; an empty tuple means a clean work tree.

    Raises:
        GitError: ``repo`` is not a repository.
    """
    args = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]
    out = run_git(args, repo)
    return tuple(os.fsdecode(entry) for entry in out.split(b"\0") if entry)


def log_range(
    repo: Path, a: str, b: str, *, first_parent: bool, paths: Sequence[str] = ()
) -> tuple[str, ...]:
    """Return the commits reachable from ``b`` and not from ``a``, oldest first.

    Args:
        repo: the repository.
        a: the exclusive start.
        b: the inclusive end.
        first_parent: follow only first parents (the branch's own history of merges).
        paths: only commits that change one of these paths (with ``first_parent``, a merge's
            change is taken against its first parent); empty: every commit.

    Raises:
        GitError: a commit is unknown.
    """
    args = ["rev-list", "--reverse", *(["--first-parent"] if first_parent else [])]
    literal = [f":(literal){p}" for p in paths]
    out = run_git([*args, f"{_checked_rev(a)}..{_checked_rev(b)}", "--", *literal], repo)
    return tuple(out.decode().split())


def check_attr(repo: Path, attribute: str, paths: Sequence[str]) -> dict[str, str]:
    """Return the value of ``attribute`` for each path, as the work tree's ``.gitattributes`` say.

    ``git check-attr -z --stdin ATTRIBUTE``: every ``.gitattributes`` in the work tree counts
    (nested files and pattern precedence as git applies them); system attributes are off.

    Args:
        repo: a repository with a work tree.
        attribute: e.g. ``linguist-generated``.
        paths: repository-relative paths (they need not exist).

    Returns:
        Path to ``'set'``, ``'unset'``, ``'unspecified'`` or the attribute's value (``'true'``).

    Raises:
        GitError: git failed.
    """
    if not paths:
        return {}
    data = b"".join(os.fsencode(p) + b"\0" for p in paths)
    out = run_git(["check-attr", "-z", "--stdin", attribute], repo, input=data).split(b"\0")
    return {
        os.fsdecode(path): value.decode("utf-8", "replace")
        for path, _, value in zip(out[0::3], out[1::3], out[2::3], strict=False)
    }
