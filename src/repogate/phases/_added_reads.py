"""Whether the graded tests read a data file the patch adds (gate I's rule ``new file the graded tests read``).

Gate E's read trace (:mod:`repogate.oracles.graded_reads`) sees the files the graded tests open
at the reference; a file the patch adds was not there to be seen. A test that takes its expected
values from the first of several names that exists (``expected.local.json`` before
``expected.json``), or merges every ``cases*.json`` of a folder, reads a file the patch adds in
place of, or over, the table it read at the reference: a patch leaving the bug and adding a table
of the buggy output passed (red team, 2026-12-02). So, for a patch adding data files (not
Python code, not in the test folders or the hidden tests), the graded ids run once more on the
traced tree (the reference, else the base with the hidden tests) with those files added, under
the same trace. An added file the tests open (and the product code does not) is oracle; so is
every added file when the graded tests no longer all pass there, or the run gives no trace:
the added files changed what the tests decide. Only the task's own code runs: the patch adds
data, never code, to that tree.

The regression set has the same rule (:func:`suite_added_reads`): the base-passing ids gate V
selected run once on the base with the added files the base suite's trace did not see, under
that trace, and what they make oracle fails ``regression_tests_passed``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repogate import git
from repogate._counted import listed
from repogate._files import write_bytes_nofollow
from repogate.attempt import AttemptConfig, AttemptProgress
from repogate.gates.graded_trees import GradedState, write_tree
from repogate.globs import TEST_GLOBS, matches_any
from repogate.oracles.base_suite import BaseSuite, run_selected
from repogate.oracles.graded_reads import TracedReads
from repogate.oracles.junit import match_ids
from repogate.oracles.pytest_runner import TestRun, run_tests
from repogate.patches import load_patch
from repogate.phases._shared import oracle_policy, workspace
from repogate.phases._trees import graded_state, reference_state

CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyi", ".so", ".pyd", ".pth")
"""Added files that are code, left to gate I's other rules (the trace never counts them)."""


def added_data_files(progress: AttemptProgress) -> tuple[str, ...]:
    """The data files the patch adds outside the test folders and the hidden tests, sorted."""
    hidden = set(progress.hidden_paths)
    return tuple(
        sorted(
            c.path
            for c in progress.changed
            if c.status == "A"
            and not c.is_symlink
            and c.path not in hidden
            and not c.path.endswith(CODE_SUFFIXES)
            and not matches_any(c.path, TEST_GLOBS)
        )
    )


def unseen_added(progress: AttemptProgress, reads: TracedReads) -> tuple[str, ...]:
    """The :func:`added_data_files` that ``reads`` did not already see, sorted.

    One a traced session already opened (the reference adds it and the tests read it) is that
    trace's to decide: a candidate must be able to add it.
    """
    seen = {*reads.test, *reads.product}
    return tuple(p for p in added_data_files(progress) if p not in seen)


def with_added(
    cfg: AttemptConfig,
    progress: AttemptProgress,
    state: GradedState,
    added: Sequence[str],
    tree: Path,
) -> Path:
    """Write ``state``'s tree to the new folder ``tree`` with the candidate's ``added`` files in.

    Only data is added (:func:`added_data_files`): the code in ``tree`` is ``state``'s, the
    task's own, so the candidate cannot forge what a traced run there records.

    Raises:
        PatchApplyError: ``state`` is a reference that does not apply.
        GitError: git failed.
    """
    write_tree(state, tree)
    ws, candidate = workspace(cfg), progress.candidate.candidate_commit
    for path in added:
        data = git.show_file(ws, candidate, path)
        if data is not None:
            write_bytes_nofollow(tree, path, data, make_parents=True)
    return tree


def oracle_added(added: Sequence[str], ran: TestRun, outcome_changed: bool) -> tuple[str, ...]:
    """Return the ``added`` files a traced run with them in makes oracle (module docs).

    Args:
        added: the data files put into the traced tree.
        ran: the run of the tests there, under the read trace.
        outcome_changed: a test that must pass there did not (the files changed what it decides).

    Returns:
        every added file when the run gave no usable report or no trace, or ``outcome_changed``;
        else those only test code opened.
    """
    if ran.status != "ok" or ran.reads is None or outcome_changed:
        return tuple(added)
    test_only = set(ran.reads.test_only)
    return tuple(p for p in added if p in test_only)


def added_reads(cfg: AttemptConfig, progress: AttemptProgress) -> tuple[str, ...]:
    """Return the added data files that are oracle (module docs); () when none is added.

    Runs only when gate E traced the graded tests' reads and the patch adds a data file the
    trace did not already see (:func:`unseen_added`).

    Raises:
        PatchApplyError: the traced tree cannot be made (it could at gate E).
    """
    reads = progress.graded_reads
    if reads is None:
        return ()
    added = unseen_added(progress, reads)
    if not added:
        return ()
    source = cfg.contract.reference
    if reads.tree == "reference" and source is not None:
        state = reference_state(cfg, progress, load_patch(source, cfg.contract, cfg.source))
    else:
        state = graded_state(cfg, progress, progress.base)
    tree = with_added(cfg, progress, state, added, cfg.work / "reads-added")
    oracles = cfg.contract.oracles
    ids = [*oracles.fail_to_pass, *oracles.pass_to_pass]
    ran = run_tests(
        progress.workspace_env,
        tree,
        oracles.test_command,
        ids,
        cfg.evidence / "tests-reads-added",
        oracle_policy(cfg),
        trace_reads=True,
    )
    unsure = progress.base_flaky | progress.base_xfailed | progress.base_xpassed
    stable = [i for i in ids if i not in unsure]  # flaky or expected to fail: not compared
    changed_outcome = reads.tree == "reference" and any(  # all pass at the reference
        ran.outcomes.get(i) != "passed" for i in stable
    )
    return oracle_added(added, ran, changed_outcome)


@dataclass(frozen=True)
class SuiteAddedReads:
    """What the base-passing regression tests make of the data files a patch adds.

    Attributes:
        edited: each oracle added file with why, in the form of
            :func:`repogate.gates.regression.suite_oracle_edits` (each fails
            ``regression_tests_passed``).
        details: the receipt's record: the files, the tests run, the seconds, or why none ran.
    """

    edited: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)


def suite_added_plan(
    progress: AttemptProgress, suite: BaseSuite, ids: Sequence[str]
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Return the added data files :func:`suite_added_reads` runs with, or why none runs.

    Returns:
        (files, {}) when they run: the patch's :func:`added_data_files` that ``suite.reads``
        did not see; else ((), the receipt's record): empty when the base suite gave no usable
        report (gate V errs) or the patch adds no unseen data file, ``status`` saying the files
        went unchecked when the base suite has no read trace, or that no regression id was
        chosen.
    """
    if suite.status != "ok":
        return (), {}
    if suite.reads is None:
        added = added_data_files(progress)
        why = "not traced: data files the patch adds that base-passing tests read are not checked"
        return (), {"files": list(added), "status": why} if added else {}
    added = unseen_added(progress, suite.reads)
    if added and not ids:
        return (), {"files": list(added), "status": "no regression test to run"}
    return added, {}


def suite_added_reads(
    cfg: AttemptConfig,
    progress: AttemptProgress,
    suite: BaseSuite,
    ids: Sequence[str],
    tools: Path | None,
) -> SuiteAddedReads:
    """Run the regression ``ids`` on the base with the patch's added data files, traced.

    The regression set's own rule ``new file the graded tests read``: a base-passing test beyond
    the graded ids (one taking its expected values from an override name, a folder merge or a
    fallback) reads a file the patch adds, which the base suite's trace could not see. The
    ``ids`` (those gate V selected) run once on a tree of the base with the hidden tests and only
    the added data files not in ``suite.reads``, under the guard's read trace, as the base suite
    ran; an added file only test code opens is oracle, and so is every added file when a test
    that passed at the base does not pass there (missing counts), or the run gives no usable
    report or no trace. Only the task's code runs in that tree.

    Args:
        cfg: the attempt's configuration (its workspace, work and evidence folders, policy).
        progress: the attempt so far (its base, hidden tests, changed paths, candidate commit).
        suite: the base's whole-suite record; nothing runs when it is not ``ok``, or has no read
            trace (``details`` says the added files went unchecked).
        ids: the regression ids gate V chose (base-passing, beyond the graded and flipping ids).
        tools: the coverage tool folder for the harness's id filter, or None to run by name.

    Raises:
        GitError: the tree cannot be written.
    """
    added, unchecked = suite_added_plan(progress, suite, ids)
    if not added:
        return SuiteAddedReads(details=unchecked)
    began = time.monotonic()
    state = graded_state(cfg, progress, progress.base)
    tree = with_added(cfg, progress, state, added, cfg.work / "suite-reads-added")
    ran = run_selected(
        progress.workspace_env,
        tree,
        cfg.contract.oracles.test_command,
        ids,
        cfg.evidence / "tests-suite-reads-added",
        oracle_policy(cfg),
        tools,
        trace_reads=True,
    )
    matched = match_ids(ids, ran.outcomes)
    changed = [t for t in ids if matched[t] is None or ran.outcomes[str(matched[t])] != "passed"]
    oracle = oracle_added(added, ran, bool(changed))
    if ran.status != "ok":
        why = f"the run with them broke: {ran.reason}"
    elif ran.reads is None:
        why = "the run with them gave no read trace"
    elif changed:
        why = f"with them, tests passing at the base no longer pass: {listed(changed, 5)}"
    else:
        why = "only test code opened it"
    said = "read by base-passing tests on the base with the patch's added data files"
    return SuiteAddedReads(
        edited=tuple(f"{path} ({said}: {why})" for path in oracle),
        details={
            "files": list(added),
            "status": ran.status,
            "tests": len(ids),
            "not_passing": changed[:20],
            "oracle": list(oracle),
            "seconds": round(time.monotonic() - began, 3),
        },
    )
