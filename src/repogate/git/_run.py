"""Running git: the clean environment, the pinned settings, and revision lookups.

Every call to the git CLI in :mod:`repogate.git` goes through :func:`_exec` here.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from repogate.errors import GitError

HARNESS_NAME = "repogate-harness"
HARNESS_EMAIL = "harness@repogate.invalid"
HARNESS_DATE = "946684800 +0000"  # 2000-01-01T00:00:00Z, git's raw date format

# Passed as `-c` on every call: command-line settings override any repository's own configuration.
# fmt: off
_PINNED_CONFIG = (
    "core.hooksPath=/dev/null", "core.fsmonitor=false", "core.autocrlf=false", "core.pager=cat",
    "safe.directory=*", "commit.gpgSign=false", "gc.auto=0", "maintenance.auto=false",
    "init.defaultBranch=main", "advice.detachedHead=false", "color.ui=false",
    "diff.noprefix=false", "diff.mnemonicPrefix=false", "diff.relative=false",
    "diff.algorithm=myers", "diff.indentHeuristic=true",
    "apply.ignoreWhitespace=no", "apply.whitespace=nowarn",
)
# fmt: on

# Written to ``info/attributes`` of every git directory the harness makes. That file outranks every
# ``.gitattributes`` of the tree, and ``!attr`` makes an attribute unspecified, so whatever the tree
# (the candidate, or code its tests ran) declares, the harness's git runs no filter driver, merges
# and diffs as text (no ``merge=union``, no ``-diff``/``binary``), and rewrites no content (no
# ``text``/``eol``/``ident``/``working-tree-encoding``). git 2.39 has no ``--attr-source``.
# https://git-scm.com/docs/gitattributes#_description (precedence of the attribute files)
NEUTRAL_ATTRIBUTES = (
    "* !filter !diff !merge !text !eol !crlf !ident !working-tree-encoding"
    " !conflict-marker-size !whitespace\n"
)
_IDENTITY = {
    f"GIT_{role}_{field}": value
    for role in ("AUTHOR", "COMMITTER")
    for field, value in (("NAME", HARNESS_NAME), ("EMAIL", HARNESS_EMAIL), ("DATE", HARNESS_DATE))
}


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "LC_ALL": "C",
        "LANG": "C",
        "HOME": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "true",
    }
    env.update(extra or {})
    return env


def neutralise_attributes(git_dir: Path) -> None:
    """Write :data:`NEUTRAL_ATTRIBUTES` as ``GIT_DIR/info/attributes`` (a link there is replaced).

    Raises:
        OSError: ``git_dir`` cannot be written.
    """
    info = git_dir / "info"
    info.mkdir(exist_ok=True)
    target = info / "attributes"
    target.unlink(missing_ok=True)
    target.write_text(NEUTRAL_ATTRIBUTES)


def _cmd(args: Sequence[str]) -> list[str]:
    """``git``, the pinned ``-c`` settings, then ``args``."""
    return ["git", *(item for setting in _PINNED_CONFIG for item in ("-c", setting)), *args]


def _exec(
    args: Sequence[str],
    cwd: Path,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            _cmd(args),
            cwd=cwd,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            env=_env(env),
            check=False,
        )
    except OSError as exc:  # git missing, or cwd gone
        raise GitError(["git", *args], -1, str(exc)) from exc


def run_git(
    args: Sequence[str],
    cwd: Path,
    *,
    input: bytes | None = None,
    check: bool = True,
) -> bytes:
    """Run ``git ARGS`` in ``cwd`` and return its standard output as bytes.

    Args:
        args: git's arguments, without the leading ``git``.
        cwd: the directory to run in.
        input: bytes for git's standard input; None gives it an empty one.
        check: raise on a non-zero exit (else return the output anyway).

    Raises:
        GitError: git exited non-zero (with ``check``) or could not be started.
    """
    done = _exec(args, cwd, input)
    if check and done.returncode != 0:
        raise _failure(args, done)
    return done.stdout


def exec_capped(args: Sequence[str], cwd: Path, max_bytes: int) -> bytes | None:
    """Run ``git ARGS`` and return its output, or None once it passes ``max_bytes`` (git stopped).

    Raises:
        GitError: git exited non-zero or could not be started.
    """
    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(
                _cmd(args), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors,
                env=_env(),
            )  # fmt: skip
        except OSError as exc:
            raise GitError(["git", *args], -1, str(exc)) from exc
        assert proc.stdout is not None
        chunks: list[bytes] = []
        size = 0
        with proc.stdout:
            while size <= max_bytes and (chunk := proc.stdout.read(1 << 20)):
                chunks.append(chunk)
                size += len(chunk)
        if size > max_bytes:
            proc.kill()
            proc.wait()
            return None
        if proc.wait() != 0:
            errors.seek(0)
            raise GitError(
                ["git", *args], proc.returncode, errors.read().decode("utf-8", "replace")
            )
    return b"".join(chunks)


def _run_env(
    args: Sequence[str], cwd: Path, env: Mapping[str, str], input: str | None = None
) -> bytes:
    done = _exec(args, cwd, None if input is None else input.encode(), env)
    if done.returncode != 0:
        raise _failure(args, done)
    return done.stdout


def _failure(args: Sequence[str], done: subprocess.CompletedProcess[bytes]) -> GitError:
    return GitError(["git", *args], done.returncode, done.stderr.decode("utf-8", "replace"))


@contextmanager
def _private_index() -> Iterator[dict[str, str]]:
    """Yield git's environment for a throw-away index; the repository's own index is untouched."""
    with tempfile.TemporaryDirectory(prefix="repogate-index-") as tmp:
        yield {"GIT_INDEX_FILE": str(Path(tmp) / "index")}


def _ok(args: Sequence[str], cwd: Path) -> bool:
    return _exec(args, cwd).returncode == 0


def _text(args: Sequence[str], cwd: Path) -> str:
    return run_git(args, cwd).decode("utf-8", "replace").strip()


def _checked_rev(rev: str) -> str:
    if not rev or rev.startswith("-"):
        raise GitError(["git", rev], -1, f"refusing revision {rev!r}: empty or starts with '-'")
    return rev


def rev_parse(repo: Path, rev: str) -> str:
    """Return the full 40-hex object id ``rev`` names in ``repo``.

    Raises:
        GitError: ``rev`` names nothing in ``repo``.
    """
    return _text(["rev-parse", "--verify", "--end-of-options", _checked_rev(rev)], repo)


def tree_of(repo: Path, rev: str) -> str:
    """Return the id of the tree of commit ``rev``.

    Raises:
        GitError: ``rev`` names no commit or tree in ``repo``.
    """
    return rev_parse(repo, f"{_checked_rev(rev)}^{{tree}}")


def has_object(repo: Path, sha: str) -> bool:
    """Return True when object ``sha`` is present in ``repo`` (reachable or not)."""
    return not sha.startswith("-") and _ok(["cat-file", "-e", sha], repo)


def missing_objects(repo: Path, rev: str) -> tuple[str, ...]:
    """Return the objects of ``rev``'s history that ``repo`` lacks (40 hex each, sorted).

    A partial copy of a repository (a snapshot store that keeps no file of 4 MiB and more) holds
    the commits and trees but not every blob; any fetch or checkout reaching one fails with
    git's "unable to read". ``git rev-list --objects --missing=print`` lists them without
    failing (astropy's 405,620 objects: about 3 s).

    Raises:
        GitError: ``rev`` names no commit in ``repo``.
    """
    args = ["rev-list", "--objects", "--missing=print", "--end-of-options", _checked_rev(rev)]
    lines = _text(args, repo).splitlines()
    return tuple(sorted({line[1:].strip() for line in lines if line.startswith("?")}))


def paths_in_tree(repo: Path, rev: str, objects: Sequence[str]) -> dict[str, str]:
    """Map each of ``objects`` found in ``rev``'s tree (recursively) to its path there.

    Raises:
        GitError: ``rev`` names no commit or tree in ``repo``.
    """
    wanted = set(objects)
    found: dict[str, str] = {}
    out = run_git(["ls-tree", "-r", "-z", "--end-of-options", _checked_rev(rev)], repo)
    for entry in out.split(b"\0"):
        head, _, name = entry.partition(b"\t")
        parts = head.split()
        if len(parts) == 3 and parts[2].decode() in wanted:
            found.setdefault(parts[2].decode(), name.decode("utf-8", "replace"))
    return found


def merge_base(repo: Path, a: str, b: str) -> str | None:
    """Return the best common ancestor of commits ``a`` and ``b`` (40 hex), None when none.

    Raises:
        GitError: either commit is unknown.
    """
    args = ["merge-base", "--end-of-options", _checked_rev(a), _checked_rev(b)]
    done = _exec(args, repo)
    if done.returncode == 1 and not done.stderr.strip():
        return None
    if done.returncode != 0:
        raise _failure(args, done)
    return done.stdout.decode().strip()


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    """Return True when commit ``a`` is an ancestor of (or equal to) commit ``b``.

    Raises:
        GitError: either commit is unknown.
    """
    args = ["merge-base", "--is-ancestor", _checked_rev(a), _checked_rev(b)]
    done = _exec(args, repo)
    if done.returncode in (0, 1):
        return done.returncode == 0
    raise _failure(args, done)
