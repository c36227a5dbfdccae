"""Reading a work tree that untrusted code writes, with a git directory only the harness holds.

A generator or a test run may rewrite the checkout's own ``.git`` (configuration that defines a
filter driver, ``info/attributes``, a ``.git`` file pointing at another repository, objects made
into FIFOs). :func:`sealed` therefore records the tree's files, before that code runs, in an index
of a fresh git directory outside every sandbox (``/tmp`` is a fresh tmpfs in the sandbox), with
:data:`NEUTRAL_ATTRIBUTES` and no objects; afterwards :meth:`Seal.status` compares the work tree
to that index without reading the checkout's ``.git`` at all.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from repogate.git._run import _exec, _failure, _run_env, neutralise_attributes, rev_parse, run_git


@dataclass(frozen=True)
class Seal:
    """A harness-owned git directory whose index holds a work tree's tracked files.

    Attributes:
        work_tree: the work tree it reads (never its ``.git``).
        git_dir: the harness's git directory (no objects, no configuration of the tree's).
    """

    work_tree: Path
    git_dir: Path

    def _git(
        self, args: list[str], *, ok: tuple[int, ...] = (0,), input: bytes | None = None
    ) -> bytes:
        env = {"GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.work_tree)}
        done = _exec(args, self.git_dir, input, env)
        if done.returncode not in ok:
            raise _failure(args, done)
        return done.stdout

    def _self_ignored(self) -> list[str]:
        """Untracked ``.gitignore`` files ignored by their own patterns (no other file's)."""
        listing = ["ls-files", "-z", "--others", "--ignored", "--exclude-standard"]
        names = [p for p in self._git(listing).split(b"\0") if p.endswith(b".gitignore")]
        names = [p for p in names if PurePosixPath(os.fsdecode(p)).name == ".gitignore"]
        if not names:
            return []
        data = b"".join(p + b"\0" for p in names)
        args = ["check-ignore", "-v", "-z", "--stdin", "--no-index"]
        fields = self._git(args, ok=(0, 1), input=data).split(b"\0")
        return [
            os.fsdecode(path)
            for source, _, _, path in zip(*(fields[i::4] for i in range(4)), strict=False)
            if path and source == path
        ]

    def status(self) -> tuple[str, ...]:
        """Return ``git status --porcelain=v1``-shaped entries for the work tree, sorted.

        ``" M path"``, ``" D path"``, ``" T path"`` for tracked files changed, deleted or turned
        into another kind; ``"?? path"`` for untracked files (``.gitignore`` respected, as
        ``git status`` does); ``"!! path"`` for a new ``.gitignore`` ignored by its own patterns
        and no other file's (it would hide what it ignores; a tool cache the project already
        ignores, ``.pytest_cache/.gitignore``, is not reported). An empty tuple means the tree is as sealed.

        Raises:
            GitError: git failed.
        """
        self._git(["update-index", "-q", "--refresh"], ok=(0, 1))
        fields = self._git(["diff-files", "--name-status", "-z", "--no-renames"]).split(b"\0")
        entries = [
            f" {status.decode()[0]} {os.fsdecode(path)}"
            for status, path in zip(fields[0::2], fields[1::2], strict=False)
            if status
        ]
        others = ["ls-files", "-z", "--others", "--exclude-standard"]
        entries += [f"?? {os.fsdecode(p)}" for p in self._git(others).split(b"\0") if p]
        entries += [f"!! {path}" for path in self._self_ignored()]
        return tuple(sorted(entries, key=lambda e: e[3:]))


@contextmanager
def sealed(work_tree: Path) -> Iterator[Seal]:
    """Seal ``work_tree`` (a clean checkout the harness just made) before untrusted code runs there.

    Its ``HEAD`` commit is read into the index of a fresh git directory (the checkout's objects
    borrowed for that one step, then let go); the directory is removed when the block ends.

    Args:
        work_tree: a checkout made by :func:`repogate.git.export_tree`, no other code run in it yet.

    Yields:
        The seal; call :meth:`Seal.status` before and after the untrusted code runs.

    Raises:
        GitError: ``work_tree`` is not a repository with a ``HEAD`` commit, or git failed.
    """
    head = rev_parse(work_tree, "HEAD^{commit}")
    objects = run_git(["rev-parse", "--git-path", "objects"], work_tree).decode().strip()
    with tempfile.TemporaryDirectory(prefix="repogate-seal-") as tmp:
        git_dir = Path(tmp) / "git"
        run_git(["init", "-q", "--bare", str(git_dir)], Path(tmp))
        neutralise_attributes(git_dir)
        alternates = git_dir / "objects" / "info" / "alternates"
        alternates.write_text(f"{(work_tree / objects).resolve()}\n")
        _run_env(["read-tree", head], git_dir, {"GIT_DIR": str(git_dir)})
        alternates.unlink()
        seal = Seal(work_tree.resolve(), git_dir)
        seal.status()  # records every file's stat, so later reads hash only what changed
        yield seal
