"""Repositories the harness makes: agent workspaces, exports, candidate commits, history copies."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from repogate._locks import locked
from repogate.errors import GitError, PatchApplyError, UserInputError
from repogate.git._run import (
    _IDENTITY,
    _checked_rev,
    _exec,
    _private_index,
    _run_env,
    has_object,
    is_ancestor,
    neutralise_attributes,
    rev_parse,
    run_git,
)
from repogate.git._safety import check_local_config
from repogate.git._source import is_git_dir

CANDIDATE_REF = "refs/repogate/candidate"
_UPLOAD_PACK = "git -c uploadpack.allowAnySHA1InWant=true upload-pack"


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
    neutralise_attributes(dest / ".git")
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
            str(source.absolute()),  # git runs in dest: a relative path would name another folder
            f"{sha}:refs/heads/main",
        ],
        dest,
    )
    run_git(["reset", "-q", "--hard", "main"], dest)
    for leftover in ("FETCH_HEAD", "ORIG_HEAD"):
        (dest / ".git" / leftover).unlink(missing_ok=True)
    _carry_tags(source, sha, dest)


def _carry_tags(source: Path, sha: str, dest: Path) -> None:
    """Copy ``source``'s tags on ``sha`` or its ancestors, made by the base's date, into ``dest``.

    Projects versioned from tags (setuptools-scm, hatch-vcs: ``git describe --tags``) build as
    ``0.1.devN`` without them, and a dependency pinned to the project's own version range then
    fails to resolve. Tags arrive as they are (annotated ones as tag objects), so
    ``git describe`` picks the same tag as in the source. Which tags: :func:`_carried_tags`.
    """
    refs = [f"{ref}:{ref}" for ref, _ in _carried_tags(source, sha)]
    if refs:
        _fetch(dest, source, refs)


def _carried_tags(source: Path, sha: str) -> list[tuple[str, str]]:
    """``(tag ref, object id)`` of ``source``'s tags that a copy of ``sha``'s history carries.

    Only tags whose commit is ``sha`` or an ancestor (``--merged``), and of annotated tags only
    those made no later than ``sha``'s committer date: a release tagged afterwards would tell of
    the future.
    """
    fmt = "%(refname)%00%(objectname)%00%(objecttype)%00%(*objecttype)%00%(taggerdate:unix)"
    out = run_git(["for-each-ref", f"--merged={sha}", f"--format={fmt}", "refs/tags"], source)
    when = int(run_git(["log", "-1", "--format=%ct", sha], source).decode().strip() or 0)
    tags = []
    for row in out.decode("utf-8", "replace").splitlines():
        ref, oid, kind, peeled_kind, tagged_at = row.split("\0")
        if kind == "commit" or (
            kind == "tag" and peeled_kind == "commit" and int(tagged_at or 0) <= when
        ):
            tags.append((ref, oid))
    return tags


def cached_history(source: Path, sha: str, cache: Path) -> Path:
    """Return a bare repository in ``cache`` holding commit ``sha``'s history, made once.

    It holds what :func:`prepare_workspace` fetches (``sha``, its ancestors and the tags
    :func:`_carried_tags` names) and nothing else, under a name that digests exactly that (the
    commit and the carried tags with their object ids): a commit's ancestry is fixed by its id,
    and a tag added to the mirror later gives a new name. The first caller fetches it under a
    file lock (concurrent workers wait, then reuse it); the entry is renamed into place whole.
    Only the harness writes the cache; every workspace and tree is a copy, never a link.

    Raises:
        GitError: git failed.
    """
    carried = sorted(_carried_tags(source, sha))
    tags = "".join(f"{ref} {oid}\n" for ref, oid in carried)
    key = hashlib.sha256(f"{sha}\n{tags}".encode()).hexdigest()[:32]
    entry = cache / f"{key}.git"
    with locked(cache / f"{key}.lock"):
        if (entry / "HEAD").is_file():
            return entry
        partial = cache / f"{key}.partial"
        if partial.exists():
            shutil.rmtree(partial)
        partial.mkdir(parents=True)
        run_git(["init", "-q", "--bare", "-b", "main", "."], partial)
        neutralise_attributes(partial)
        _fetch(partial, source, [f"{sha}:refs/heads/main", *(f"{r}:{r}" for r, _ in carried)])
        partial.rename(entry)
    return entry


def _fetch(dest: Path, source: Path, refspecs: list[str], *, update_head: bool = False) -> None:
    """Fetch ``refspecs`` from ``source`` into ``dest``: no tags, no FETCH_HEAD, any SHA wanted.

    ``update_head`` lets a refspec move the branch HEAD names (in a repository not checked out).
    """
    args = ["fetch", "-q", "--no-tags", "--no-write-fetch-head", f"--upload-pack={_UPLOAD_PACK}"]
    args += ["--update-head-ok"] if update_head else []
    run_git([*args, str(source.absolute()), *refspecs], dest)  # git runs in dest


def prepare_workspace(source: Path, base: str, dest: Path, *, cache: Path | None = None) -> str:
    """Make ``dest`` a fresh repository at ``base`` holding nothing newer than it.

    Only the base commit and its ancestors arrive: no later commit, ref, tag, reflog entry or
    object (``git log --all`` and ``git cat-file -e <later sha>`` find nothing), which closes the
    future-history leak of SWE-bench issue #465. Tags on the base or its ancestors, made by the
    base's date, do arrive, so a project versioned from tags builds with its real version. Done with ``git init`` and a protocol-v2 fetch of
    the one SHA (``uploadpack.allowAnySHA1InWant``); the base is checked out on branch ``main``.

    With ``cache``, the history is fetched once into it (:func:`cached_history`) and each
    workspace is a copy of that: on a project with years of history a fetch costs seconds (a
    minute on sympy), a copy a fraction of one.

    Args:
        source: a local repository, bare or not (see :func:`resolve_source`).
        base: the base commit: full or short SHA, or any revision ``source`` resolves.
        dest: an absent or empty folder.
        cache: a harness-owned folder of base histories, or None to fetch from ``source``.

    Returns:
        The base commit's full 40-hex SHA.

    Raises:
        UserInputError: ``base`` is not a commit of ``source``.
        GitError: ``dest`` is not empty, or git failed.
    """
    sha = _resolve_in_source(source, base)
    if cache is None:
        _fetch_commit(source, sha, dest)
    else:
        history = cached_history(source, sha, cache)
        export_from_history(history, history, sha, dest)
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


def keep_history(workspace: Path, dest: Path) -> None:
    """Keep a bare copy of a fresh workspace's objects and tags at ``dest``: the base's history.

    Made right after :func:`prepare_workspace`, before anything else runs in the workspace, so
    ``dest`` holds the base commit, its ancestors and their carried tags and nothing newer.
    :func:`export_from_history` then makes each test tree from it by copying, instead of
    computing a pack of the whole history again (:func:`export_tree`). The copy is written
    beside ``dest`` and renamed into place, so a ``dest`` that exists is whole.

    Raises:
        GitError: ``dest`` exists, or git failed.
    """
    dest = dest.resolve()
    if dest.exists():
        raise GitError(["git", "clone", str(dest)], -1, f"destination {dest} exists")
    partial = dest.with_name(f"{dest.name}.partial")
    if partial.exists():
        shutil.rmtree(partial)
    clone = ["clone", "-q", "--bare", "--local", "--no-hardlinks", str(workspace.absolute())]
    clone.append(str(partial))
    run_git(clone, workspace)
    run_git(["remote", "remove", "origin"], partial)
    neutralise_attributes(partial)
    partial.rename(dest)


def export_from_history(history: Path, repo: Path, rev: str, dest: Path) -> None:
    """Export commit ``rev`` of ``repo`` to ``dest`` as :func:`export_tree` does, from ``history``.

    ``history`` is a :func:`keep_history` copy of the base's history. ``dest`` gets a copy of it
    (its packs, no hard links) plus a fetch from ``repo`` of only what ``rev`` adds to it (the
    candidate's or the reference's commit, a merge's target history), then ``rev`` checked out on
    branch ``main`` with its tags carried. The result holds the same history as
    :func:`export_tree` gives: ``rev`` and its ancestors. When ``history``'s base is not an
    ancestor of ``rev`` (so its objects are not all ``rev``'s), :func:`export_tree` is used.
    About as cheap as a copy of the pack files: a fetch of the whole history costs seconds on
    a project with years of it, a minute on sympy.

    Raises:
        GitError: ``rev`` is not a commit of ``repo``, ``dest`` is not empty, or git failed.
    """
    sha = rev_parse(repo, f"{_checked_rev(rev)}^{{commit}}")
    base = rev_parse(history, "main^{commit}")
    if sha != base and not (has_object(repo, base) and is_ancestor(repo, base, sha)):
        export_tree(repo, sha, dest)
        return
    _local_clone(history, dest)
    if sha != base:
        _fetch(dest, repo, [f"{sha}:refs/heads/main"], update_head=True)
        _carry_tags(repo, sha, dest)
    run_git(["reset", "-q", "--hard", "main"], dest)
    for leftover in ("FETCH_HEAD", "ORIG_HEAD"):
        (dest / ".git" / leftover).unlink(missing_ok=True)


def copy_repository(repo: Path, rev: str, dest: Path) -> None:
    """Make ``dest`` a copy of the harness-made repository ``repo`` with ``rev`` checked out on main.

    A local clone that copies ``repo``'s pack files (no hard links: a test writing in ``dest``
    cannot reach ``repo``) instead of computing a pack of ``rev``'s history as
    :func:`export_tree` does: about ten times faster on a project with years of history. Every
    object and tag of ``repo`` arrives, not only ``rev``'s ancestry, so use it only on a
    repository holding nothing more than ``dest``'s reader may see (a fresh workspace at the base,
    before any later commit is made in it). The clone's link back to ``repo`` is removed.

    Raises:
        GitError: ``rev`` is not a commit of ``repo``, ``dest`` is not empty, or git failed.
    """
    sha = rev_parse(repo, f"{_checked_rev(rev)}^{{commit}}")
    _local_clone(repo, dest)
    run_git(["checkout", "-q", "-B", "main", sha], dest)


def _local_clone(repo: Path, dest: Path) -> None:
    """Clone ``repo`` into the empty folder ``dest`` by copying its packs, with nothing checked out.

    No hard links (a test writing in ``dest`` cannot reach ``repo``), no link back (the remote is
    removed) and neutral attributes, as in every repository the harness makes.

    Raises:
        GitError: ``dest`` is not empty, or git failed.
    """
    dest = dest.resolve()
    if dest.exists() and any(dest.iterdir()):
        raise GitError(["git", "clone", str(dest)], -1, f"destination {dest} is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    # git runs in dest: a relative path would name a folder below it
    clone = ["clone", "-q", "--local", "--no-hardlinks", "--no-checkout", str(repo.absolute())]
    clone.append(str(dest))
    run_git(clone, dest)
    run_git(["remote", "remove", "origin"], dest)
    neutralise_attributes(dest / ".git")


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
    with _private_index() as index_env:
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
    neutralise_attributes(dest)
    (dest / "objects" / "info" / "alternates").write_text(f"{objects.resolve()}\n")


def fetch_commit(dest: Path, source: Path, sha: str) -> None:
    """Copy commit ``sha`` (and what it needs) from repository ``source`` into ``dest``.

    Raises:
        GitError: ``sha`` is not in ``source``, or git failed.
    """
    _fetch(dest, source, [f"{_checked_rev(sha)}:refs/repogate/fetched/{sha}"])


def set_branch(repo: Path, name: str, sha: str) -> None:
    """Point branch ``name`` of ``repo`` at commit ``sha`` (made or moved), so it is kept.

    For repositories the harness builds itself (a derived task's copy), never a workspace.

    Raises:
        GitError: ``sha`` is not a commit of ``repo``, or git failed.
    """
    commit = rev_parse(repo, f"{_checked_rev(sha)}^{{commit}}")
    run_git(["update-ref", f"refs/heads/{name}", commit], repo)
