"""Validate a candidate task by running it: the checks a task must pass before anyone is graded on it.

The rules follow SWE-bench's validation of its instances (FAIL_TO_PASS and PASS_TO_PASS found by
running the tests at the base and with the gold patch, `swebench/collect` and the harness's
``get_logs_eval``) and SWE-Factory's fail-to-pass validation, made stricter in the ways that catch
the known faults of public task sets:

- the reference (gold) patch and the hidden test patch must apply at the base, exactly;
- the environment must build from the contract's recipe (shared by every candidate whose recipe
  digest is equal: :func:`repogate.environments.build` caches by it);
- the touched test files run ``repeats`` times on (base + hidden tests) and ``repeats`` times on
  (reference + hidden tests), in the sandbox without network; a test whose outcome differs between
  runs of one state is **flaky** and leaves grading, with the reason kept;
- derived ids (mining, or an instance without ids): FAIL_TO_PASS = failed or errored at the base in
  every run and passed with the reference in every run; PASS_TO_PASS = passed in every run of both;
- declared ids (SWE-bench instances, hand-written contracts): each must exist in the collected
  suite (a bare name is resolved inside the touched test files; one found in two files is
  ambiguous), each FAIL_TO_PASS must fail at the base and pass with the reference in N of N runs
  (every declared id is checked, none stops the others; in an import of SWE-bench instances one
  that passes at the base in N of N runs is graded as PASS_TO_PASS, recorded, when another fails
  there: :attr:`CheckConfig.relabel_passing_fail_to_pass`);
  a PASS_TO_PASS test that does not pass at the base leaves grading (SWE-bench keeps only tests
  that pass on both), and one that failed on a network error is named so;
- a FAIL_TO_PASS test that fails with the reference on a network error (connection refused, a
  name that does not resolve: read from the JUnit report's failure text) is ``needs_network``,
  never imported silently; one whose failure is a TLS or connection error naming a declared
  service's address (``https://`` to a service that answers plain HTTP) is ``needs_service``.

A candidate that fails is rejected with one reason from :data:`RejectionReason`. The hermetic check
of the reference under the real pipeline is :mod:`repogate.tasks.ingest`'s last step.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from repogate import clock, environments, git
from repogate.contract import TransitionContract
from repogate.errors import EnvironmentBuildError, PatchApplyError, UserInputError
from repogate.gates.graded_trees import graded_tree
from repogate.oracles.base_suite import graded_grant
from repogate.oracles.grading import flaky
from repogate.oracles.guard import runner_variables
from repogate.oracles.pytest_runner import OUTPUT_NAME, TestRun, run_tests, select_files
from repogate.patches import load_patch, touched_paths
from repogate.sandbox import SandboxPolicy
from repogate.tasks import dates
from repogate.tasks._outcomes import (
    FAILING,
    PASSED,
    always,
    missing_detail,
    network_failures,
    resolve_ids,
    service_addresses,
    service_failures,
    tests_of,
)
from repogate.tasks._records import Rejected, RejectionReason, Spent, Validation
from repogate.tasks.handoff import Observed, Prepared, hand_over

__all__ = ["CheckConfig", "Rejected", "RejectionReason", "Validation", "check_states"]


@dataclass(frozen=True)
class CheckConfig:
    """Where and how to check one candidate.

    Attributes:
        work: a scratch folder (emptied first, removed by the caller).
        env_cache: the shared environment cache (``$REPOGATE_CACHE/envs``).
        repeats: runs of each state.
        build_timeout_s: budget of one install command, in seconds.
        git_cache: copies of base histories (:func:`repogate.git.cached_history`), or None to
            fetch the base's history from the source.
        relabel_passing_fail_to_pass: grade a declared FAIL_TO_PASS id that passes at the base in
            every run as PASS_TO_PASS (recorded in ``relabelled_pass_to_pass``) when another
            declared id does fail there; the import of SWE-bench instances sets it (their labels
            hold tests that failed in SWE-bench's validation for a reason outside the code, the
            live httpbin.org). False (a hand-written contract, ``tasks check``): such an id
            rejects the candidate ``fail_to_pass_passes_at_base``.
    """

    work: Path
    env_cache: Path
    repeats: int = 1
    build_timeout_s: float = 1800.0
    git_cache: Path | None = None
    relabel_passing_fail_to_pass: bool = False

    @classmethod
    def in_cache(
        cls, cache: Path, work: Path, repeats: int, *, relabel: bool = False
    ) -> CheckConfig:
        """The configuration under cache root ``cache`` (``$REPOGATE_CACHE``).

        Its environments and base histories are the cache's; ``work`` is the scratch folder;
        ``relabel`` is ``relabel_passing_fail_to_pass``.
        """
        return cls(
            work=work,
            env_cache=cache / "envs",
            repeats=repeats,
            git_cache=cache / "git",
            relabel_passing_fail_to_pass=relabel,
        )


@dataclass(frozen=True)
class _States(Prepared):
    ref_tree: Path
    files: tuple[str, ...]
    spent: Spent


def _prepare(contract: TransitionContract, source: Path, cfg: CheckConfig, spent: Spent) -> _States:
    ws = cfg.work / "repo"
    try:
        base = git.prepare_workspace(source, contract.base_commit, ws, cache=cfg.git_cache)
    except UserInputError as exc:
        raise Rejected("base_commit_missing", exc.what) from None
    if contract.oracles.hidden_tests is None or contract.reference is None:
        raise Rejected("no_test_change", "the contract has no hidden tests or no reference patch")
    hidden = load_patch(contract.oracles.hidden_tests, contract, source)
    reference = load_patch(contract.reference, contract, source)
    if not hidden.strip() or not reference.strip():
        which = "hidden test" if not hidden.strip() else "reference"
        raise Rejected("no_test_change", f"the {which} patch is empty")
    hidden_paths = touched_paths(hidden)
    base_tree, ref_tree = cfg.work / "base", cfg.work / "reference"
    try:
        git.apply_patch(ws, reference)
    except PatchApplyError as exc:
        raise Rejected("patch_does_not_apply", f"the reference patch: {exc}") from None
    # trees are local copies of the workspace (repogate.git.copy_repository), the base's made
    # before the reference is committed there, so they hold the base's history and nothing newer
    copy = git.copy_repository
    install = cfg.work / "install"
    copy(ws, base, install)
    try:
        graded_tree(ws, base, base, hidden, hidden_paths, base_tree, export=copy)
        ref_commit = git.commit_candidate(ws, "reference", parent=base)
        graded_tree(ws, base, ref_commit, hidden, hidden_paths, ref_tree, export=copy)
    except PatchApplyError as exc:
        raise Rejected("patch_does_not_apply", f"the hidden test patch: {exc}") from None
    recipe = contract.environment
    policy = SandboxPolicy(network=recipe.network, timeout_s=cfg.build_timeout_s)
    as_of = git.commit_date(ws, base) if recipe.resolve_as_of == "base_commit" else None
    building = clock.monotonic()
    try:
        env = environments.build(
            environments.BuildRequest(
                recipe=recipe,
                base_checkout=install,
                cache_dir=cfg.env_cache,
                policy=policy,
                exclude_newer=as_of,
            )
        )
    except EnvironmentBuildError as exc:
        spent.build = clock.monotonic() - building
        raise Rejected("environment_failed", str(exc)[:2000], log=exc.log) from None
    spent.build = env.build_seconds
    oracles = contract.oracles
    named = {t.split("::", 1)[0] for t in (*oracles.fail_to_pass, *oracles.pass_to_pass)}

    def runs(path: str) -> bool:
        return _is_test_file(path) or path in named

    if not any(runs(p) for p in select_files(hidden_paths, ref_tree)):
        raise Rejected("no_test_change", "the hidden tests touch no test file that pytest runs")
    wanted = [*hidden_paths, *oracles.fail_to_pass, *oracles.pass_to_pass]
    files = tuple(f for f in select_files(wanted, ref_tree) if runs(f))
    # the sandbox of gate E's test runs (repogate.pipeline.oracle_policy), so its result is shared
    tests = SandboxPolicy(
        network=False,
        timeout_s=contract.oracles.timeout_s,
        writable=(),
        writable_cwd=True,
        hidden=(source,),
        env=runner_variables(contract.oracles.runner_under_test),
    )
    paths = tuple(hidden_paths)
    return _States(env, base, hidden, paths, reference, base_tree, tests, ref_tree, files, spent)


def _is_test_file(path: str) -> bool:
    """A file pytest collects by its default naming (``test_*.py``, ``*_test.py``).

    A file a declared id names runs whatever its name (pytest collects a file given by path;
    pylint's ``unittest_*.py``): :func:`_prepare` counts those too.
    """
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _run(
    states: _States,
    tree: Path,
    contract: TransitionContract,
    cfg: CheckConfig,
    label: str,
    policy: SandboxPolicy | None = None,
) -> list[TestRun]:
    runs = []
    for n in range(cfg.repeats):
        report = cfg.work / "reports" / f"{label}{n}"
        # as gate E's graded runs: the harness's plugin tells whose xfail mark an XPASS has
        command, granted, tools = graded_grant(
            contract.oracles.test_command, states.files, report, policy or states.policy
        )
        run = run_tests(states.env, tree, command, states.files, report, granted, tool_path=tools)
        states.spent.tests += run.execution.duration_s
        if run.status != "ok":
            reason: RejectionReason = "timeout" if run.execution.timed_out else "test_run_failed"
            # the log's path names the scratch folder, removed after validation: the text is kept
            why = run.reason.split("; log: ", 1)[0]
            output = report / OUTPUT_NAME
            log = output.read_text("utf-8", "replace") if output.is_file() else ""
            raise Rejected(reason, f"{label} run {n + 1}: {why}", log=log)
        runs.append(run)
    return runs


def _derive(
    base: list[TestRun], ref: list[TestRun], flips: set[str]
) -> tuple[list[str], list[str]]:
    ids = [t for t in tests_of(ref[-1].outcomes) if t not in flips]
    passed = PASSED
    f2p = [t for t in ids if always(ref, t, passed) and always(base, t, FAILING)]
    p2p = [t for t in ids if always(ref, t, passed) and always(base, t, passed)]
    return f2p, p2p


def _sort_fail_to_pass(
    declared: Sequence[str],
    resolved: dict[str, str],
    seen: tuple[_States, Validation],
    runs: tuple[list[TestRun], list[TestRun]],
    flips: set[str],
    dropped: dict[str, str],
) -> tuple[list[str], list[str]]:
    """Sort every declared FAIL_TO_PASS id by what the runs saw; none stops the others.

    ``seen`` is the states' trees and what validation observed so far (kept in a rejection).

    Returns:
        (the node ids that fail at the base and pass with the reference in every run, the
        declared ids that pass on both states in every run); ``dropped`` gets the flaky ids and
        those skipped at the base. An id passing at the base in some runs only is flaky.

    Raises:
        Rejected: ``needs_service``, ``needs_network`` or ``reference_fails`` (the cause of the
            first id that does not pass with the reference in every run), naming every such id
            with its cause.
    """
    states, partial = seen
    base, ref = runs
    f2p: list[str] = []
    at_base: list[str] = []
    broken: list[str] = []
    for declared_id in declared:
        node = resolved[declared_id]
        if node in flips:
            dropped[declared_id] = "flaky"
        elif not always(ref, node, PASSED):
            broken.append(declared_id)
        elif always(base, node, PASSED):
            at_base.append(declared_id)
        elif always(base, node, FAILING):
            f2p.append(node)
        else:
            dropped[declared_id] = "skipped at the base"
    if broken:
        reason, why = _reference_failures(broken, resolved, states, ref)
        raise Rejected(reason, why, partial)
    return f2p, at_base


def _reference_failures(
    broken: Sequence[str], resolved: Mapping[str, str], states: _States, ref: Sequence[TestRun]
) -> tuple[RejectionReason, str]:
    """Return the rejection for the declared ids that do not pass with the reference.

    Every id is named, grouped by cause: a declared service not offering what the test asks
    (``needs_service``), a network error (``needs_network``), any other failure
    (``reference_fails``). The reason is the first id's cause; its group is said first.
    """
    addresses = service_addresses(states.env.services)
    on_service = service_failures(ref, states.ref_tree, addresses)
    on_network = network_failures(ref, states.ref_tree)
    groups: dict[RejectionReason, list[str]] = {}
    for declared_id in broken:
        node = resolved[declared_id]
        cause: RejectionReason = (
            "needs_service"
            if node in on_service
            else "needs_network"
            if node in on_network
            else "reference_fails"
        )
        groups.setdefault(cause, []).append(declared_id)
    said = []
    for cause, ids in groups.items():
        one, several, rest = _REFERENCE_FAILURE[cause]
        said.append(f"{', '.join(ids)} {one if len(ids) == 1 else several} {rest}")
    return next(iter(groups)), "; ".join(said)


_REFERENCE_FAILURE: dict[RejectionReason, tuple[str, str, str]] = {
    "needs_service": (
        "fails",
        "fail",
        "with the reference on a TLS or connection error to a declared service's address (the "
        "service does not offer what the test asks)",
    ),
    "needs_network": ("fails", "fail", "with the reference on a network error (no network here)"),
    "reference_fails": ("does", "do", "not pass with the reference"),
}
"""How a rejection says each cause of a reference failure: the verb for one id and for
several, and the rest of the phrase."""


def _check_declared(
    contract: TransitionContract,
    states: _States,
    runs: tuple[list[TestRun], list[TestRun]],
    cfg: CheckConfig,
    partial: Validation,
) -> Validation:
    base, ref = runs
    oracles = contract.oracles
    declared = [*oracles.fail_to_pass, *oracles.pass_to_pass]
    # in the reference's run first (a cut id stands for its worst test there), then the base's:
    # never both at once, where an id holding its tree's path would be spelled twice
    resolved, missing, ambiguous = resolve_ids(declared, tests_of(ref[-1].outcomes))
    if missing:
        more, missing, twice = resolve_ids(missing, tests_of(base[-1].outcomes))
        resolved, ambiguous = {**resolved, **more}, [*ambiguous, *twice]
    if ambiguous:
        raise Rejected(
            "ambiguous_test_id",
            f"{len(ambiguous)} declared name(s) exist in more than one test file, e.g. {ambiguous[0]!r}",
            partial,
        )
    if missing:
        raise Rejected("ids_missing", missing_detail(missing), partial)
    flips = set(partial.flaky)
    dropped: dict[str, str] = {}
    passed = PASSED
    f2p, at_base = _sort_fail_to_pass(
        oracles.fail_to_pass, resolved, (states, partial), runs, flips, dropped
    )
    relabel = cfg.relabel_passing_fail_to_pass and bool(f2p)
    if at_base and not relabel:
        count = len(oracles.fail_to_pass)
        why = f"{len(at_base)} of {count} declared FAIL_TO_PASS ids pass at the base in every run"
        raise Rejected("fail_to_pass_passes_at_base", f"{why}: {', '.join(at_base)}", partial)
    if not f2p:
        reason: RejectionReason = (
            "flaky" if any(v == "flaky" for v in dropped.values()) else "no_fail_to_pass"
        )
        raise Rejected(reason, "no declared FAIL_TO_PASS test is left to grade", partial)
    p2p: list[str] = []
    unstable = [resolved[t] for t in oracles.pass_to_pass]
    failing = [
        t
        for t in unstable
        if t not in flips and not (always(base, t, passed) and always(ref, t, passed))
    ]
    network = network_failures(base, states.base_tree) | network_failures(ref, states.ref_tree)
    for declared_id in oracles.pass_to_pass:
        node = resolved[declared_id]
        if node in flips:
            dropped[declared_id] = "flaky"
        elif node in failing:
            why = "needs network" if node in network else "does not pass on both states"
            dropped[declared_id] = why
        else:
            p2p.append(node)
    moved = [resolved[t] for t in at_base]
    return partial.model_copy(
        update={
            "fail_to_pass": tuple(f2p),
            "pass_to_pass": (*moved, *(t for t in p2p if t not in moved)),
            "relabelled_pass_to_pass": tuple(at_base),
            "dropped": dropped,
            "resolved": {k: v for k, v in resolved.items() if k != v},
        }
    )


def _date_check(
    states: _States,
    ref: list[TestRun],
    checked: Validation,
    contract: TransitionContract,
    cfg: CheckConfig,
) -> Validation:
    """Run the reference once more under a clock years ahead; reject or drop what moved."""
    library = dates.libfaketime()
    if library is None:
        why = "not run: libfaketime is not installed (apt-get install faketime)"
        return checked.model_copy(update={"date_check": why})
    later_policy = dates.shifted(states.policy, library)
    once = replace(cfg, repeats=1)
    (later,) = _run(states, states.ref_tree, contract, once, "reference-later", later_policy)
    moved = dates.date_dependent(ref, later, [*checked.fail_to_pass, *checked.pass_to_pass])
    ahead = f"{dates.SHIFT_DAYS} days ahead"
    seen = checked.model_copy(
        update={
            "date_check": f"reference run {ahead} (libfaketime): {len(moved)} graded test(s) moved",
            "test_seconds": round(checked.test_seconds + later.execution.duration_s, 3),
        }
    )
    focused = [t for t in checked.fail_to_pass if t in moved]
    if focused:
        why = f"{focused[0]} passes with the reference today and not {ahead}"
        raise Rejected("date_dependent", why, seen)
    return seen.model_copy(
        update={
            "pass_to_pass": tuple(t for t in checked.pass_to_pass if t not in moved),
            "dropped": {**checked.dropped, **dict.fromkeys(moved, "depends on today's date")},
        }
    )


def check_states(contract: TransitionContract, source: Path, cfg: CheckConfig) -> Validation:
    """Check a candidate's states; derive FAIL_TO_PASS / PASS_TO_PASS when it declares none.

    Args:
        contract: the candidate contract (its patches are read through its patch sources).
        source: the full-history repository.
        cfg: scratch folder, environment cache, repeats.

    Returns:
        The validation, with the ids to grade.

    Raises:
        Rejected: the candidate is not a task; the reason and what was seen.
    """
    if cfg.work.exists():
        shutil.rmtree(cfg.work)
    cfg.work.mkdir(parents=True)
    spent = Spent(clock.monotonic())
    try:
        return _check_states(contract, source, cfg, spent)
    except Rejected as rejected:  # the record keeps what was spent before it stopped
        rejected.validation = spent.timings(rejected.validation, cfg.repeats)
        raise


def _check_states(
    contract: TransitionContract, source: Path, cfg: CheckConfig, spent: Spent
) -> Validation:
    started = spent.started
    states = _prepare(contract, source, cfg, spent)
    base = _run(states, states.base_tree, contract, cfg, "base")
    ref = _run(states, states.ref_tree, contract, cfg, "reference")
    flips = flaky([r.outcomes for r in base]) | flaky([r.outcomes for r in ref])
    partial = Validation(
        repeats=cfg.repeats,
        test_files=states.files,
        flaky=tuple(sorted(flips)),
        environment_digest=states.env.digest,
        environment_cold=states.env.cold,
        build_seconds=round(states.env.build_seconds, 3),
        test_seconds=round(sum(r.execution.duration_s for r in (*base, *ref)), 3),
    )
    if contract.oracles.fail_to_pass:
        checked = _check_declared(contract, states, (base, ref), cfg, partial)
    else:
        f2p, p2p = _derive(base, ref, flips)
        if not f2p:
            near = [t for t in flips if any(r.outcomes.get(t) == "passed" for r in ref)]
            reason: RejectionReason = "flaky" if near else "no_fail_to_pass"
            errored = [t for t, o in base[-1].outcomes.items() if "::" not in t and o == "error"]
            why = f" ({len(errored)} test file(s) fail to collect at the base)" if errored else ""
            raise Rejected(
                reason, f"no test fails at the base and passes with the reference{why}", partial
            )
        checked = partial.model_copy(
            update={"fail_to_pass": tuple(f2p), "pass_to_pass": tuple(p2p)}
        )
    checked = _date_check(states, ref, checked, contract, cfg)
    graded = contract.oracles.model_copy(
        update={
            "fail_to_pass": list(checked.fail_to_pass),
            "pass_to_pass": list(checked.pass_to_pass),
        }
    )
    seen = Observed(states, (base, ref), frozenset(flips))
    why = hand_over(contract.model_copy(update={"oracles": graded}), source, seen, cfg.env_cache)
    return checked.model_copy(
        update={
            "validation_seconds": round(clock.monotonic() - started - states.env.build_seconds, 3),
            "handed_to_gate_e": why,
        }
    )
