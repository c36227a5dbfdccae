"""Trees and commits as objects: commits without refs, tree edits, plain checkouts, commit facts."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from repogate.errors import GitError
from repogate.git._run import (
    _IDENTITY,
    _checked_rev,
    _exec,
    _failure,
    _private_index,
    _run_env,
    _text,
    run_git,
)


def commit_tree(repo: Path, tree: str, parents: Sequence[str], message: str) -> str:
    """Make a commit of ``tree`` with ``parents``, a fixed author and date, and no ref.

    The harness identity and date of :func:`commit_candidate` are used, so the same tree, parents
    and message always give the same SHA.

    Args:
        repo: the repository.
        tree: a tree id.
        parents: parent commits (none for a root commit).
        message: the commit message.

    Returns:
        The new commit's full SHA.

    Raises:
        GitError: the tree or a parent is unknown.
    """
    args = ["commit-tree", _checked_rev(tree)]
    for parent in parents:
        args += ["-p", _checked_rev(parent)]
    return _run_env([*args, "-F", "-"], repo, _IDENTITY, message).decode().strip()


def commit_parents(repo: Path, commit: str) -> tuple[str, ...]:
    """Return the parents of ``commit``, first parent first (empty for a root commit).

    Raises:
        GitError: ``commit`` names no commit.
    """
    args = ["rev-list", "--parents", "-n", "1", "--end-of-options", _checked_rev(commit)]
    line = _text(args, repo)
    return tuple(line.split()[1:])


def commit_subject(repo: Path, commit: str) -> str:
    """Return the first line of ``commit``'s message.

    Raises:
        GitError: ``commit`` names no commit.
    """
    return _text(["log", "-1", "--format=%s", "--end-of-options", _checked_rev(commit)], repo)


def commit_date(repo: Path, commit: str) -> str:
    """Return ``commit``'s committer date in UTC, RFC 3339 (``2024-01-01T00:00:00Z``).

    Raises:
        GitError: ``commit`` names no commit.
    """
    args = ["log", "-1", "--format=%ct", "--end-of-options", _checked_rev(commit)]
    seconds = int(_text(args, repo))
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def existing_paths(repo: Path, rev: str, paths: Sequence[str]) -> frozenset[str]:
    """Return which of ``paths`` are files (blobs or links) in commit or tree ``rev``, in one call.

    Raises:
        GitError: ``rev`` is unknown.
    """
    if not paths:
        return frozenset()
    args = ["ls-tree", "-r", "-z", "--name-only", "--full-tree", f"{_checked_rev(rev)}^{{tree}}"]
    out = run_git([*args, "--", *paths], repo)
    wanted = set(paths)
    return frozenset(p for p in (os.fsdecode(x) for x in out.split(b"\0") if x) if p in wanted)


def tree_paths(repo: Path, rev: str) -> tuple[str, ...]:
    """Return every file path (blobs and links) of commit or tree ``rev``.

    Raises:
        GitError: ``rev`` is unknown.
    """
    args = ["ls-tree", "-r", "-z", "--name-only", "--full-tree", f"{_checked_rev(rev)}^{{tree}}"]
    return tuple(os.fsdecode(x) for x in run_git(args, repo).split(b"\0") if x)


def holds_post_image(repo: Path, rev: str, patch: bytes) -> bool:
    """Return True when commit or tree ``rev`` holds ``patch``'s post-image.

    That is, ``git apply --cached --check --reverse`` of ``patch`` succeeds against ``rev``'s
    tree (read into a throw-away index; nothing is written). Works for patches without
    ``index`` lines, as SWE-bench's sometimes are.

    Raises:
        GitError: ``rev`` is unknown.
    """
    with _private_index() as env:
        _run_env(["read-tree", f"{_checked_rev(rev)}^{{tree}}"], repo, env)
        done = _exec(["apply", "--cached", "--check", "--reverse", "-"], repo, patch, env)
    return done.returncode == 0


def default_branch(repo: Path) -> str | None:
    """Return the branch ``HEAD`` names in ``repo`` (a mirror's default branch), or None."""
    try:
        name = _text(["symbolic-ref", "--quiet", "--short", "HEAD"], repo)
    except GitError:
        return None
    return name or None


def tree_with_files(repo: Path, tree: str, files: Mapping[str, bytes | None]) -> str:
    """Return a tree equal to ``tree`` except for ``files`` (None removes a path).

    Written through a private index (``read-tree``, ``update-index -z --index-info``,
    ``write-tree``), so it works in bare repositories too; new files get mode 100644, existing ones
    keep theirs.

    Raises:
        GitError: ``tree`` is unknown or git failed.
    """
    with _private_index() as env:
        _run_env(["read-tree", f"{_checked_rev(tree)}^{{tree}}"], repo, env)
        listed = _run_env(["ls-files", "-s", "-z", "--", *files], repo, env) if files else b""
        modes = {}
        for entry in listed.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            if meta:
                modes[os.fsdecode(name)] = meta.split(b" ")[0].decode()
        records = []
        for path, data in sorted(files.items()):
            if data is None:
                records.append(f"0 {'0' * 40}\t{path}")
                continue
            blob = run_git(["hash-object", "-w", "--stdin"], repo, input=data).decode().strip()
            records.append(f"{modes.get(path, '100644')} {blob}\t{path}")
        if records:
            info = "".join(f"{r}\0" for r in records).encode()
            done = _exec(["update-index", "-z", "--index-info"], repo, info, env)
            if done.returncode != 0:
                raise _failure(["update-index", "--index-info"], done)
        return _run_env(["write-tree"], repo, env).decode().strip()


def checkout_tree(repo: Path, tree_or_commit: str, dest: Path) -> None:
    """Write the files of a tree into ``dest`` (no ``.git``): a plain checkout for running tests.

    Through a private index (``read-tree`` then ``checkout-index -a``), so the repository's own
    index, HEAD and work tree are untouched; cheaper than :func:`export_tree` for repositories with
    long histories, and tree ids (not only commits) are accepted.

    Raises:
        GitError: the tree is unknown, or git failed.
    """
    dest.mkdir(parents=True, exist_ok=True)
    with _private_index() as env:
        _run_env(["read-tree", f"{_checked_rev(tree_or_commit)}^{{tree}}"], repo, env)
        _run_env([f"--work-tree={dest}", "checkout-index", "-a", "-f"], repo, env)


def tree_from_dir(repo: Path, src: Path) -> str:
    """Store the files under ``src`` (a plain folder) as a tree in ``repo`` and return its id.

    Taken as ``git add -A`` sees them (``.gitignore`` in ``src`` respected) through a private
    index. Compare the result with another tree through :func:`changed_paths`.

    Raises:
        GitError: git failed.
    """
    with _private_index() as env:
        _run_env([f"--work-tree={src}", "add", "-A", "--", "."], repo, env)
        return _run_env(["write-tree"], repo, env).decode().strip()


def commit_message(repo: Path, commit: str) -> tuple[str, str]:
    """Return ``(committer date in ISO 8601 strict, full message)`` of ``commit``.

    Raises:
        GitError: ``commit`` names no commit.
    """
    out = _text(["log", "-1", "--format=%cI%x00%B", "--end-of-options", _checked_rev(commit)], repo)
    date, _, message = out.partition("\0")
    return date.strip(), message.strip()


def last_change_date(repo: Path, rev: str, paths: Sequence[str]) -> str | None:
    """Return the committer date (ISO 8601) of the newest commit at or before ``rev`` touching ``paths``.

    None when no commit touches them (or ``paths`` is empty).

    Raises:
        GitError: ``rev`` is unknown.
    """
    if not paths:
        return None
    args = ["log", "-1", "--format=%cI", "--end-of-options", _checked_rev(rev), "--", *paths]
    out = _text(args, repo).strip()
    return out or None
