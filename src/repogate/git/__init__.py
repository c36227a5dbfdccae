"""The only code that runs git: through the git CLI, with argument lists, in a clean environment.

Every failure raises :class:`repogate.errors.GitError` (command, exit code, stderr); bad input
from the user (a repository or base commit that cannot be found) raises
:class:`repogate.errors.UserInputError`; a patch that must not be applied raises
:class:`repogate.errors.PatchApplyError`.

Each call runs with no system or global configuration (``GIT_CONFIG_NOSYSTEM``,
``GIT_CONFIG_GLOBAL=/dev/null``), no terminal prompt, ``LC_ALL=C``, and a few pinned ``-c`` settings
that override any repository configuration: hooks off (``core.hooksPath=/dev/null``), no fsmonitor,
no signing, no automatic gc, fixed diff prefixes and algorithm, whitespace-exact ``git apply``.
Repository configuration an agent could write (filter drivers, textconv commands) is refused by
:func:`commit_candidate` before the harness runs git there (see ``repogate.git._safety``). Every
git directory the harness makes gets ``info/attributes`` = :data:`NEUTRAL_ATTRIBUTES`, which
outranks the tree's ``.gitattributes``: no filter, union merge, binary diff or content rewrite
from the tree. A tree that untrusted code writes after export is read through :func:`sealed`.

Nothing outside this package calls git. Its private modules: ``_run`` (environment, pinned
settings, revisions), ``_workspace`` (workspaces, exports, candidate commits, history copies),
``_diff`` (diffs, patches, files, status, attributes), ``_trees`` (tree and commit objects),
``_merge`` (merge and replay), ``_seal`` (status of a tree untrusted code writes, read with a
harness-owned git directory), ``_apply`` (SWE-bench's ladder for predictions: git apply, then
GNU patch with fuzz), ``_safety`` and ``_source`` (pure checks and lookups, no git).
Import the names below from :mod:`repogate.git` itself.
"""

from __future__ import annotations

from repogate.git._apply import LADDER, ApplyStep, PatchApplication, apply_ladder
from repogate.git._diff import (
    ChangedPath,
    apply_patch,
    changed_paths,
    check_attr,
    diff_binary,
    diff_binary_capped,
    log_range,
    names_word,
    patch_paths,
    show_file,
    show_text,
    status_porcelain,
)
from repogate.git._merge import (
    MergeMessage,
    MergeResult,
    ReplayStep,
    merge_candidate,
    replay_commit,
)
from repogate.git._run import (
    HARNESS_DATE,
    HARNESS_EMAIL,
    HARNESS_NAME,
    NEUTRAL_ATTRIBUTES,
    has_object,
    is_ancestor,
    merge_base,
    missing_objects,
    paths_in_tree,
    rev_parse,
    run_git,
    tree_of,
)
from repogate.git._seal import Seal, sealed
from repogate.git._source import REPO_CACHE_ENV, repo_url_parts, resolve_source
from repogate.git._trees import (
    checkout_tree,
    commit_date,
    commit_message,
    commit_parents,
    commit_subject,
    commit_tree,
    default_branch,
    existing_paths,
    holds_post_image,
    last_change_date,
    tree_from_dir,
    tree_paths,
    tree_with_files,
)
from repogate.git._workspace import (
    CANDIDATE_REF,
    commit_all,
    commit_candidate,
    copy_repository,
    export_from_history,
    export_tree,
    fetch_commit,
    harness_repo,
    init_repo,
    keep_history,
    prepare_workspace,
    set_branch,
)

__all__ = [
    "CANDIDATE_REF",
    "HARNESS_DATE",
    "HARNESS_EMAIL",
    "HARNESS_NAME",
    "LADDER",
    "NEUTRAL_ATTRIBUTES",
    "REPO_CACHE_ENV",
    "ApplyStep",
    "ChangedPath",
    "MergeMessage",
    "MergeResult",
    "PatchApplication",
    "ReplayStep",
    "Seal",
    "apply_ladder",
    "apply_patch",
    "changed_paths",
    "check_attr",
    "checkout_tree",
    "commit_all",
    "commit_candidate",
    "commit_date",
    "commit_message",
    "commit_parents",
    "commit_subject",
    "commit_tree",
    "copy_repository",
    "default_branch",
    "diff_binary",
    "diff_binary_capped",
    "existing_paths",
    "export_from_history",
    "export_tree",
    "fetch_commit",
    "harness_repo",
    "has_object",
    "holds_post_image",
    "init_repo",
    "is_ancestor",
    "keep_history",
    "last_change_date",
    "log_range",
    "merge_base",
    "merge_candidate",
    "missing_objects",
    "names_word",
    "patch_paths",
    "paths_in_tree",
    "prepare_workspace",
    "replay_commit",
    "repo_url_parts",
    "resolve_source",
    "rev_parse",
    "run_git",
    "sealed",
    "set_branch",
    "show_file",
    "show_text",
    "status_porcelain",
    "tree_from_dir",
    "tree_of",
    "tree_paths",
    "tree_with_files",
]
