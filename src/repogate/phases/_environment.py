"""The environment phase: build the environment at the base, then observe gate E on it.

The gate's rules and record are :mod:`repogate.gates.base_state`'s; here the trees are made and
the tests run (the base with the hidden tests, the reference patch), and a valid result is cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from repogate import environments, git
from repogate._locks import locked, write_atomic
from repogate._logs import keep_log
from repogate.attempt import AttemptConfig, AttemptProgress, StopAttempt
from repogate.contract import Oracles
from repogate.environments import Environment
from repogate.errors import ContractError, EnvironmentBuildError, PatchApplyError
from repogate.gates.base_state import (
    BaseState,
    confirmed_verdict,
    foreign_reason,
    invalid,
    read_cached,
    reference_verdict,
    reproduced,
    to_rerun_at_base,
)
from repogate.gates.graded_trees import write_tree
from repogate.gates.verification import grade_tree, rerun_state, run_repeated
from repogate.oracles.embedded import EmbeddedOracle
from repogate.oracles.graded_reads import TracedReads
from repogate.oracles.grading import BaseCheck, confirm_in_reference, named
from repogate.oracles.imports import foreign_imports
from repogate.oracles.pytest_runner import run_tests
from repogate.oracles.regress_tools import plugin_digest
from repogate.oracles.reruns import flaky_ids
from repogate.patches import load_patch
from repogate.phases._shared import install_tree, oracle_policy, workspace
from repogate.phases._trees import export, graded_state, reference_state
from repogate.receipt import Check, observed
from repogate.sandbox import SandboxPolicy
from repogate.state import sha256_hex
from repogate.validity import result_key, run_conditions
from repogate.vocabulary import ErrorKind

_BASE_CHECK_RULES = "base-check-5"
"""Part of the base-state key: bumped when the check's rules change (2: XFAIL fails a FAIL_TO_PASS
test, collection errors count as failing, failures rerun before the task is called invalid; 3: the
tests' imports checked, the reference validated; 4: graded runs load the harness's plugin, and an
XPASS under an xfail mark the hidden tests do not declare is ``xpassed``; 5: the result carries its
flaky, XFAILed and ``xpassed`` ids as typed fields)."""


def base_state_key(
    env: Environment,
    oracles: Oracles,
    base: str,
    hidden: bytes,
    reference: bytes,
    embedded: Sequence[EmbeddedOracle] = (),
) -> str:
    """Key of a base-state result: everything it is a function of (:mod:`repogate.validity`).

    Args:
        env: the built environment.
        oracles: the contract's oracles (graded ids, repeat, test command, timeout).
        base: the base commit's SHA.
        hidden: the hidden test patch.
        reference: the reference patch (empty when none).
        embedded: graded text inside editable files (:mod:`repogate.oracles.embedded`).

    Returns:
        sha256 hex.
    """
    return result_key(
        run_conditions(env, oracles),
        _BASE_CHECK_RULES,
        plugin_digest(),  # graded runs load it: it decides how an XPASS reads
        base,
        sha256_hex(hidden),
        list(oracles.fail_to_pass),
        list(oracles.pass_to_pass),
        oracles.repeat,
        sha256_hex(reference),
        [(e.test_id, sha256_hex(e.text)) for e in embedded],
    )


def _base_key(cfg: AttemptConfig, progress: AttemptProgress, env: Environment) -> str:
    return base_state_key(
        env,
        cfg.contract.oracles,
        progress.base,
        progress.hidden,
        _reference(cfg),
        progress.embedded,
    )


def _reference(cfg: AttemptConfig) -> bytes:
    source = cfg.contract.reference
    return b"" if source is None else load_patch(source, cfg.contract, cfg.source)


def probe_files(tree: Path, hidden_paths: Sequence[str], ids: Sequence[str]) -> list[Path]:
    """The test files whose imports the import probe reads: hidden, graded, every conftest."""
    named = {i.split("::", 1)[0] for i in ids} | set(hidden_paths)
    files = [tree / p for p in sorted(named) if p.endswith(".py")]
    return [*files, *tree.glob("**/conftest.py")]


def _foreign(cfg: AttemptConfig, progress: AttemptProgress, env: Environment, tree: Path) -> str:
    """Say which project modules the tests import from outside the checkout ("" when none)."""
    oracles = cfg.contract.oracles
    ids = [*oracles.fail_to_pass, *oracles.pass_to_pass]
    files = probe_files(tree, progress.hidden_paths, ids)
    return foreign_reason(
        foreign_imports(env, tree, files, oracles.test_command, oracle_policy(cfg))
    )


def _validate_reference(
    cfg: AttemptConfig,
    progress: AttemptProgress,
    env: Environment,
    base: tuple[set[str], set[str], set[str]],
) -> tuple[str, dict[str, Any], ErrorKind]:
    """Run the hidden tests on the reference patch; return why it fails ("" when it passes).

    The kind is ``timeout`` when the reference's test run reached its budget, else
    ``invalid task``.

    ``base`` is the base's flaky ids and its XFAILed and ``xpassed`` PASS_TO_PASS ids. The
    reference is graded as a candidate is (:func:`~repogate.gates.verification.grade_tree`):
    flaky tests excluded, a failure rerun and counted only when it reproduces there and not at
    the base.
    """
    base_flaky, base_xfailed, base_xpassed = base
    patch = _reference(cfg)
    if not patch:
        return "", {"reference": "no reference patch to validate"}, "invalid task"
    tree = cfg.work / "reference-graded"

    state = reference_state(cfg, progress, patch)
    try:
        write_tree(state, tree)
    except PatchApplyError as exc:
        return f"the reference patch does not apply at the base: {exc}", {}, "invalid task"
    graded = grade_tree(
        env,
        tree,
        cfg.contract,
        cfg.evidence / "tests-reference-graded",
        oracle_policy(cfg),
        states=(state, graded_state(cfg, progress, progress.base)),
        base_flaky=frozenset(base_flaky),
        base_xfailed=frozenset(base_xfailed),
        base_xpassed=frozenset(base_xpassed),
    )
    why, details = reference_verdict(graded, env)
    return why, details, "timeout" if graded.timed_out else "invalid task"


def base_state_file(env_cache: Path, key: str) -> Path:
    """Where a valid base-state result is cached (beside the environment cache)."""
    return env_cache.parent / "base-state" / f"{key}.json"


def remember_base_state(env_cache: Path, key: str, seen: BaseState) -> None:
    """Cache a valid base-state result observed elsewhere (task validation), under ``key``.

    Task validation (:mod:`repogate.tasks.handoff`) runs the same states in the same environment
    and sandbox and makes gate E's own checks on them (the import probe, the base-state verdict,
    the reference graded by :func:`~repogate.gates.verification.check_tests`); the gold attempt
    that follows then reads the result here instead of running the same tests again.

    Args:
        env_cache: the environment cache folder.
        key: :func:`base_state_key` of the contract as written.
        seen: the passed observation, as :func:`_check_base` would return it.
    """
    path = base_state_file(env_cache, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path.with_suffix(".lock")):
        write_atomic(path, seen.model_dump_json(exclude={"environment"}))


def _check_base(cfg: AttemptConfig, progress: AttemptProgress, env: Environment) -> BaseState:
    checked = cfg.work / "base-hidden"
    state = graded_state(cfg, progress, progress.base)
    try:
        write_tree(state, checked)
    except PatchApplyError as exc:
        return invalid(env, f"the hidden tests do not apply at the base: {exc}")
    foreign = _foreign(cfg, progress, env, checked)
    if foreign:
        return invalid(env, f"task invalid: {foreign}")
    policy, reports = oracle_policy(cfg), cfg.evidence / "tests-base"
    runs, flips = run_repeated(env, state, checked, cfg.contract, reports, policy)
    details: dict[str, Any] = {"flaky_excluded": sorted(flips)}
    broken = [r for r in runs if r.status != "ok"]
    if broken:
        why = f"base-state test run unusable: {broken[0].reason}"
        kind: ErrorKind = "timeout" if broken[0].execution.timed_out else "invalid task"
        return invalid(env, why, details, flips, kind)
    oracles = cfg.contract.oracles
    outcomes, graded = runs[-1].outcomes, (oracles.fail_to_pass, oracles.pass_to_pass)
    wrong = to_rerun_at_base(outcomes, flips, *graded)
    reruns = rerun_state(env, state, checked, cfg.contract, wrong, "base", reports, policy)
    verdict = confirmed_verdict(outcomes, flips, *graded, reruns)
    flips |= flaky_ids(reruns)
    details = {"flaky_excluded": sorted(flips), "reruns": [r.model_dump() for r in reruns]}
    if verdict.valid and verdict.uncollected:
        verdict, details["reference_check"] = _in_reference(cfg, progress, env, verdict)
    if not verdict.valid:
        details["base_state"] = verdict.model_dump()
        return invalid(env, "task invalid: " + "; ".join(verdict.reasons), details, flips)
    xfailed, xpassed = set(verdict.xfailed), set(verdict.xpassed)
    base = (flips, xfailed, xpassed)
    why, checked_reference, why_kind = _validate_reference(cfg, progress, env, base)
    details = {**details, **checked_reference, "base_state": verdict.model_dump()}
    if why:
        return invalid(env, f"task invalid: {why}", details, flips, why_kind)
    return reproduced(details, flips, xfailed, env, xpassed)


def _in_reference(
    cfg: AttemptConfig, progress: AttemptProgress, env: Environment, verdict: BaseCheck
) -> tuple[BaseCheck, str]:
    """Run the files that did not collect at the base in the reference state: do their ids exist?

    Returns the verdict (:func:`repogate.oracles.grading.confirm_in_reference`) and a note for the
    record. Without a reference, or when it does not apply, the ids stay counted as failing.
    """
    source = cfg.contract.reference
    if source is None:
        return verdict, "no reference: ids of files not collectable at the base are not confirmed"
    tree = cfg.work / "reference-hidden"
    try:
        reference = load_patch(source, cfg.contract, cfg.source)
        write_tree(reference_state(cfg, progress, reference), tree)
    except (PatchApplyError, ContractError) as exc:
        return verdict, f"the reference does not apply, ids not confirmed: {exc}"
    ran = run_tests(
        env,
        tree,
        cfg.contract.oracles.test_command,
        verdict.uncollected,
        cfg.evidence / "tests-reference",
        oracle_policy(cfg),
    )
    if ran.status != "ok":
        return verdict, f"the reference's run is unusable, ids not confirmed: {ran.reason}"
    confirmed = confirm_in_reference(verdict, ran.outcomes)
    return (
        confirmed,
        f"{len(verdict.uncollected)} id(s) of files not collectable at the base checked in the "
        f"reference state: {named(verdict.uncollected)}",
    )


def _trace_reads(
    cfg: AttemptConfig, progress: AttemptProgress, env: Environment
) -> TracedReads | tuple[str, ErrorKind]:
    """Run the graded ids once with the guard's read trace; return what they read, or why not.

    Why not comes with its kind: ``timeout`` when the run reached its budget, else
    ``invalid task``.

    On the reference (the graded tests pass there, so they read all they need) or, without one,
    on the base with the hidden tests (:mod:`repogate.oracles.graded_reads`).
    """
    patch = _reference(cfg)
    tree = cfg.work / "reads-traced"
    write_tree(
        reference_state(cfg, progress, patch)
        if patch
        else graded_state(cfg, progress, progress.base),
        tree,
    )
    oracles = cfg.contract.oracles
    ids = [*oracles.fail_to_pass, *oracles.pass_to_pass]
    reports = cfg.evidence / "tests-reads-traced"
    ran = run_tests(
        env, tree, oracles.test_command, ids, reports, oracle_policy(cfg), trace_reads=True
    )
    if ran.status != "ok" or ran.reads is None:
        why = ran.reason or "the guard's signed record carries no trace"
        return why, "timeout" if ran.execution.timed_out else "invalid task"
    return ran.reads.model_copy(update={"tree": "reference" if patch else "base"})


def _with_reads(
    cfg: AttemptConfig, progress: AttemptProgress, env: Environment, seen: BaseState
) -> BaseState:
    """``seen`` with the graded tests' reads traced; invalid when they cannot be traced."""
    try:
        reads = _trace_reads(cfg, progress, env)
    except PatchApplyError as exc:
        reads = f"the traced tree cannot be made: {exc}", "invalid task"
    if isinstance(reads, tuple):
        why = f"the files the graded tests read could not be traced: {reads[0]}"
        return invalid(env, why, seen.details, seen.flaky, reads[1])
    return seen.model_copy(update={"reads": reads})


def _as_of(cfg: AttemptConfig, progress: AttemptProgress) -> str | None:
    """The resolution bound of the recipe: the base commit's date, or None (see the recipe)."""
    if cfg.contract.environment.resolve_as_of != "base_commit":
        return None
    return git.commit_date(workspace(cfg), progress.base)


def _base_state(cfg: AttemptConfig, progress: AttemptProgress) -> BaseState:
    """Build the environment, then check the base state, reusing an earlier valid result.

    A base-state result (with the reference patch's validation) is a function of the base
    commit, the hidden test patch, the graded ids and text, the reference patch and the run
    conditions (:mod:`repogate.validity`); a valid one is cached under that key (outside every
    sandbox's writable folders), so repeated attempts on one task run the base's tests once.
    Concurrent workers wanting one result wait on a file lock beside it while the first computes it.
    """
    base_tree = install_tree(cfg)
    export(cfg, progress.base, base_tree)
    recipe = cfg.contract.environment
    policy = SandboxPolicy(network=recipe.network, timeout_s=cfg.test_timeout_s)
    try:
        env = environments.build(
            environments.BuildRequest(
                recipe=recipe,
                base_checkout=base_tree,
                cache_dir=cfg.env_cache,
                policy=policy,
                exclude_newer=_as_of(cfg, progress),
            )
        )
    except EnvironmentBuildError as exc:  # the whole output to a file, one line onwards
        log = keep_log(cfg.evidence / "logs" / "environment-build.log", exc.log or str(exc))
        raise EnvironmentBuildError(f"{exc}; log: {log}") from None
    key = _base_key(cfg, progress, env)
    cached = base_state_file(cfg.env_cache, key)
    with locked(cached.with_suffix(".lock")):  # two workers on one task check its base once
        hit = cached.is_file()
        seen = read_cached(cached.read_text(), env) if hit else _check_base(cfg, progress, env)
        traced = seen.checks[0].passed and seen.reads is None  # a handed-over result: no trace
        if traced:
            seen = _with_reads(cfg, progress, env, seen)
        if (traced or not hit) and seen.checks[0].passed:
            write_atomic(cached, seen.model_dump_json(exclude={"environment"}))
    if seen.checks[0].passed:
        detail = (
            f"{'cold' if env.cold else 'warm'} environment {env.digest[:12]}; "
            f"base state as expected{' (cached result)' if hit else ''}"
            f"{'; reference (gold) passes' if 'reference_failures' not in seen.details and _reference(cfg) else ''}"
        )
        seen = seen.model_copy(
            update={"checks": (seen.checks[0].model_copy(update={"detail": detail}),)}
        )
    details = {
        **seen.details,
        "environment": env.describe(),
        "base_state_key": key,
        "base_state_cached": hit,
        "graded_from_hidden_text": [e.test_id for e in progress.embedded],
        "graded_reads": None if seen.reads is None else seen.reads.model_dump(mode="json"),
    }
    return seen.model_copy(update={"details": details})


def environment(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Gate E: build the environment at the base and check the base state with hidden tests.

    Raises:
        StopAttempt: the environment could not be built, or the task is invalid at its base.
    """
    receipt, seen = observed("E", "", lambda: _base_state(cfg, progress))
    if receipt.crash is not None and receipt.crash.type == EnvironmentBuildError.__name__:
        why = f"environment could not be built: {receipt.crash.message}"
        receipt = receipt.model_copy(
            update={"checks": (Check.error("environment_reproduced", why, "environment build"),)}
        )
    progress = replace(progress, pending=(receipt,))
    if seen is not None:
        progress = replace(
            progress,
            env=seen.environment,
            base_flaky=frozenset(seen.flaky),
            base_xfailed=frozenset(seen.xfailed),
            base_xpassed=frozenset(seen.xpassed),
            graded_reads=seen.reads,
        )
    if receipt.status != "passed":
        why = receipt.checks[0].detail if receipt.checks else str(receipt.crash)
        raise StopAttempt("environment", why, progress)
    return progress
