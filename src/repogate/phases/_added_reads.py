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
"""

from __future__ import annotations

from repogate import git
from repogate._files import write_bytes_nofollow
from repogate.attempt import AttemptConfig, AttemptProgress
from repogate.gates.graded_trees import write_tree
from repogate.globs import TEST_GLOBS, matches_any
from repogate.oracles.pytest_runner import run_tests
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


def added_reads(cfg: AttemptConfig, progress: AttemptProgress) -> tuple[str, ...]:
    """Return the added data files that are oracle (module docs); () when none is added.

    Runs only when gate E traced the graded tests' reads and the patch adds a data file the
    trace did not already see (one the reference adds and the tests read is the trace's to
    decide: a candidate must be able to add it).

    Raises:
        PatchApplyError: the traced tree cannot be made (it could at gate E).
    """
    reads = progress.graded_reads
    if reads is None:
        return ()
    seen = {*reads.test, *reads.product}  # read at the reference already: the trace's rules
    added = tuple(p for p in added_data_files(progress) if p not in seen)
    if not added:
        return ()
    tree = cfg.work / "reads-added"
    source = cfg.contract.reference
    if reads.tree == "reference" and source is not None:
        write_tree(
            reference_state(cfg, progress, load_patch(source, cfg.contract, cfg.source)), tree
        )
    else:
        write_tree(graded_state(cfg, progress, progress.base), tree)
    ws, candidate = workspace(cfg), progress.candidate.candidate_commit
    for path in added:
        data = git.show_file(ws, candidate, path)
        if data is not None:
            write_bytes_nofollow(tree, path, data, make_parents=True)
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
    if ran.status != "ok" or ran.reads is None or changed_outcome:
        return added
    return tuple(p for p in added if p in set(ran.reads.test_only))
