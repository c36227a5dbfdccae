"""Gate S, the post-merge sentinel: replay the repository's real later history onto the candidate.

A change that passes today and is undone by the next regeneration, or that blocks the next real
change, did not establish the intended successor state. The sentinel observes a bounded future
(the seed's "frozen repository" thought experiment, made real):

1. **regenerate**: rerun the contract's generators on the merged state; the candidate's intent must
   survive (:mod:`repogate.gates.sentinel._survival`).
2. **anchor**: when the reference landed later than the base (an imported fix, ``sentinel.after``),
   the replay starts from the landing with the reference's change swapped for the candidate's
   (:mod:`repogate.gates.sentinel._anchor`), where the maintainers' history continued; otherwise
   from the merged candidate.
3. **replay**: apply each follow-up's change (``parent..commit``, the parent chosen by
   :mod:`repogate.gates.sentinel._follow_ups`) to the current state with a three-way merge and rename
   detection (:func:`repogate.git.replay_commit`). A step is
   ``clean``; ``resolved`` (conflicts only in changelog and news files, resolved by the declared
   policy and counted apart); ``conflict`` (a semantic conflict: the follow-up is blocked, and the
   steps after it are ``blocked``); or ``empty`` (the follow-up changes nothing; not a failure).
4. **regressions**: after each replayed step, the tests that passed at that follow-up commit in real
   history run on the replayed state; one that does not pass is a regression attributed to the
   candidate (:mod:`repogate.gates.sentinel._history`, which also caches the history's results). Files are
   counted one by one: a file that cannot be collected in history (it needs a plugin the base's
   environment lacks, or sits under a conftest importing an uninstalled package) is left out of the
   step with a note, and the other files' results stand. A step none of whose selected files can be
   collected in history is an ``error`` for that step, not a regression.
5. **matrix**: the focused and regression tests on each Python version the contract lists.

The check ``post_merge_sentinel_passed`` fails on a semantic conflict (the anchor's included), a
regression, lost intent
or a matrix failure; otherwise it errors when anything could not be decided (a step's history not
collectable, a generator failing, a missing interpreter, an empty window); otherwise it passes.
The soft metric ``extra_repair_effort`` is the number of semantically conflicted lines (both
read off the steps by :mod:`repogate.gates.sentinel._verdict`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repogate import git
from repogate._counted import counted, listed
from repogate.contract import Generator, Sentinel
from repogate.gates.sentinel._anchor import Anchor, anchor_at_landing, at_start
from repogate.gates.sentinel._follow_ups import FollowUp, follow_up_commits
from repogate.gates.sentinel._history import (
    HistoryCache,
    HistoryRuns,
    TestRunner,
    regressions,
    run_in_tree,
    uncollected,
)
from repogate.gates.sentinel._replay import (
    StepRecord,
    StepStatus,
    TestsOutcome,
    conflict_files,
    resolve_changelog,
)
from repogate.gates.sentinel._requirements import declared, unmet
from repogate.gates.sentinel._survival import (
    CommandRunner,
    MatrixRunner,
    Regeneration,
    matrix_on_tree,
    regeneration_survival,
    sandboxed_command,
)
from repogate.gates.sentinel._verdict import CHECK, repair_effort, residual_unknowns, verdict
from repogate.receipt import Observation

__all__ = [
    "CHECK",
    "Anchor",
    "CommandRunner",
    "FollowUp",
    "MatrixRunner",
    "SentinelInputs",
    "SentinelObservation",
    "StepRecord",
    "TestRunner",
    "check_sentinel",
    "follow_up_commits",
    "replay_window",
]


@dataclass(frozen=True)
class SentinelInputs:
    """Everything the sentinel reads.

    Attributes:
        repo: a repository holding the full history (never the agent's workspace).
        base: the base commit.
        candidate: the candidate commit (child of ``base``).
        start_tree: the tree the replay starts from: the merged candidate with the contract's
            hidden tests applied (the tree the checks ran on).
        config: the contract's ``[sentinel]`` table.
        run_tests: runs test files in a checkout (see :data:`TestRunner`).
        cache_dir: where real-history results are cached.
        reference: the commit follow-ups start after: the contract's ``sentinel.after`` (an
            imported fix's landing), else its reference (gold) commit; by count, they start after it.
        reference_state: the tree of the base with the reference patch and the hidden tests
            applied, made as ``start_tree`` is; given with a ``reference`` that landed after the
            base, the replay starts from ``reference``'s tree with this state's change swapped
            for the candidate's (:mod:`repogate.gates.sentinel._anchor`). None: from
            ``start_tree``.
        target: the target head the candidate was merged into (the contract's ``target_commit``),
            or None: its changes are in ``start_tree`` already, so no replay applies them again
            (:func:`repogate.git.replay_commit`, ``held``).
        target_branch: the branch whose history follow-ups are taken from (by count).
        focused_tests: the contract's FAIL_TO_PASS ids.
        regression_tests: the contract's PASS_TO_PASS ids.
        generators: the contract's generators.
        environment_digest: part of the history cache key: the environment digest with the
            run conditions (:func:`repogate.validity.run_conditions`).
        run_command: runs generator commands and interpreter probes (default: the sandbox).
        matrix_runner: runs tests under another interpreter (None: a listed version errors).
        work_dir: folder for temporary checkouts (None: the system's temporary folder).
        workers: test runs at once. 1 runs everything in order; with 2 or more, real-history
            runs go to a pool of ``workers - 1`` threads beside the replay (history of steps
            after a conflict is then run too, and cached for later attempts).
        packages: the tests' environment's ``name==version`` lines and ``python`` its Python
            version: a step with test files that cannot be collected in history names the
            follow-up's declared requirements they do not meet
            (:mod:`repogate.gates.sentinel._requirements`). Empty: not said.
    """

    repo: Path
    base: str
    candidate: str
    start_tree: str
    config: Sentinel
    run_tests: TestRunner
    cache_dir: Path
    reference: str | None = None
    reference_state: str | None = None
    target: str | None = None
    target_branch: str = "main"
    focused_tests: tuple[str, ...] = ()
    regression_tests: tuple[str, ...] = ()
    generators: tuple[Generator, ...] = ()
    environment_digest: str = ""
    run_command: CommandRunner = field(default=sandboxed_command)
    matrix_runner: MatrixRunner | None = None
    work_dir: Path | None = None
    workers: int = 1
    packages: tuple[str, ...] = ()
    python: str = ""


def _with_tests(
    ctx: SentinelInputs, follow: FollowUp, record: StepRecord, history_tree: str, runs: HistoryRuns
) -> StepRecord:
    """Run the step's selected tests in history and on the replayed state; record regressions.

    When history is prefetched the replayed state runs at once, beside it, on every selected
    file; otherwise history runs first and the replayed state runs only its collectable files.
    """
    assert record.tree is not None
    files = runs.files(follow.sha, follow.parent)
    if not files:
        return record.model_copy(update={"detail": "no test file selected for this follow-up"})
    same = record.tree == history_tree  # same tree, same environment: history's results are its own
    early = None
    if runs.prefetching and not same:
        early = run_in_tree(ctx.repo, record.tree, files, ctx.run_tests, ctx.work_dir)
    history, cached = runs.get(follow.sha, follow.parent)
    bad = uncollected(history, files)
    good = tuple(f for f in files if f not in bad)
    if same:
        replayed = history
    elif early is not None:
        replayed = early
    else:
        replayed = (
            run_in_tree(ctx.repo, record.tree, good, ctx.run_tests, ctx.work_dir) if good else {}
        )
    regressed = regressions(history, replayed, good)
    passed = sum(1 for t, o in history.items() if o == "passed")
    notes = (
        [f"{len(regressed)} of {counted(passed, 'test')} passing in history do not pass here"]
        if regressed
        else []
    )
    said = (
        f"{counted(len(bad), 'test file')}: {listed(bad, 10)}"  # all of them in ``uncollectable``
    )
    notes += [f"not collectable at {follow.sha[:12]} in history: {said}"] if bad else []
    lacking = unmet(declared(ctx.repo, follow.sha), ctx.packages, ctx.python) if bad else ()
    if lacking and ctx.packages:
        notes.append(
            f"{follow.sha[:12]} declares {counted(len(lacking), 'requirement')} the environment "
            f"(built for the base) does not meet: {listed(list(lacking), 5)}"
        )
    nothing = not good  # every selected file failed to collect in history: nothing was observed
    outcome: TestsOutcome = "regressed" if regressed else "error" if nothing else "passed"
    status: StepStatus = "regressed" if regressed else "error" if nothing else record.replay
    return record.model_copy(
        update={
            "tests": files,
            "uncollectable": bad,
            "tests_outcome": outcome,
            "status": status,
            "history_cached": cached,
            "history_passed": passed,
            "regressions": regressed,
            "detail": "; ".join(notes),
        }
    )


def _step(ctx: SentinelInputs, follow: FollowUp, state: str, runs: HistoryRuns) -> StepRecord:
    """Replay one follow-up onto ``state`` and, when it applied, run its tests."""
    ids = {"sha": follow.sha, "parent": follow.parent, "subject": follow.subject}
    held = (ctx.target,) if ctx.target else ()
    step = git.replay_commit(ctx.repo, state, follow.sha, follow.parent, held)
    if step.empty:
        return StepRecord(
            **ids,
            replay="empty",
            status="empty",
            tree=step.onto,
            detail="the follow-up changes nothing",
        )
    conflicts = conflict_files(ctx.repo, step, ctx.config.changelog_paths)
    semantic = [c.path for c in conflicts if not c.changelog and not c.superseded]
    if semantic:
        return StepRecord(
            **ids,
            replay="conflict",
            status="conflict",
            conflicts=conflicts,
            detail=f"the follow-up conflicts with the candidate in {', '.join(semantic)}",
        )
    if conflicts:
        tree = resolve_changelog(ctx.repo, step, ctx.config.changelog_policy)
        record = StepRecord(
            **ids, replay="resolved", status="resolved", conflicts=conflicts, tree=tree
        )
    else:
        record = StepRecord(**ids, replay="clean", status="clean", tree=step.merge.tree)
    return _with_tests(ctx, follow, record, step.commit_tree, runs)


def _blocked(follow: FollowUp, blocker: str) -> StepRecord:
    return StepRecord(
        sha=follow.sha,
        parent=follow.parent,
        subject=follow.subject,
        replay="blocked",
        status="blocked",
        detail=f"not replayed: blocked by the conflict at {blocker[:12]}",
    )


def replay_window(
    ctx: SentinelInputs, follow_ups: Sequence[FollowUp], start: str | None = None
) -> tuple[StepRecord, ...]:
    """Replay ``follow_ups`` in order from ``start`` (default ``ctx.start_tree``).

    Steps after a conflict are blocked.

    Raises:
        GitError: git failed.
    """
    with contextlib.ExitStack() as stack:
        pool = None
        if ctx.workers > 1:
            pool = stack.enter_context(ThreadPoolExecutor(ctx.workers - 1, "sentinel-history"))
        ids = ctx.focused_tests + ctx.regression_tests
        cache = HistoryCache(ctx.cache_dir)
        runs = HistoryRuns(
            ctx.repo, ids, ctx.environment_digest, cache, ctx.run_tests, ctx.work_dir, pool
        )
        runs.prefetch([(f.sha, f.parent) for f in follow_ups])
        state = ctx.start_tree if start is None else start
        steps: list[StepRecord] = []
        blocker: str | None = None
        for follow in follow_ups:
            if blocker is not None:
                steps.append(_blocked(follow, blocker))
                continue
            record = _step(ctx, follow, state, runs)
            steps.append(record)
            if record.tree is None:
                blocker = follow.sha
            else:
                state = record.tree
        return tuple(steps)


def anchor(ctx: SentinelInputs) -> Anchor:
    """Return where the replay starts (:mod:`repogate.gates.sentinel._anchor`).

    Raises:
        GitError: git failed.
    """
    if ctx.config.after is None:
        return at_start(ctx.start_tree, "the replay starts from the merged candidate")
    if ctx.reference is None or ctx.reference_state is None:
        return at_start(
            ctx.start_tree,
            "the replay starts from the merged candidate at the base, not where the reference "
            "landed: no reference state could be made (the contract has no reference patch, or "
            "it does not apply)",
            ctx.reference,
        )
    return anchor_at_landing(
        ctx.repo,
        ctx.base,
        ctx.reference,
        ctx.reference_state,
        ctx.start_tree,
        ctx.config.changelog_paths,
        ctx.config.changelog_policy,
    )


def _source(cfg: Sentinel) -> str:
    return "contract" if cfg.follow_ups else "history" if cfg.follow_up_count else "none"


class SentinelObservation(Observation):
    """Gate S's observation, with the soft metric the decision records.

    Attributes:
        extra_repair_effort: lines of the real follow-ups that conflict semantically with the
            candidate (changelog conflicts left out).
    """

    extra_repair_effort: int = 0


def check_sentinel(ctx: SentinelInputs) -> SentinelObservation:
    """Observe the bounded future of the merged candidate: check ``post_merge_sentinel_passed``.

    Args:
        ctx: the repository with full history, the merged state, the contract's sentinel table,
            the test runner and the cache.

    Returns:
        One check, ``post_merge_sentinel_passed``, and details: ``window``, ``steps``,
        ``anchor`` (where the replay started), ``conflicts`` (semantic and changelog paths, the
        anchor's included, the changelog policy), ``regressions``,
        ``repair_effort`` (semantic and changelog files, hunks, lines), ``regeneration``,
        ``matrix``, ``residual_unknowns`` and the soft metric ``extra_repair_effort`` (semantically
        conflicted lines).

    Raises:
        UserInputError: a follow-up is missing, not a commit, or not a descendant of the base; the
            target branch does not exist.
        GitError: git failed.
    """
    cfg = ctx.config
    follow_ups = follow_up_commits(
        ctx.repo,
        ctx.base,
        ctx.reference,
        cfg.follow_ups,
        cfg.follow_up_count,
        ctx.target_branch,
        cfg.first_parent,
    )
    regen = (
        regeneration_survival(
            ctx.repo,
            ctx.base,
            ctx.candidate,
            ctx.start_tree,
            ctx.generators,
            ctx.run_command,
            ctx.work_dir,
        )
        if cfg.regenerate
        else Regeneration(status="skipped", detail="regeneration is off in the contract")
    )
    start = anchor(ctx)
    if start.tree is None:
        steps: tuple[StepRecord, ...] = tuple(_blocked(f, str(start.landing)) for f in follow_ups)
    else:
        steps = replay_window(ctx, follow_ups, start.tree)
    matrix = matrix_on_tree(
        ctx.repo,
        ctx.start_tree,
        cfg.python_matrix,
        ctx.focused_tests + ctx.regression_tests,
        ctx.matrix_runner,
        ctx.run_command,
        ctx.work_dir,
    )
    check = verdict(steps, regen, matrix, start)
    conflicts = [*start.conflicts, *(c for s in steps for c in s.conflicts)]
    semantic = repair_effort(conflicts, changelog=False)
    details: dict[str, Any] = {
        "window": {
            "label": cfg.window,
            "source": _source(cfg),
            "first_parent": cfg.first_parent,
            "commits": [f.sha for f in follow_ups],
            "unnamed_between": sum(f.between for f in follow_ups),
            "replayed": sum(1 for s in steps if s.tree is not None),
        },
        "anchor": start.model_dump(mode="json"),
        "steps": [s.model_dump(mode="json") for s in steps],
        "conflicts": {
            "semantic": sorted({c.path for c in conflicts if not c.changelog and not c.superseded}),
            "superseded": sorted({c.path for c in conflicts if c.superseded}),
            "changelog": sorted({c.path for c in conflicts if c.changelog}),
            "changelog_policy": cfg.changelog_policy,
        },
        "regressions": [{"step": s.sha, "test": t} for s in steps for t in s.regressions],
        "repair_effort": {
            "semantic": semantic,
            "changelog": repair_effort(conflicts, changelog=True),
        },
        "regeneration": regen.model_dump(mode="json"),
        "matrix": [m.model_dump(mode="json") for m in matrix],
        "residual_unknowns": residual_unknowns(cfg, follow_ups, steps, start),
        "extra_repair_effort": semantic["lines"],
    }
    return SentinelObservation(
        checks=(check,),
        details=details,
        extra_repair_effort=semantic["lines"],
    )
