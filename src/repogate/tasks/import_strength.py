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

import re
from collections.abc import Sequence
from pathlib import Path

from repogate import git
from repogate._counted import listed
from repogate._model import FrozenModel
from repogate.contract import Sentinel
from repogate.globs import matches_any
from repogate.patches import file_changes
from repogate.tasks.mine import is_test_path

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
    "pytest.toml",
    ".pytest.toml",
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
        fix: the earliest commit after the base holding the reference's post-image (on the
            branch, or on a side branch merged into it), or None when none does.
        landing: the first first-parent commit of ``branch`` that holds ``fix`` (the fix's merge;
            ``fix`` itself when it was committed on the branch), or None.
        follow_ups: the next first-parent commits after ``landing`` touching the reference's
            files, oldest first, at most the window.
        window: the window asked for (commits).
        why_none: why there is no follow-up (empty when there are some).
    """

    branch: str | None
    fix: str | None
    landing: str | None = None
    follow_ups: tuple[str, ...]
    window: int
    why_none: str = ""


_FILE_START = re.compile(rb"(?m)^(?=diff --git )")


def _identifying(reference: bytes) -> bytes:
    """Return the part of ``reference`` whose post-image identifies the fix: changelogs left out.

    A pull request's news entry is often reworded or merged with its neighbours' when it lands.
    """
    news = Sentinel().changelog_paths
    sections = [part for part in _FILE_START.split(reference) if part]
    kept = [s for s in sections if not any(matches_any(c.path, news) for c in file_changes(s))]
    return b"".join(kept) if kept else reference


def _landing(repo: Path, line: Sequence[str], fix: str) -> str | None:
    """The first commit of the first-parent ``line`` (oldest first) that descends from ``fix``."""
    low, high = 0, len(line)
    while low < high:  # once merged, every later first-parent commit holds it
        mid = (low + high) // 2
        if git.is_ancestor(repo, fix, line[mid]):
            high = mid
        else:
            low = mid + 1
    return line[low] if low < len(line) else None


def sentinel_window(repo: Path, base: str, reference: bytes, window: int) -> FixWindow:
    """Find the instance's fix in ``repo``'s history, where it landed, and the follow-ups after it.

    The fix is the earliest commit after the base (any parent path) whose tree holds the
    reference's post-image (:func:`repogate.git.holds_post_image`); it lands on the default branch
    with the first first-parent commit descending from it (a pull request's merge).

    Args:
        repo: the mirror, holding the whole history of its default branch.
        base: the instance's base commit (40 hex, in ``repo``).
        reference: SWE-bench's ``patch``.
        window: how many follow-ups to take at most.

    Returns:
        The fix and its follow-ups; ``fix`` None (and ``why_none`` said) when the mirror has no
        default branch, the base is not on it, or no commit after the base holds the reference's
        post-image (a fix merged together with other changes to the same lines).
    """
    paths = sorted({c.path for c in file_changes(reference)})
    branch = git.default_branch(repo)
    if branch is None or not paths:
        why = "the mirror names no default branch" if branch is None else "the reference is empty"
        return FixWindow(branch=branch, fix=None, follow_ups=(), window=window, why_none=why)
    tip = git.rev_parse(repo, f"refs/heads/{branch}")
    if not git.is_ancestor(repo, base, tip):
        why = f"the base commit is not in the history of {branch}"
        return FixWindow(branch=branch, fix=None, follow_ups=(), window=window, why_none=why)
    wanted = _identifying(reference)
    candidates = git.log_range(repo, base, tip, first_parent=False, paths=paths)
    fix = next((c for c in candidates if git.holds_post_image(repo, c, wanted)), None)
    if fix is None:
        why = f"no commit of {branch}'s history after the base holds the reference's change"
        return FixWindow(branch=branch, fix=None, follow_ups=(), window=window, why_none=why)
    line = git.log_range(repo, base, tip, first_parent=True)
    landing = _landing(repo, line, fix)
    if landing is None:  # cannot happen for a commit below the tip; said rather than assumed
        why = f"the fix {fix[:12]} never reached {branch}'s first-parent line"
        return FixWindow(branch=branch, fix=fix, follow_ups=(), window=window, why_none=why)
    later = set(line[line.index(landing) + 1 :])
    touching = git.log_range(repo, landing, tip, first_parent=True, paths=paths)
    after = tuple(c for c in touching if c in later)[:window]
    why = "" if after else f"no later first-parent commit of {branch} touches the reference's files"
    return FixWindow(
        branch=branch, fix=fix, landing=landing, follow_ups=after, window=window, why_none=why
    )


def sentinel_table(found: FixWindow, paths: Sequence[str]) -> dict[str, object]:
    """Return the contract's ``[sentinel]`` table for ``found`` (TOML data).

    The window is stated in words, and what it cannot observe is listed as residual unknowns.
    """
    files = listed(paths, 5)
    if found.fix is None or not found.follow_ups:
        return {
            "window": f"none: {found.why_none}",
            "residual_unknowns": ["no later history observed: " + found.why_none],
        }
    return {
        "after": found.landing,
        "follow_ups": list(found.follow_ups),
        "window": (
            f"the next {len(found.follow_ups)} first-parent commit(s) of {found.branch} after the "
            f"fix {found.fix[:12]} landed (in {str(found.landing)[:12]}) that touch {files} "
            f"(window {found.window})"
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
