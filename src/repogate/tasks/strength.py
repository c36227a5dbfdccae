"""How strongly an imported SWE-bench instance is judged: lifecycle strength, or SWE-bench's own rules.

SWE-bench judges an instance by its declared tests alone (``FAIL_TO_PASS`` and the declared
``PASS_TO_PASS``). Imported that way, repogate's ``accepted`` equals SWE-bench's ``resolved`` on
every attempt, and the product reduces to SWE-bench. ``tasks import`` therefore drafts each
contract at **lifecycle strength** by default (``--as swebench`` keeps SWE-bench's rules):

- **regression**: every test that passed in the base's whole-suite run must still pass
  (``oracles.regression = "base-passing"``, coverage-selected), not only the declared ones;
- **sentinel**: the repository's real later history after the instance's fix is replayed onto the
  merged candidate: the fix is the first first-parent commit of the mirror's default branch,
  after the base, whose files hold the reference's post-image blobs (the ``index`` lines of
  SWE-bench's ``patch``); the window is the next ``window`` first-parent commits after it that
  touch a file the reference touches (:func:`sentinel_window`). An instance whose fix is not found
  in the mirror's history gets no window, and the contract says why;
- **permissions** from the reference's shape (:func:`permissions_for`): the project's source
  folders the reference edits, never its tests, CI or packaging, and no file at the repository
  root unless the reference edits that file;
- **cohort tags** (:func:`cohort_tags`): change type, files and hunks, integration width,
  repository, year (the instance's age), follow-up horizon and the import's strength.

Which profile: the contract keeps ``profile = "hermetic"`` and declares the sentinel window (the
embedded default's "frozen repository" shape, hermetic + sentinel). The lifecycle profile would
add ``code_owner_approved``, ``review_threads_resolved`` and ``release_receipt_present``, whose
evidence (approvals bound to the candidate's patch digest, review threads, a release-notes entry)
no SWE-bench instance carries: those checks would fail every attempt, the reference's included,
or would have to pass on no evidence. Neither makes a verdict mean more. So ``accepted`` is decided
by the hermetic checks made strict (base-passing regression, permissions), and
``post_merge_sentinel_passed`` is observed on every attempt and reported beside it, as the frozen
repository reports it. SWE-bench's ``resolved`` is recorded beside ``accepted`` in every decision
(:attr:`repogate.decision.Decision.resolved`, read from the graded run alone), so both figures come
from one run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from repogate import git
from repogate._model import FrozenModel
from repogate.contract import Sentinel
from repogate.gates._globs import matches_any
from repogate.patches import FileChange, file_changes
from repogate.tasks.mine import is_test_path

Strength = Literal["lifecycle", "swebench"]
"""``lifecycle``: repogate's default strength for imports; ``swebench``: SWE-bench's own rules."""

DEFAULT_WINDOW = 3
"""Follow-up commits the sentinel replays after an imported instance's fix, by default."""

TEST_GLOBS = (
    "**/tests/**",
    "**/test/**",
    "**/testing/**",
    "**/test_*.py",
    "**/*_test.py",
    "**/conftest.py",
)
"""The test suite as :func:`repogate.tasks.mine.is_test_path` recognises it, as contract globs."""
CI_GLOBS = (
    ".github/**",
    ".circleci/**",
    ".gitlab-ci.yml",
    ".travis.yml",
    "azure-pipelines.yml",
    "appveyor.yml",
    ".pre-commit-config.yaml",
)
"""Continuous-integration configuration."""
PACKAGING_GLOBS = (
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "MANIFEST.in",
    "tox.ini",
    "noxfile.py",
    "pytest.ini",
    "requirements*.txt",
    "**/requirements*.txt",
    "uv.lock",
    "poetry.lock",
    "Pipfile",
    "Pipfile.lock",
)
"""Packaging, dependency and test-runner configuration."""


class FixWindow(FrozenModel):
    """Where an instance's fix landed in real history, and the follow-ups the sentinel replays.

    Attributes:
        branch: the mirror's default branch walked (first parents).
        fix: the first-parent commit holding the reference's post-image, or None when not found.
        follow_ups: the next first-parent commits after ``fix`` touching the reference's files,
            oldest first, at most the window.
        window: the window asked for (commits).
        why_none: why there is no follow-up (empty when there are some).
    """

    branch: str | None
    fix: str | None
    follow_ups: tuple[str, ...]
    window: int
    why_none: str = ""


def _identifying(changes: Sequence[FileChange]) -> list[FileChange]:
    """Return the files whose post-image identifies the fix: changelog files left out.

    A pull request's news entry is often reworded or merged with its neighbours' when it lands.
    """
    news = Sentinel().changelog_paths
    kept = [c for c in changes if not matches_any(c.path, news)]
    return kept or list(changes)


def _holds_post_image(repo: Path, commit: str, changes: Sequence[FileChange]) -> bool:
    present = git.blob_ids(repo, commit, [c.path for c in changes])
    for change in changes:
        if change.deleted:
            if change.path in present:
                return False
        elif not change.new_blob or not present.get(change.path, "").startswith(change.new_blob):
            return False
    return True


def sentinel_window(repo: Path, base: str, reference: bytes, window: int) -> FixWindow:
    """Find the instance's fix in ``repo``'s history and the follow-ups after it.

    Args:
        repo: the mirror, holding the whole history of its default branch.
        base: the instance's base commit (40 hex, in ``repo``).
        reference: SWE-bench's ``patch`` (its ``index`` lines name post-image blobs).
        window: how many follow-ups to take at most.

    Returns:
        The fix and its follow-ups; ``fix`` None (and ``why_none`` said) when the mirror has no
        default branch, the base is not on it, or no first-parent commit after the base holds
        the reference's post-image (a fix merged with other changes to the same files).
    """
    changes = file_changes(reference)
    paths = sorted({c.path for c in changes})
    branch = git.default_branch(repo)
    if branch is None or not paths:
        why = "the mirror names no default branch" if branch is None else "the reference is empty"
        return FixWindow(branch=branch, fix=None, follow_ups=(), window=window, why_none=why)
    tip = git.rev_parse(repo, f"refs/heads/{branch}")
    if not git.is_ancestor(repo, base, tip):
        why = f"the base commit is not in the history of {branch}"
        return FixWindow(branch=branch, fix=None, follow_ups=(), window=window, why_none=why)
    touching = git.log_range(repo, base, tip, first_parent=True, paths=paths)
    wanted = _identifying(changes)
    fix = next((c for c in touching if _holds_post_image(repo, c, wanted)), None)
    if fix is None:
        why = f"no first-parent commit of {branch} after the base holds the reference's files"
        return FixWindow(branch=branch, fix=None, follow_ups=(), window=window, why_none=why)
    after = touching[touching.index(fix) + 1 :][:window]
    why = "" if after else f"no later first-parent commit of {branch} touches the reference's files"
    return FixWindow(branch=branch, fix=fix, follow_ups=after, window=window, why_none=why)


def sentinel_table(found: FixWindow, paths: Sequence[str]) -> dict[str, object]:
    """Return the contract's ``[sentinel]`` table for ``found`` (TOML data).

    The window is stated in words, and what it cannot observe is listed as residual unknowns.
    """
    files = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    if found.fix is None or not found.follow_ups:
        return {
            "window": f"none: {found.why_none}",
            "residual_unknowns": ["no later history observed: " + found.why_none],
        }
    return {
        "follow_ups": list(found.follow_ups),
        "window": (
            f"the next {len(found.follow_ups)} first-parent commit(s) of {found.branch} after the "
            f"fix {found.fix[:12]} that touch {files} (window {found.window})"
        ),
        "residual_unknowns": [
            f"commits after the window of {found.window} are not observed",
            "later commits that touch none of the reference's files are replayed only as part "
            "of the next commit in the window",
        ],
    }


def _folder_glob(path: str) -> str:
    parts = path.split("/")
    if len(parts) == 1:
        return path  # a root file: that file only
    if parts[0] == "src" and len(parts) > 2:
        return f"src/{parts[1]}/**"
    return f"{parts[0]}/**"


def permissions_for(reference: bytes) -> dict[str, list[str]]:
    """Return ``[permissions]``'s ``editable`` and ``forbidden`` globs from the reference's shape.

    Editable: each source folder the reference edits (its top folder, or ``src/<package>``) and
    each root file it edits by name. Forbidden: the tests, CI and packaging globs, except a glob
    matching a file the reference itself edits (the reference must stay permitted).
    """
    paths = sorted({c.path for c in file_changes(reference)})
    editable = sorted({_folder_glob(p) for p in paths if not is_test_path(p)})
    forbidden = [
        g
        for g in (*TEST_GLOBS, *CI_GLOBS, *PACKAGING_GLOBS)
        if not any(matches_any(p, (g,)) for p in paths)
    ]
    return {"editable": editable, "forbidden": forbidden}


def cohort_tags(reference: bytes, found: FixWindow | None) -> dict[str, str]:
    """Return the cohort tags read from the reference's shape and its sentinel window.

    ``change_type``: ``new-file`` when the reference adds a file, ``deletion`` when it removes one,
    else ``modification``; ``integration_width``: the source folders it edits (folders holding an
    edited file, tests left out); ``follow_up_horizon``: follow-ups the sentinel replays (0 when
    none was found).
    """
    changes = [c for c in file_changes(reference) if not is_test_path(c.path)]
    kind = (
        "new-file"
        if any(c.added for c in changes)
        else "deletion"
        if any(c.deleted for c in changes)
        else "modification"
    )
    folders = {c.path.rsplit("/", 1)[0] if "/" in c.path else "." for c in changes}
    return {
        "change_type": kind,
        "integration_width": str(len(folders)),
        "follow_up_horizon": str(len(found.follow_ups)) if found is not None else "0",
    }
