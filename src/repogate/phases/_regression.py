"""Gate V's regression step in the attempt: the base's whole suite (cached) and the selected run.

The base record is a function of the base commit, the hidden tests, the environment digest, the
test command, the sandbox's granted variables and timeout, the locale and timezone the sandbox
passes on, the coverage and plugin versions and
repogate's version; it is cached under a key over all of them, outside every sandbox's writable
folders, so the attempts of one task run the base's whole suite once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import coverage

from repogate import git
from repogate._files import read_tree_files
from repogate._version import __version__
from repogate.attempt import AttemptConfig, AttemptProgress, gate
from repogate.errors import EnvironmentBuildError
from repogate.gates.graded_oracle import GradedOracle, graded_modules
from repogate.gates.graded_trees import fresh_tree, graded_tree
from repogate.gates.regression import (
    RunRequest,
    grade,
    narrowed,
    next_run,
    seen,
    start,
    suite_oracle_edits,
)
from repogate.oracles.base_suite import BaseSuite, record_base_suite, run_selected
from repogate.oracles.junit import TestOutcome
from repogate.oracles.pytest_runner import TestRun
from repogate.oracles.regress_tools import plugin_digest, tool_folder
from repogate.oracles.selection import FileChange, lookups, select
from repogate.phases._added_reads import suite_added_reads
from repogate.phases._shared import oracle_policy, workspace
from repogate.phases._trees import graded_state
from repogate.receipt import Observation
from repogate.state import sha256_hex
from repogate.vocabulary import GateId

GATE: GateId = "V-regression"


def _suite_key(cfg: AttemptConfig, progress: AttemptProgress) -> str:
    policy = oracle_policy(cfg)
    parts = [
        progress.base,
        sha256_hex(progress.hidden),
        progress.workspace_env.digest,
        cfg.contract.oracles.test_command,
        repr(sorted(policy.env.items())),
        repr([os.environ.get(k) for k in ("LANG", "LC_ALL", "LC_CTYPE", "TZ")]),  # reach the tests
        str(policy.timeout_s),
        coverage.__version__,
        __version__,
        plugin_digest(),
        "one-run-2",  # one run under coverage with the read trace, failures rerun plainly
    ]
    return sha256_hex("\0".join(parts).encode())


def _tools(cfg: AttemptConfig, progress: AttemptProgress) -> Path | str:
    try:
        return tool_folder(progress.workspace_env, cfg.env_cache)
    except EnvironmentBuildError as exc:
        return f"coverage could not be installed: {exc}"


def base_suite(cfg: AttemptConfig, progress: AttemptProgress) -> tuple[BaseSuite, str, bool]:
    """Return the base's whole-suite record, its cache key, and whether it came from the cache."""
    key = _suite_key(cfg, progress)
    cached = cfg.env_cache.parent / "base-suite" / f"{key}.json"
    if cached.is_file():
        return BaseSuite.model_validate_json(cached.read_text()), key, True
    tree = cfg.work / "base-suite"
    graded_tree(
        workspace(cfg), progress.base, progress.base, progress.hidden, progress.hidden_paths, tree
    )
    suite = record_base_suite(
        progress.workspace_env,
        tree,
        cfg.contract.oracles.test_command,
        cfg.evidence / "tests-base-suite",
        oracle_policy(cfg),
        _tools(cfg, progress),
    )
    if suite.status == "ok":
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(suite.model_dump_json())
        partial.replace(cached)
    return suite, key, False


def _changes(cfg: AttemptConfig, progress: AttemptProgress, rev: str) -> list[FileChange]:
    ws = workspace(cfg)
    hidden = set(progress.hidden_paths)
    return [
        FileChange(
            path=c.path,
            status=c.status,
            before=git.show_file(ws, progress.base, c.path),
            after=git.show_file(ws, rev, c.path),
            is_symlink=c.is_symlink,
        )
        for c in git.changed_paths(ws, progress.base, rev)
        if c.path not in hidden
    ]


def _named_in_state(
    cfg: AttemptConfig, progress: AttemptProgress, rev: str, tree: Path, names: Sequence[str]
) -> set[str]:
    """Return the ``names`` that a Python file of ``rev``'s graded tree contains.

    Read from a fresh export beside ``tree`` (made only when there are names to look up), never
    from ``tree``: the graded run's test-time code wrote that one, and dropping a name from it (or
    deleting the module naming a changelog it reads) made an edited changelog inert for selection
    and left the base-passing test of what the module reads from it unrun (red team red37).
    """
    if not names:
        return set()
    return _named_in_tree(fresh_tree(graded_state(cfg, progress, rev), tree, "names"), names)


def _named_in_tree(tree: Path, names: Sequence[str]) -> set[str]:
    """Return the ``names`` that a Python file of ``tree`` contains.

    No link is followed and no FIFO opened (:func:`read_tree_files`).
    """
    sources = b"\n".join(data for _, data in read_tree_files(tree, ".py"))
    return {name for name in names if name.encode() in sources}


def regressions(
    cfg: AttemptConfig,
    progress: AttemptProgress,
    rev: str,
    tree: Path,
    already: dict[str, TestOutcome],
    exclude: Sequence[str],
    graded_ids: Sequence[str] = (),
) -> AttemptProgress:
    """Emit the ``V-regression`` receipt for the tree of ``rev`` (tests already ran on ``tree``).

    Each regression run is on a fresh tree of ``rev`` beside ``tree``, never one test code wrote.
    ``graded_ids`` are the graded ids, whose files the run that observed ``already`` ran: an id that
    failed there and passes alone is run with their files again before it can be called flaky.
    """
    if cfg.contract.oracles.regression == "declared":
        return gate(cfg, progress, GATE, narrowed)

    def observe() -> Observation:
        suite, key, hit = base_suite(cfg, progress)
        tools = _tools(cfg, progress) if suite.coverage is not None else None
        changes = _changes(cfg, progress, rev)
        asks = lookups(changes, suite.coverage)
        ws = workspace(cfg)
        named_at_base = {word for word in asks.new_names if git.names_word(ws, progress.base, word)}
        selection = select(
            changes,
            suite.passing,
            suite.coverage,
            _named_in_state(cfg, progress, rev, tree, asks.documents),
            named_at_base,
            no_coverage_reason=suite.coverage_reason or "no coverage was recorded at the base",
        )

        def run(ask: RunRequest) -> TestRun:
            graded = graded_state(cfg, progress, progress.base if ask.at_base else rev)
            # never the tree the graded run (or an earlier regression run) wrote
            return run_selected(
                progress.workspace_env,
                fresh_tree(graded, tree, ask.label),
                cfg.contract.oracles.test_command,
                ask.ids,
                cfg.evidence / "tests-regression" / ask.label,
                oracle_policy(cfg),
                tools if ask.filtered and isinstance(tools, Path) else None,
            )

        step = start(suite, selection, already, exclude, graded=graded_ids)
        while (ask := next_run(step)) is not None:
            step = seen(step, ask, run(ask))
        added = suite_added_reads(
            cfg, progress, suite, step.chosen, tools if isinstance(tools, Path) else None
        )
        edited = (
            *suite_oracle_edits(
                suite,
                git.changed_paths(workspace(cfg), progress.base, rev),
                GradedOracle(
                    modules=graded_modules(cfg.contract, progress.hidden_paths),
                    reads=progress.graded_reads,
                ),
            ),
            *added.edited,
        )
        graded = grade(step, edited)
        record = {**graded.details, "base_suite_key": key, "base_suite_cached": hit}
        if added.details:
            record["added_data_reads"] = added.details
        return graded.model_copy(update={"details": record})

    return gate(cfg, progress, GATE, observe)
