"""Many attempts: plan them, check every input before writing anything, run, store, resume.

A run is a list of (contract, agent spec) pairs times epochs. Every user error (a contract, a
repository, an agent spec, a predictions file) is found before the store is created, so bad input
writes nothing. This process (the head) begins every attempt in the store, then an executor runs
them: one after another here by default, or in worker processes (``--workers``) or Ray tasks
(``--executor ray``); the head writes each receipt and decision to the store as it arrives, so the
store has one writer. A crash in one attempt is stored as ``crashed`` with its type and message,
and the run goes on. Rerunning the same command on the same ``--out`` folder resumes: finished
attempts are kept, not redone; unfinished ones are redone from scratch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from securesystemslib.signer import Signer

from repogate import clock, git, sandbox
from repogate._counted import counted
from repogate._folders import remove_if_empty
from repogate.agent_spec import AgentSpec
from repogate.agents import PredictionsAgent, fingerprint, make_agent, require_predictions
from repogate.contract import TransitionContract
from repogate.errors import UserInputError
from repogate.executors import LocalExecutor
from repogate.gates.graded_oracle import load_notices
from repogate.jobs import AttemptEvent, AttemptJob, Executor, ReceiptMade, Started
from repogate.patches import load_patch, touched_paths
from repogate.protocols import Agent
from repogate.provenance import sign_attempt, sign_run
from repogate.store import (
    AgentEntry,
    AttemptRecord,
    ExecutorEntry,
    RunInputs,
    RunManifest,
    Store,
    attempt_id_for,
    contract_entry,
)
from repogate.vocabulary import RUNNER_UNDER_TEST_ASSURANCE, SKIP_SENTINEL_FLAG

CACHE_ENV = "REPOGATE_CACHE"


@dataclass(frozen=True)
class PlannedAttempt:
    """One contract with one agent: the unit the runner schedules (times epochs)."""

    contract: TransitionContract
    contract_source: str
    agent_spec: AgentSpec


@dataclass(frozen=True)
class RunOptions:
    """How to run: where to write, where the caches are, how many epochs."""

    out: Path
    repo_cache: Path | None = None
    cache_dir: Path | None = None
    epochs: int = 1
    selection: str = "contracts named on the command line"
    weak_isolation: str | None = None
    """Who allowed untrusted code to run without bubblewrap (``--allow-weak-isolation``, or the
    embedded default's own scenarios); None refuses to run it so."""
    warn: Callable[[str], None] | None = None
    """Called with each load-time warning (a contract grading ids inside editable files, a
    resumed run keeping a setting this command did not give)."""
    signer: Signer | None = None
    """Signs each decision as it is stored and the run summary at the end
    (:mod:`repogate.provenance`); None signs nothing."""
    skip_sentinel_when_rejected: bool = False
    """``--skip-sentinel-when-rejected``: gate S is not run on an attempt a hard check has
    already failed (its check ``skipped``, saying which failed); recorded in the run manifest.
    A run's first command sets it: a command resuming or extending the run keeps the run's
    setting (:func:`skip_sentinel_setting`)."""


def default_cache() -> Path:
    """The environment and history cache: ``$REPOGATE_CACHE`` or ``~/.cache/repogate``."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "repogate"


@dataclass(frozen=True)
class _Ready:
    plan: PlannedAttempt
    source: Path
    agent: Agent
    warnings: tuple[str, ...] = ()


def _load_warnings(contract: TransitionContract, hidden: bytes) -> tuple[str, ...]:
    """Return what a person should know about a contract before its attempts run.

    The graded ids held in editable files (:func:`load_notices`), and the weaker assurance of a
    contract whose repository is the test runner (``[oracles] runner_under_test``).
    """
    runner = (
        (f"{contract.id}: {RUNNER_UNDER_TEST_ASSURANCE}",)
        if contract.oracles.runner_under_test
        else ()
    )
    return (*load_notices(contract, touched_paths(hidden)), *runner)


def contract_notices(contract: TransitionContract, source: Path) -> tuple[str, ...]:
    """Return the load-time notices of ``contract`` (graded ids held in editable files).

    Args:
        contract: the task.
        source: its full-history repository (the hidden tests are read from it).

    Raises:
        ContractError: the hidden test patch or commit cannot be read.
    """
    patch = contract.oracles.hidden_tests
    return _load_warnings(contract, b"" if patch is None else load_patch(patch, contract, source))


def _key(plan: PlannedAttempt) -> tuple[str, str]:
    """What one planned attempt is, epochs aside: its contract id and agent spec."""
    return plan.contract.id, plan.agent_spec.text


def attempt_count(plans: Sequence[PlannedAttempt], epochs: int) -> int:
    """Return how many attempts :func:`run` makes of ``plans`` (the progress total).

    Each distinct (contract id, agent spec) counts once, as :func:`run` plans it once (a
    contract named twice), times ``epochs``.
    """
    return len({_key(plan) for plan in plans}) * epochs


def _require_predictions(plans: Sequence[PlannedAttempt]) -> None:
    """Refuse a ``--require-all-predictions`` file lacking a contract it is planned on.

    Only the plans are read (no repository), so :func:`run` refuses before any work.

    Raises:
        AgentSpecError: see :func:`repogate.agents.require_predictions`.
    """
    planned: dict[str, tuple[AgentSpec, list[str]]] = {}
    for plan in plans:
        planned.setdefault(plan.agent_spec.text, (plan.agent_spec, []))[1].append(plan.contract.id)
    for spec, contract_ids in planned.values():
        require_predictions([spec], contract_ids)


def _prepare(plans: Sequence[PlannedAttempt], options: RunOptions) -> list[_Ready]:
    """Resolve every repository and build every agent; raises the first user error."""
    ready = []
    seen: dict[tuple[str, str], str] = {}
    warned: set[str] = set()
    for plan in plans:
        contract = plan.contract
        key = _key(plan)
        if key in seen and seen[key] != plan.contract_source:
            raise UserInputError(
                f"two contracts share the id {contract.id!r} ({seen[key]} and {plan.contract_source})",
                "give each contract its own id: attempts are stored under it",
            )
        if key in seen:  # the same contract named twice: planned once
            continue
        seen[key] = plan.contract_source
        source = git.resolve_source(contract.repo, contract.base_dir, options.repo_cache)
        if not git.has_object(source, contract.base_commit):
            raise UserInputError(
                f"contract {contract.id}: base commit {contract.base_commit} is not in {contract.repo}",
                "check the SHA, or refresh the mirror given with --repo-cache",
            )
        # a missing file or commit is a user error
        hidden, _ = (
            b"" if patch is None else load_patch(patch, contract, source)
            for patch in (contract.oracles.hidden_tests, contract.reference)
        )
        said = _load_warnings(contract, hidden)
        if options.warn is not None and contract.id not in warned:
            for line in said:
                options.warn(line)
        warned.add(contract.id)
        ready.append(_Ready(plan, source, make_agent(plan.agent_spec, contract, source), said))
    if options.warn is not None:
        for line in _predictions_covering_nothing(ready):
            options.warn(line)
    return ready


def _predictions_covering_nothing(ready: Sequence[_Ready]) -> tuple[str, ...]:
    """Return one warning per predictions agent whose file has no row for any contract of the run.

    Each such contract is still that agent's empty patch (status ``no_prediction``), as for a
    file that covers some (:mod:`repogate.agents.predictions`) and as SWE-bench counts a missing
    prediction; the warning only says that the file may be the wrong one.
    ``--require-all-predictions`` refuses instead (:func:`_require_predictions`, before any
    repository is read).

    Returns:
        ``agent 'SPEC': the predictions file has no row for any of the N contracts of this run;
        ...`` lines, in the order the agents are first planned.
    """
    covered: dict[str, list[bool]] = {}
    for r in ready:
        if isinstance(r.agent, PredictionsAgent):
            covered.setdefault(r.plan.agent_spec.text, []).append(r.agent.has_prediction)
    return tuple(
        f"agent {spec!r}: the predictions file has no row for any of the "
        f"{counted(len(rows), 'contract')} of this run; each is recorded as no_prediction "
        "(pass --require-all-predictions to refuse)"
        for spec, rows in covered.items()
        if not any(rows)
    )


def run_inputs(ready: Sequence[_Ready], epochs: int) -> RunInputs:
    """Return what a run is made of: contracts by policy digest, agents by fingerprint, epochs."""
    return RunInputs(
        contracts={r.plan.contract.id: r.plan.contract.policy_digest() for r in ready},
        policies={r.plan.contract.id: r.plan.contract.policy_json() for r in ready},
        agents={r.plan.agent_spec.text: fingerprint(r.plan.agent_spec) for r in ready},
        epochs=epochs,
    )


def check_isolation(options: RunOptions) -> str | None:
    """Return the warning to print when untrusted code will run without bubblewrap, else None.

    Raises:
        IsolationError: bubblewrap is not usable here and ``options`` do not allow weak
            isolation (nothing is written); the message says how to install it.
    """
    with sandbox.allowing_weak_isolation(options.weak_isolation):
        iso = sandbox.require_isolation(False)
        allowed_by = sandbox.weak_isolation_reason()
    return None if iso.kind == "bwrap" else f"{iso.detail}; allowed by {allowed_by}"


def skip_sentinel_setting(
    options: RunOptions, before: RunManifest | None
) -> tuple[RunOptions, str | None]:
    """Return ``options`` with the run's ``--skip-sentinel-when-rejected``, and what to say.

    The run's first command sets the option, recorded in its manifest (``before``); a command
    resuming or extending the run takes that setting whatever it was given, as its resumed or
    added attempts then are judged as the run's others were and the manifest describes them all
    (``epochs`` and contracts that differ are refused instead, :meth:`RunInputs.extend`).

    Returns:
        The options to run with, and None when this command asked for the run's setting, else
        the line saying which setting is kept and how to have the other.
    """
    if before is None or before.skip_sentinel_when_rejected == options.skip_sentinel_when_rejected:
        return options, None
    kept, flag = before.skip_sentinel_when_rejected, SKIP_SENTINEL_FLAG
    said = (
        f"this run was started with {flag}: its sentinel is still not run on attempts already "
        f"rejected, though this command did not give {flag}"
        if kept
        else f"this run was started without {flag}: its sentinel still runs on every attempt, "
        f"though this command gave {flag}"
    )
    how = "run into a new --out folder to judge attempts the other way"
    return replace(options, skip_sentinel_when_rejected=kept), f"{said}; {how}"


def _manifest(
    ready: Sequence[_Ready], options: RunOptions, store: Store, executor: Executor
) -> RunManifest:
    """The run's manifest, for this command and what the run already holds.

    When this command resumes or extends a run, the agents it had stay listed, its isolation
    is the weakest any command of the run that ran an attempt had (with its warnings), and
    ``skip_sentinel_when_rejected`` is the run's (its first command's, which ``options`` hold:
    :func:`skip_sentinel_setting`); a command that runs none does not write the manifest
    (:func:`_runs_any`).
    """
    agent_net = any(r.plan.contract.permissions.network for r in ready)
    iso_agent = sandbox.isolation(agent_net)
    iso_tests = sandbox.isolation(False)
    weak = check_isolation(options)
    warnings = (() if weak is None else (weak,)) + tuple(
        dict.fromkeys(w for r in ready for w in r.warnings)
    )
    seen: dict[str, AgentEntry] = {}
    for r in ready:  # described once per spec: a model-driven agent asks its endpoint
        if r.plan.agent_spec.text not in seen:
            seen[r.plan.agent_spec.text] = AgentEntry.model_validate(r.agent.describe())
    before = store.manifest()
    for described in before.agents if before is not None else ():
        if described.spec in store.inputs.agents:
            seen.setdefault(described.spec, described)
    allowed_by = None if weak is None else sandbox.weak_isolation_reason() or options.weak_isolation
    if before is not None:  # the run's earlier attempts keep the isolation they had
        iso_agent = sandbox.weakest(before.isolation_agent, iso_agent)
        iso_tests = sandbox.weakest(before.isolation_tests, iso_tests)
        warnings = tuple(dict.fromkeys((*before.warnings, *warnings)))
        allowed_by = allowed_by or before.weak_isolation_allowed_by
    contracts = {
        r.plan.contract.id: contract_entry(r.plan.contract, r.plan.contract_source) for r in ready
    }
    return RunManifest(
        run_id=store.run_id,
        created_at=before.created_at if before is not None else clock.now(),
        agents=tuple(seen.values()),
        contracts=tuple(contracts.values()),
        selection=options.selection,
        epochs=options.epochs,
        planned_attempts=len(_planned_ids(ready, options.epochs, store)),
        isolation_agent=iso_agent,
        isolation_tests=iso_tests,
        weak_isolation_allowed_by=allowed_by,
        warnings=warnings,
        executor=ExecutorEntry.model_validate(executor.describe()),
        skip_sentinel_when_rejected=options.skip_sentinel_when_rejected,
    )


def _runs_any(ready: Sequence[_Ready], epochs: int, store: Store) -> bool:
    """Whether this command runs any attempt: one of its attempts is not done in ``store``.

    A rerun of a finished run runs none, so its manifest is left as it was: this command's
    isolation and executor describe no attempt of the run, and recording them (weaker isolation
    on another machine, a WEAK warning) would say untrusted code ran so when none did.
    """
    for item in ready:
        spec, contract_id = item.plan.agent_spec, item.plan.contract.id
        for epoch in range(epochs):
            record = store.get(attempt_id_for(contract_id, spec, epoch))
            if record is None or record.status != "done":
                return True
    return False


def _planned_ids(ready: Sequence[_Ready], epochs: int, store: Store) -> set[str]:
    """The run's attempts: this command's and those an earlier command began (an extended run)."""
    ids = store.attempt_ids()
    for item in ready:
        spec, contract_id = item.plan.agent_spec, item.plan.contract.id
        ids.update(attempt_id_for(contract_id, spec, epoch) for epoch in range(epochs))
    return ids


ProgressCallback = Callable[[str, AttemptRecord | None], None]
"""Called with a label when an attempt starts (record None) and when it ends (its record)."""


def run(
    plans: Sequence[PlannedAttempt],
    options: RunOptions,
    progress: ProgressCallback | None = None,
    executor: Executor | None = None,
) -> list[AttemptRecord]:
    """Run every planned attempt for every epoch and return the store's records.

    Args:
        plans: the attempts to run (times ``options.epochs``).
        options: where to write and read caches.
        progress: told when each attempt starts and ends.
        executor: where attempts run; None runs them one by one in this process.

    Raises:
        UserInputError: a contract, repository or agent spec is unusable (nothing written); a
            ``--require-all-predictions`` file lacking a planned contract is refused first,
            before any repository is read.
        IsolationError: bubblewrap is not usable and weak isolation was not allowed (nothing
            written).
        KeyboardInterrupt: Ctrl-C; the workers are stopped and every finished attempt is kept.
    """
    weak = check_isolation(options)
    _require_predictions(plans)
    ready = _prepare(plans, options)
    cache = (options.cache_dir or default_cache()).resolve()
    executor = executor or LocalExecutor()
    isolation = sandbox.isolation(False).detail if weak is None else weak
    with Store.create(options.out, run_inputs(ready, options.epochs)) as store:
        options, kept = skip_sentinel_setting(options, store.manifest())
        if kept is not None and options.warn is not None:
            options.warn(kept)
        if store.manifest() is None or _runs_any(ready, options.epochs, store):
            store.write_manifest(_manifest(ready, options, store, executor))
        jobs = _begin(store, ready, cache, options, progress, isolation)
        labels = {job.attempt_id: job.label for job in jobs}

        def record(event: AttemptEvent) -> None:
            if isinstance(event, Started):
                store.start_attempt(event.attempt_id)
                if progress:
                    progress(labels[event.attempt_id], None)
            elif isinstance(event, ReceiptMade):
                store.add_receipt(event.attempt_id, event.receipt, event.state)
            else:
                store.finish_attempt(event.attempt_id, event.decision, crash=event.crash)
                if options.signer is not None and event.decision is not None:
                    sign_attempt(store.attempt_dir(event.attempt_id), options.signer)
                if progress:
                    progress(labels[event.attempt_id], store.get(event.attempt_id))

        try:
            with sandbox.allowing_weak_isolation(options.weak_isolation):
                executor.run(jobs, record)
        finally:
            remove_if_empty(options.out / "work")  # each attempt removes its own scratch folder
        if options.signer is not None:
            sign_run(store.run_dir, options.signer)
        return store.attempts()


def _begin(
    store: Store,
    ready: Sequence[_Ready],
    cache: Path,
    options: RunOptions,
    progress: ProgressCallback | None,
    isolation: str,
) -> list[AttemptJob]:
    """Begin every attempt not yet done in the store and return their jobs, epoch by epoch.

    A done attempt (a resumed run) is reported to ``progress`` at once and not run again.
    """
    jobs = []
    kind = sandbox.isolation(False).kind
    for epoch in range(options.epochs):
        for item in ready:
            contract = item.plan.contract
            record = store.begin_attempt(contract.id, item.plan.agent_spec, epoch)
            label = f"{contract.id} · {item.plan.agent_spec.name} · epoch {epoch}"
            if record.status == "done":
                if progress:
                    progress(label, record)
                continue
            jobs.append(
                AttemptJob(
                    attempt_id=record.attempt_id,
                    label=label,
                    contract=contract,
                    agent=item.agent,
                    agent_name=item.plan.agent_spec.name,
                    source=item.source,
                    run_dir=store.run_dir,
                    work=options.out / "work" / record.attempt_id,
                    evidence=store.attempt_dir(record.attempt_id),
                    env_cache=cache / "envs",
                    history_cache=cache / "history",
                    git_cache=cache / "git",
                    isolation=isolation,
                    isolation_kind=kind,
                    weak_isolation=options.weak_isolation,
                    skip_sentinel_when_rejected=options.skip_sentinel_when_rejected,
                )
            )
    return jobs
