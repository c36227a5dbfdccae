"""The workspace phases: prepare the agent's workspace at the base, then take its proposal."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

from repogate import git
from repogate._files import write_bytes_nofollow
from repogate.attempt import AttemptConfig, AttemptProgress, StopAttempt, emit, gate
from repogate.contract import Permissions
from repogate.oracles.embedded import load_embedded
from repogate.patches import touched_paths
from repogate.phases._shared import (
    agent_policy,
    candidate_state,
    hidden_patch,
    task_view,
    workspace,
)
from repogate.phases._trees import base_history, keep_base_history
from repogate.protocols import Proposal
from repogate.receipt import Check, Observation, observe


def prepare(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Make the agent's workspace at the base (nothing newer) and read the oracle.

    That is the hidden test patch, and the hidden tests' version of graded text inside files the
    agent may edit (:mod:`repogate.oracles.embedded`). The fresh workspace's history is kept
    (:func:`repogate.phases._trees.keep_base_history`) before anything runs in it: every later
    tree of the attempt is made from that copy.
    """
    base = git.prepare_workspace(
        cfg.source, cfg.contract.base_commit, workspace(cfg), cache=cfg.git_cache
    )
    keep_base_history(cfg)
    hidden = hidden_patch(cfg)
    paths = touched_paths(hidden)

    def read(rev: str, path: str) -> bytes | None:
        return git.show_file(cfg.source, rev, path)

    embedded = load_embedded(cfg.contract, paths, read, base)
    return replace(progress, base=base, hidden=hidden, hidden_paths=paths, embedded=embedded)


def _adopt(cfg: AttemptConfig, base: str) -> None:
    """Take the agent's files, never its git metadata, into a fresh harness repository.

    The agent's workspace is moved aside and a new repository is made at the base from the
    harness's source; the agent's files (every ``.git`` left out) are copied over it. Whatever the
    agent did to its own ``.git`` (configuration that runs commands, rewritten refs, commits of its
    own) never reaches the harness's git: what it proposes is the files it leaves. The new
    repository is a copy of the base's history kept before the agent ran.
    """
    ws = workspace(cfg)
    left = cfg.work / "agent-left"
    ws.rename(left)
    history = base_history(cfg)
    git.export_from_history(history, history, base, ws)
    for entry in ws.iterdir():
        if entry.name == ".git":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    shutil.copytree(
        left, ws, symlinks=True, ignore=shutil.ignore_patterns(".git"), dirs_exist_ok=True
    )
    shutil.rmtree(left, ignore_errors=True)


def _keep_output(cfg: AttemptConfig, proposal: Proposal) -> None:
    """Keep the agent's captured stdout and stderr in the evidence folder, never its own folder.

    The agent writes ``agent/`` (its output folder), never the evidence folder around it: a link it
    planted there cannot redirect these writes, which follow no link anyway.
    """
    if proposal.exec is not None:
        for name, text in (("stdout", proposal.exec.stdout), ("stderr", proposal.exec.stderr)):
            write_bytes_nofollow(cfg.evidence, f"agent.{name}.txt", text.encode())


_KINDS = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


def _shown(root: Path, path: str) -> str:
    """A workspace path as text: bytes that are not UTF-8 as backslash escapes."""
    return os.fsencode(os.path.relpath(path, root)).decode("utf-8", "backslashreplace")


def _entry_problem(root: Path, entry: os.DirEntry[str], mode: int) -> str | None:
    """Say why the harness cannot take ``entry`` (a name git cannot store, not a file), or None."""
    try:
        entry.name.encode("utf-8")
    except UnicodeEncodeError:
        return f"{_shown(root, entry.path)}: its name is not UTF-8 text"
    kind = _KINDS.get(stat.S_IFMT(mode))
    if kind is not None:
        return f"{_shown(root, entry.path)} is {kind}, not a file the harness can take"
    return None


def _over_limits(root: Path, permissions: Permissions) -> str | None:
    """Say how the agent's workspace passes a limit or holds what cannot be taken, or None.

    Limits: the contract's size and file-count limits. Sizes come from ``lstat`` (apparent size:
    a sparse 5 GB file counts 5 GB, as copying and hashing it would cost), no file is opened,
    links are not followed, every ``.git`` is left out (the harness never takes it), and the walk
    stops at the first problem. What cannot be taken: an entry that is not a file, folder or
    symbolic link (a FIFO would block the copy), a name that is not UTF-8 (no receipt can store
    it), a folder that cannot be listed. Each is the agent's failure, never the harness's crash.
    """
    total = count = 0
    largest, largest_size = "", 0
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            return f"{_shown(root, str(folder))} cannot be listed ({exc.strerror})"
        for entry in entries:
            if entry.name == ".git":
                continue
            count += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                return f"{_shown(root, entry.path)} cannot be read ({exc.strerror})"
            mode, size = info.st_mode, info.st_size
            problem = _entry_problem(root, entry, mode)
            if problem is not None:
                return problem
            if stat.S_ISDIR(mode):
                folders.append(Path(entry.path))
                size = 0
            total += size
            if size > largest_size:
                largest, largest_size = _shown(root, entry.path), size
            if count > permissions.max_workspace_files:
                return (
                    f"the workspace holds more than {permissions.max_workspace_files:,} files and "
                    "folders (permissions.max_workspace_files)"
                )
            if total > permissions.max_workspace_bytes:
                return (
                    f"the workspace holds at least {total:,} bytes, over "
                    f"permissions.max_workspace_bytes = {permissions.max_workspace_bytes:,} "
                    f"(largest file: {largest}, {largest_size:,} bytes)"
                )
    return None


def _refuse(
    cfg: AttemptConfig, progress: AttemptProgress, proposal: Proposal, why: str
) -> NoReturn:
    """Stop the attempt: what the agent left passes a limit, which is the agent's failure."""
    details = {"proposal": proposal.model_dump(mode="json", exclude={"exec"}), "limit": why}
    receipt = observe(
        "propose",
        "",
        lambda: Observation(
            checks=(Check(name="edits_permitted", status="failed", detail=why),), details=details
        ),
    )
    raise StopAttempt("propose", why, replace(progress, pending=(*progress.pending, receipt)))


def _copy_error(exc: OSError | shutil.Error) -> str:
    """The first reason a copy of the workspace failed, as one line of text."""
    text = str(exc)
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list):
        source, _dest, why = exc.args[0][0]
        text = f"{source}: {why}"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def propose(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Let the agent work, then make the candidate commit and state (the harness, not the agent).

    Raises:
        StopAttempt: the workspace or the patch passes a limit of the contract's permissions
            (``edits_permitted`` fails with the figure); nothing of it is copied or stored.
    """
    ws = workspace(cfg)
    output = cfg.evidence / "agent"
    output.mkdir(parents=True, exist_ok=True)
    permissions = cfg.contract.permissions
    proposal = cfg.agent.propose(
        task_view(cfg.contract), ws, output, agent_policy(cfg, progress.workspace_env)
    )
    _keep_output(cfg, proposal)
    over = _over_limits(ws, permissions)
    if over is not None:
        _refuse(cfg, progress, proposal, over)
    try:
        _adopt(cfg, progress.base)
    except (OSError, shutil.Error) as exc:  # changed under the walk, or unreadable
        _refuse(cfg, progress, proposal, f"the workspace cannot be taken: {_copy_error(exc)}")
    candidate = git.commit_candidate(ws, f"candidate of {cfg.agent.spec}", parent=progress.base)
    patch = git.diff_binary_capped(ws, progress.base, candidate, permissions.max_patch_bytes)
    if patch is None:
        why = (
            f"the patch is longer than permissions.max_patch_bytes = "
            f"{permissions.max_patch_bytes:,} bytes"
        )
        _refuse(cfg, progress, proposal, why)
    write_bytes_nofollow(cfg.evidence, "patch.diff", patch)
    target = cfg.contract.target_commit or progress.base
    if target != progress.base:
        git.fetch_commit(ws, cfg.source, target)
    merged = git.merge_candidate(ws, target, candidate)
    progress = replace(
        progress,
        proposal=proposal,
        patch=patch,
        changed=git.changed_paths(ws, progress.base, candidate),
    )
    state = candidate_state(cfg, progress, candidate, merged.tree)
    progress = replace(progress, state=state)
    for pending in progress.pending:
        progress = emit(cfg, progress, pending.model_copy(update={"state_id": state.state_id}))
    details = {
        "proposal": proposal.model_dump(mode="json", exclude={"exec"}),
        "returncode": None if proposal.exec is None else proposal.exec.returncode,
        "merge": {"target": target, "tree": merged.tree, "conflicted": list(merged.conflicted)},
        "merged_by": "repogate-harness",
    }
    return gate(cfg, replace(progress, pending=()), "propose", lambda: Observation(details=details))
