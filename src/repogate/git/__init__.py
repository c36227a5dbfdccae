"""The only module that runs git: through the git CLI, with argument lists, in a clean environment.

Every failure raises :class:`repogate.errors.GitError` (command, exit code, stderr); bad input
from the user (a repository or base commit that cannot be found) raises
:class:`repogate.errors.UserInputError`; a patch that must not be applied raises
:class:`repogate.errors.PatchApplyError`.

Each call runs with no system or global configuration (``GIT_CONFIG_NOSYSTEM``,
``GIT_CONFIG_GLOBAL=/dev/null``), no terminal prompt, ``LC_ALL=C``, and a few pinned ``-c`` settings
that override any repository configuration: hooks off (``core.hooksPath=/dev/null``), no fsmonitor,
no signing, no automatic gc, fixed diff prefixes and algorithm, whitespace-exact ``git apply``.
Repository configuration an agent could write (filter drivers, textconv commands) is refused by
:func:`commit_candidate` before the harness runs git there (see ``repogate.git._safety``).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from repogate.errors import GitError, PatchApplyError, UserInputError
from repogate.git._safety import check_local_config, check_patch_paths, parse_numstat_paths
from repogate.git._source import REPO_CACHE_ENV, is_git_dir, resolve_source

HARNESS_NAME = "repogate-harness"
HARNESS_EMAIL = "harness@repogate.invalid"
HARNESS_DATE = "946684800 +0000"  # 2000-01-01T00:00:00Z, git's raw date format
CANDIDATE_REF = "refs/repogate/candidate"

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
_IDENTITY = {
    f"GIT_{role}_{field}": value
    for role in ("AUTHOR", "COMMITTER")
    for field, value in (("NAME", HARNESS_NAME), ("EMAIL", HARNESS_EMAIL), ("DATE", HARNESS_DATE))
}
_UPLOAD_PACK = "git -c uploadpack.allowAnySHA1InWant=true upload-pack"


@dataclass(frozen=True)
class ChangedPath:
    """One path changed between two commits, as ``git diff --raw --no-renames`` reports it.

    Attributes:
        status: ``'A'`` added, ``'M'`` modified, ``'D'`` deleted, ``'T'`` type changed.
        path: the path, relative to the repository root, as git spells it (``/`` separators).
        old_path: always None: renames are reported as a delete plus an add (``--no-renames``).
        is_symlink: True when the path is a symbolic link (mode 120000) on the side that exists
            after the change (before it, for a deletion).
    """

    status: str
    path: str
    old_path: str | None
    is_symlink: bool


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


def _exec(
    args: Sequence[str],
    cwd: Path,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    cmd = ["git"]
    for setting in _PINNED_CONFIG:
        cmd += ["-c", setting]
    cmd += list(args)
    try:
        return subprocess.run(
            cmd,
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
        raise GitError(["git", *args], done.returncode, done.stderr.decode("utf-8", "replace"))
    return done.stdout


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


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    """Return True when commit ``a`` is an ancestor of (or equal to) commit ``b``.

    Raises:
        GitError: either commit is unknown.
    """
    args = ["merge-base", "--is-ancestor", _checked_rev(a), _checked_rev(b)]
    done = _exec(args, repo)
    if done.returncode in (0, 1):
        return done.returncode == 0
    raise GitError(["git", *args], done.returncode, done.stderr.decode("utf-8", "replace"))


def _resolve_in_source(source: Path, base: str) -> str:
    args = ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{base}^{{commit}}"]
    done = _exec(args, source) if base and not base.startswith("-") else None
    if done is None or done.returncode != 0:
        raise UserInputError(
            f"base commit {base!r} is not in repository {source}",
            "check the contract's base commit, or refresh the mirror in the repository cache",
        )
    return done.stdout.decode().strip()


def _fetch_commit(source: Path, sha: str, dest: Path) -> None:
    """Make ``dest`` a new repository holding ``sha`` and its ancestors only, on branch main."""
    dest = dest.resolve()
    if dest.exists() and any(dest.iterdir()):
        raise GitError(["git", "init", str(dest)], -1, f"destination {dest} is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    run_git(["init", "-q", "-b", "main", str(dest)], dest)
    run_git(
        [
            "-c",
            "protocol.version=2",
            "fetch",
            "-q",
            "--no-tags",
            "--no-write-fetch-head",
            "--update-head-ok",
            f"--upload-pack={_UPLOAD_PACK}",
            str(source),
            f"{sha}:refs/heads/main",
        ],
        dest,
    )
    run_git(["reset", "-q", "--hard", "main"], dest)
    for leftover in ("FETCH_HEAD", "ORIG_HEAD"):
        (dest / ".git" / leftover).unlink(missing_ok=True)


def prepare_workspace(source: Path, base: str, dest: Path) -> str:
    """Make ``dest`` a fresh repository at ``base`` holding nothing newer than it.

    Only the base commit and its ancestors arrive: no later commit, ref, tag, reflog entry or
    object (``git log --all`` and ``git cat-file -e <later sha>`` find nothing), which closes the
    future-history leak of SWE-bench issue #465. Done with ``git init`` and a protocol-v2 fetch of
    the one SHA (``uploadpack.allowAnySHA1InWant``); the base is checked out on branch ``main``.

    Args:
        source: a local repository, bare or not (see :func:`resolve_source`).
        base: the base commit: full or short SHA, or any revision ``source`` resolves.
        dest: an absent or empty folder.

    Returns:
        The base commit's full 40-hex SHA.

    Raises:
        UserInputError: ``base`` is not a commit of ``source``.
        GitError: ``dest`` is not empty, or git failed.
    """
    sha = _resolve_in_source(source, base)
    _fetch_commit(source, sha, dest)
    return sha


def export_tree(repo: Path, rev: str, dest: Path) -> None:
    """Check out commit ``rev`` of ``repo`` cleanly as a new, self-contained repository at ``dest``.

    Made the same way as a workspace (a fetch of ``rev`` and its ancestors into ``git init``),
    not with ``git worktree`` (which writes into ``repo`` and shares all its refs) nor
    ``clone --shared`` (whose alternates would expose every object of ``repo``).
    ``git status --porcelain`` works there and is empty right after export.

    Raises:
        GitError: ``rev`` is not a commit of ``repo``, ``dest`` is not empty, or git failed.
    """
    _fetch_commit(repo, rev_parse(repo, f"{_checked_rev(rev)}^{{commit}}"), dest)


def commit_candidate(workspace: Path, message: str, *, parent: str | None = None) -> str:
    """Turn the workspace's files into the candidate commit: the harness's act, never the agent's.

    All files are taken as ``git add -A`` sees them (untracked included, ``.gitignore`` respected;
    files already tracked stay tracked) through a private index seeded from ``parent``, so the
    agent's own index does not matter. The commit has a fixed author and committer
    (``repogate-harness <harness@repogate.invalid>``) and date (2000-01-01T00:00:00Z), and exists
    even when nothing changed, so the same tree on the same parent always gives the same SHA.
    The commit is stored at ``refs/repogate/candidate``; HEAD and branches are left alone.

    Args:
        workspace: the agent's workspace (made by :func:`prepare_workspace`).
        message: the commit message.
        parent: the parent commit (normally the base); None takes the workspace's HEAD. The caller
            checks that the parent is the authorised base.

    Returns:
        The candidate commit's full SHA.

    Raises:
        PatchApplyError: the agent left the repository unusable (``.git`` missing or replaced,
            repository configuration that would run commands, no HEAD).
        GitError: git failed.
    """
    git_dir = workspace / ".git"
    if git_dir.is_symlink() or not git_dir.is_dir() or not is_git_dir(git_dir):
        raise PatchApplyError(f"workspace {workspace}: .git is missing or is not a directory")
    config = run_git(["config", "--local", "--list", "-z"], workspace, check=False)
    check_local_config(config)
    try:
        base = rev_parse(workspace, f"{_checked_rev(parent or 'HEAD')}^{{commit}}")
    except GitError as exc:
        raise PatchApplyError(f"workspace {workspace}: no parent commit: {exc}") from exc
    with tempfile.TemporaryDirectory(prefix="repogate-index-") as tmp:
        index_env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _run_env(["read-tree", base], workspace, index_env)
        _run_env(["add", "-A", "--", "."], workspace, index_env)
        tree = _run_env(["write-tree"], workspace, index_env).decode().strip()
    out = _run_env(["commit-tree", tree, "-p", base, "-F", "-"], workspace, _IDENTITY, message)
    sha = out.decode().strip()
    run_git(["update-ref", CANDIDATE_REF, sha], workspace)
    return sha


def init_repo(path: Path) -> None:
    """Create an empty repository at ``path`` (made if absent) on branch ``main``.

    Raises:
        GitError: git failed.
    """
    path.mkdir(parents=True, exist_ok=True)
    run_git(["init", "-q", "-b", "main", "."], path)


def commit_all(repo: Path, message: str) -> str:
    """Commit every file of ``repo``'s work tree (``git add -A``) on the current branch.

    For repositories the harness builds itself (scenarios, fixtures), never for an agent's
    workspace (use :func:`commit_candidate`). Fixed harness author, committer and date, so the same
    files and parents always give the same SHA; empty commits are allowed.

    Returns:
        The new commit's full SHA.

    Raises:
        GitError: git failed.
    """
    run_git(["add", "-A", "--", "."], repo)
    _run_env(["commit", "-q", "--no-verify", "--allow-empty", "-F", "-"], repo, _IDENTITY, message)
    return rev_parse(repo, "HEAD")


def _run_env(
    args: Sequence[str], cwd: Path, env: Mapping[str, str], input: str | None = None
) -> bytes:
    done = _exec(args, cwd, None if input is None else input.encode(), env)
    if done.returncode != 0:
        raise GitError(["git", *args], done.returncode, done.stderr.decode("utf-8", "replace"))
    return done.stdout


def diff_binary(
    repo: Path, a: str, b: str, paths: Sequence[str] = (), exclude: Sequence[str] = ()
) -> bytes:
    """Return the exact bytes of the binary diff from commit ``a`` to commit ``b``.

    ``git diff --binary --full-index --no-color --no-ext-diff --no-textconv --no-renames a b --
    PATHS :(exclude)EXCLUDE...``. Renames are off so the patch is plain adds and deletes, the
    same whatever rename detection a machine has configured. These bytes are what
    :func:`repogate.state.patch_digest` hashes.

    Args:
        repo: a repository holding both commits.
        a: the old side (normally the base).
        b: the new side (normally the candidate).
        paths: git pathspecs to limit the diff to; empty means everything.
        exclude: git pathspecs to leave out.

    Raises:
        GitError: a commit is unknown.
    """
    spec = [*paths, *(f":(exclude){p}" for p in exclude)]
    args = [
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
    return run_git(args, repo)


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
        mode = old_mode if status == "D" else new_mode
        changes.append(ChangedPath(status[0], os.fsdecode(path), None, mode == "120000"))
    return tuple(changes)


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


def status_porcelain(repo: Path) -> tuple[str, ...]:
    """Return ``git status --porcelain=v1 -z --untracked-files=all --no-renames`` entries.

    Each entry is ``"XY path"``; an empty tuple means a clean work tree.

    Raises:
        GitError: ``repo`` is not a repository.
    """
    args = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]
    out = run_git(args, repo)
    return tuple(os.fsdecode(entry) for entry in out.split(b"\0") if entry)


def log_range(repo: Path, a: str, b: str, *, first_parent: bool) -> tuple[str, ...]:
    """Return the commits reachable from ``b`` and not from ``a``, oldest first.

    Args:
        repo: the repository.
        a: the exclusive start.
        b: the inclusive end.
        first_parent: follow only first parents (the branch's own history of merges).

    Raises:
        GitError: a commit is unknown.
    """
    args = ["rev-list", "--reverse", *(["--first-parent"] if first_parent else [])]
    out = run_git([*args, f"{_checked_rev(a)}..{_checked_rev(b)}", "--"], repo)
    return tuple(out.decode().split())


__all__ = [
    "CANDIDATE_REF",
    "HARNESS_DATE",
    "HARNESS_EMAIL",
    "HARNESS_NAME",
    "REPO_CACHE_ENV",
    "ChangedPath",
    "apply_patch",
    "changed_paths",
    "commit_all",
    "commit_candidate",
    "diff_binary",
    "export_tree",
    "has_object",
    "init_repo",
    "is_ancestor",
    "log_range",
    "prepare_workspace",
    "resolve_source",
    "rev_parse",
    "run_git",
    "show_file",
    "status_porcelain",
    "tree_of",
]


# ---------------------------------------------------------------------------------------------
# Merge and replay, for the harness's merge step and the post-merge sentinel (gates/sentinel.py).
# Merges are tree operations (``git merge-tree --write-tree``, merge-ort, renames on): no work tree,
# index, HEAD or ref of the repository is touched; only new objects are written.
# ---------------------------------------------------------------------------------------------

# merge-tree reads these from configuration; pinned so the markers and rename detection are the
# same on every machine whatever the repository configures.
_MERGE_CONFIG = ("-c", "merge.conflictStyle=merge", "-c", "merge.renames=true")


@dataclass(frozen=True)
class MergeMessage:
    """One informational message of a merge, as ``git merge-tree --messages -z`` reports it.

    Attributes:
        paths: the paths the message is about.
        kind: git's stable type token, e.g. ``CONFLICT (contents)``, ``CONFLICT (modify/delete)``,
            ``Auto-merging``, ``CONFLICT (rename/delete)``.
        text: the human-readable message.
    """

    paths: tuple[str, ...]
    kind: str
    text: str


@dataclass(frozen=True)
class MergeResult:
    """The result of a three-way tree merge.

    Attributes:
        tree: the merged tree id; when conflicted, files with content conflicts hold conflict
            markers (``<<<<<<<``, ``=======``, ``>>>>>>>``) and structural conflicts keep one side.
        conflicted: the paths left with unmerged entries, sorted; empty for a clean merge.
        messages: git's informational and conflict messages.
    """

    tree: str
    conflicted: tuple[str, ...]
    messages: tuple[MergeMessage, ...]

    @property
    def clean(self) -> bool:
        """True when no path conflicted."""
        return not self.conflicted


@dataclass(frozen=True)
class ReplayStep:
    """One follow-up commit's own change replayed onto a state.

    Attributes:
        commit: the follow-up commit replayed.
        parent: the parent its change was taken against (``parent..commit``).
        onto: the tree it was replayed onto.
        commit_tree: the tree of ``commit`` itself (its state in real history).
        empty: True when ``commit`` changes nothing against ``parent`` (same tree); then
            ``merge.tree`` is ``onto``.
        merge: the merge result.
        conflict_text: for each conflicted path, the bytes left in the result tree (with
            conflict markers for a content conflict), or None when no file is left there.
    """

    commit: str
    parent: str
    onto: str
    commit_tree: str
    empty: bool
    merge: MergeResult
    conflict_text: tuple[tuple[str, bytes | None], ...] = ()


def _parse_merge_tree(out: bytes) -> MergeResult:
    """Parse ``git merge-tree --write-tree --name-only --messages -z`` output."""
    fields = out.split(b"\0")
    tree = fields[0].decode().strip()
    i = 1
    conflicted: set[str] = set()
    while i < len(fields) and fields[i]:
        conflicted.add(os.fsdecode(fields[i]))
        i += 1
    i += 1
    messages: list[MergeMessage] = []
    while i < len(fields) and fields[i].isdigit():
        count = int(fields[i])
        paths = tuple(os.fsdecode(p) for p in fields[i + 1 : i + 1 + count])
        kind, text = fields[i + 1 + count], fields[i + 2 + count]
        messages.append(MergeMessage(paths, kind.decode("utf-8", "replace"), text.decode().strip()))
        i += count + 3
    return MergeResult(tree, tuple(sorted(conflicted)), tuple(messages))


def _merge_trees(repo: Path, ours: str, theirs: str) -> MergeResult:
    args = [
        *_MERGE_CONFIG,
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--messages",
        "-z",
        "--end-of-options",
        _checked_rev(ours),
        _checked_rev(theirs),
    ]
    done = _exec(args, repo)
    if done.returncode not in (0, 1):
        raise GitError(["git", *args], done.returncode, done.stderr.decode("utf-8", "replace"))
    return _parse_merge_tree(done.stdout)


def merge_candidate(repo: Path, target: str, candidate: str) -> MergeResult:
    """Merge commit ``candidate`` into commit ``target`` as a tree operation: the harness's merge.

    ``git merge-tree --write-tree target candidate`` (merge-ort, rename detection on, merge base
    found from history): nothing is checked out and no ref moves. When ``target`` is the
    candidate's own parent the result is the candidate's tree.

    Args:
        repo: a repository holding both commits.
        target: the target head (normally the base commit, or the branch head the contract names).
        candidate: the candidate commit.

    Returns:
        The merged tree and any conflicted paths.

    Raises:
        GitError: a commit is unknown or git failed (exit status other than 0 or 1).
    """
    return _merge_trees(repo, target, candidate)


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
    identity = {
        "GIT_AUTHOR_NAME": HARNESS_NAME,
        "GIT_AUTHOR_EMAIL": HARNESS_EMAIL,
        "GIT_AUTHOR_DATE": HARNESS_DATE,
        "GIT_COMMITTER_NAME": HARNESS_NAME,
        "GIT_COMMITTER_EMAIL": HARNESS_EMAIL,
        "GIT_COMMITTER_DATE": HARNESS_DATE,
    }
    args = ["commit-tree", _checked_rev(tree)]
    for parent in parents:
        args += ["-p", _checked_rev(parent)]
    return _run_env([*args, "-F", "-"], repo, identity, message).decode().strip()


def _trees(repo: Path, revs: Sequence[str]) -> list[str]:
    """Return the tree ids of ``revs`` (commits or trees), in one ``git rev-parse``."""
    # no --end-of-options here: without --verify, rev-parse echoes it; _checked_rev refuses "-"
    args = ["rev-parse", *(f"{_checked_rev(r)}^{{tree}}" for r in revs)]
    return _text(args, repo).split()


def _conflict_text(
    repo: Path, tree: str, paths: Sequence[str]
) -> tuple[tuple[str, bytes | None], ...]:
    return tuple((path, show_file(repo, tree, path)) for path in paths)


def replay_commit(repo: Path, onto_tree_or_commit: str, commit: str, parent: str) -> ReplayStep:
    """Apply the change ``parent..commit`` onto a state: a cherry-pick done as a tree operation.

    A three-way merge with base ``parent``, ours ``onto``, theirs ``commit`` (merge-ort, rename
    detection on), as ``git cherry-pick`` (or ``cherry-pick -m`` for a merge commit) does it. git
    2.39 has no ``merge-tree --merge-base``, so the base is fixed through history instead: a
    throw-away commit of ``onto`` whose only parent is ``parent`` has ``parent`` as its one best
    common ancestor with ``commit`` (``parent`` is an ancestor of ``commit``).

    Args:
        repo: a repository holding the full history.
        onto_tree_or_commit: the current state (a tree or commit id).
        commit: the follow-up commit to replay.
        parent: the parent of ``commit`` whose change is replayed; for a merge commit the parent
            that descends from the reference change.

    Returns:
        The replay step: the result tree, whether it was empty, conflicted paths and their text.

    Raises:
        GitError: a commit or tree is unknown, ``parent`` is not an ancestor of ``commit``, or
            git failed.
    """
    onto, theirs, before = _trees(repo, [onto_tree_or_commit, commit, parent])
    if not is_ancestor(repo, parent, commit):
        raise GitError(["git", "merge-base", parent, commit], -1, f"{parent} is not an ancestor")
    if theirs == before:
        return ReplayStep(commit, parent, onto, theirs, True, MergeResult(onto, (), ()))
    ours = commit_tree(repo, onto, [parent], "repogate: replay state")
    merged = _merge_trees(repo, ours, commit)
    text = _conflict_text(repo, merged.tree, merged.conflicted)
    return ReplayStep(commit, parent, onto, theirs, False, merged, text)


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


def tree_with_files(repo: Path, tree: str, files: Mapping[str, bytes | None]) -> str:
    """Return a tree equal to ``tree`` except for ``files`` (None removes a path).

    Written through a private index (``read-tree``, ``update-index -z --index-info``,
    ``write-tree``), so it works in bare repositories too; new files get mode 100644, existing ones
    keep theirs.

    Raises:
        GitError: ``tree`` is unknown or git failed.
    """
    with tempfile.TemporaryDirectory(prefix="repogate-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
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
                stderr = done.stderr.decode("utf-8", "replace")
                raise GitError(["git", "update-index", "--index-info"], done.returncode, stderr)
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
    with tempfile.TemporaryDirectory(prefix="repogate-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _run_env(["read-tree", f"{_checked_rev(tree_or_commit)}^{{tree}}"], repo, env)
        _run_env([f"--work-tree={dest}", "checkout-index", "-a", "-f"], repo, env)


def tree_from_dir(repo: Path, src: Path) -> str:
    """Store the files under ``src`` (a plain folder) as a tree in ``repo`` and return its id.

    Taken as ``git add -A`` sees them (``.gitignore`` in ``src`` respected) through a private
    index. Compare the result with another tree through :func:`changed_paths`.

    Raises:
        GitError: git failed.
    """
    with tempfile.TemporaryDirectory(prefix="repogate-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _run_env([f"--work-tree={src}", "add", "-A", "--", "."], repo, env)
        return _run_env(["write-tree"], repo, env).decode().strip()


__all__ += [
    "MergeMessage",
    "MergeResult",
    "ReplayStep",
    "checkout_tree",
    "commit_parents",
    "commit_subject",
    "commit_tree",
    "existing_paths",
    "merge_candidate",
    "replay_commit",
    "tree_from_dir",
    "tree_with_files",
]


# --- Attributes (lifecycle gates) ------------------------------------------------------------


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


__all__ += ["check_attr"]


# --- Harness history repository (pipeline) -------------------------------------------------------


def harness_repo(source: Path, dest: Path) -> None:
    """Make ``dest`` an empty repository that borrows ``source``'s objects (git alternates).

    The harness, never the agent, uses it to hold the full history together with the candidate:
    for the merge and the sentinel's replay. Nothing is written into ``source``.

    Raises:
        GitError: git failed, or ``source`` has no object folder.
    """
    objects = source / "objects" if (source / "objects").is_dir() else source / ".git" / "objects"
    if not objects.is_dir():
        raise GitError(["git", "init", str(dest)], -1, f"{source} has no objects folder")
    dest.mkdir(parents=True, exist_ok=True)
    run_git(["init", "-q", "--bare", "."], dest)
    (dest / "objects" / "info" / "alternates").write_text(f"{objects.resolve()}\n")


def fetch_commit(dest: Path, source: Path, sha: str) -> None:
    """Copy commit ``sha`` (and what it needs) from repository ``source`` into ``dest``.

    Raises:
        GitError: ``sha`` is not in ``source``, or git failed.
    """
    run_git(
        [
            "fetch",
            "-q",
            "--no-tags",
            "--no-write-fetch-head",
            f"--upload-pack={_UPLOAD_PACK}",
            str(source),
            f"{_checked_rev(sha)}:refs/repogate/fetched/{sha}",
        ],
        dest,
    )


__all__ += ["fetch_commit", "harness_repo"]
