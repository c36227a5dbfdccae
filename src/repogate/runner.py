"""Many attempts: plan them, check every input before writing anything, run, store, resume.

A run is a list of (contract, agent spec) pairs times epochs. Every user error (a contract, a
repository, an agent spec, a predictions file) is found before the store is created, so bad input
writes nothing. Attempts run one after another (the machine's cores go to the tests). A crash
in one attempt is stored as ``crashed`` with its type and message, and the run goes on. Rerunning
the same command on the same ``--out`` folder resumes: finished attempts are kept, not redone.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from repogate import git, sandbox
from repogate.agents import agent_name, make_agent
from repogate.contract import TransitionContract
from repogate.errors import UserInputError
from repogate.manifest import RunManifest, contract_entry
from repogate.oracles.embedded import embedded_ids
from repogate.patches import load_patch, touched_paths
from repogate.phases import PHASES
from repogate.pipeline import AttemptConfig, run_attempt
from repogate.protocols import Agent
from repogate.store import AttemptRecord, Store

CACHE_ENV = "REPOGATE_CACHE"


@dataclass(frozen=True)
class PlannedAttempt:
    """One contract with one agent: the unit the runner schedules (times epochs)."""

    contract: TransitionContract
    contract_source: str
    agent_spec: str


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
    """Called with each load-time warning (a contract grading ids inside editable files)."""


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
    """Return what a person should know about a contract before its attempts run."""
    inside = embedded_ids(contract, touched_paths(hidden))
    if not inside:
        return ()
    return (
        f"contract {contract.id} grades ids inside files the agent may edit: "
        + ", ".join(inside)
        + "; they are graded from the hidden tests' version of that text",
    )


def _prepare(plans: Sequence[PlannedAttempt], options: RunOptions) -> list[_Ready]:
    """Resolve every repository and build every agent; raises the first user error."""
    ready = []
    seen: dict[tuple[str, str], str] = {}
    warned: set[str] = set()
    for plan in plans:
        contract = plan.contract
        key = (contract.id, plan.agent_spec)
        if key in seen and seen[key] != plan.contract_source:
            raise UserInputError(
                f"two contracts share the id {contract.id!r} ({seen[key]} and {plan.contract_source})",
                "give each contract its own id: attempts are stored under it",
            )
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
    return ready


def agent_fingerprint(spec: str) -> str:
    """Return sha256 over an agent spec and the content of every file it names.

    A scripted agent, a predictions file or a command's script that changed is another agent.
    """
    digest = hashlib.sha256(spec.encode())
    _, _, arg = spec.partition(":")
    for word in arg.split():
        path = Path(word.strip("'\""))
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def inputs_digest(ready: Sequence[_Ready], epochs: int) -> str:
    """Return sha256 over what a run is made of.

    That is each contract's policy digest, each agent's fingerprint, and the number of epochs.
    """
    parts = sorted(
        f"{r.plan.contract.id}:{r.plan.contract.policy_digest()}:{agent_fingerprint(r.plan.agent_spec)}"
        for r in ready
    )
    return hashlib.sha256("\n".join([*parts, str(epochs)]).encode()).hexdigest()


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


def _manifest(ready: Sequence[_Ready], options: RunOptions) -> RunManifest:
    agent_net = any(r.plan.contract.permissions.network for r in ready)
    iso_agent = sandbox.isolation(agent_net)
    iso_tests = sandbox.isolation(False)
    weak = check_isolation(options)
    warnings = (() if weak is None else (weak,)) + tuple(
        dict.fromkeys(w for r in ready for w in r.warnings)
    )
    seen: dict[str, dict[str, object]] = {}
    for r in ready:
        seen.setdefault(r.plan.agent_spec, r.agent.describe())
    contracts = {
        r.plan.contract.id: contract_entry(r.plan.contract, r.plan.contract_source) for r in ready
    }
    return RunManifest(
        agents=tuple(seen.values()),
        contracts=tuple(contracts.values()),
        selection=options.selection,
        epochs=options.epochs,
        isolation_agent=iso_agent,
        isolation_tests=iso_tests,
        weak_isolation_allowed_by=None
        if weak is None
        else sandbox.weak_isolation_reason() or options.weak_isolation,
        warnings=warnings,
    )


ProgressCallback = Callable[[str, AttemptRecord | None], None]
"""Called with a label before each attempt (record None) and after it (its record)."""


def run(
    plans: Sequence[PlannedAttempt], options: RunOptions, progress: ProgressCallback | None = None
) -> list[AttemptRecord]:
    """Run every planned attempt for every epoch and return the store's records.

    Raises:
        UserInputError: a contract, repository or agent spec is unusable (nothing written).
        IsolationError: bubblewrap is not usable and weak isolation was not allowed (nothing
            written).
    """
    weak = check_isolation(options)
    ready = _prepare(plans, options)
    cache = (options.cache_dir or default_cache()).resolve()
    store = Store.create(options.out, inputs_digest(ready, options.epochs))
    isolation = sandbox.isolation(False).detail if weak is None else weak
    try:
        store.write_manifest(_manifest(ready, options))
        with sandbox.allowing_weak_isolation(options.weak_isolation):
            for epoch in range(options.epochs):
                for item in ready:
                    _one(store, item, epoch, cache, options, progress, isolation)
        return store.attempts()
    finally:
        store.close()


def _one(
    store: Store,
    item: _Ready,
    epoch: int,
    cache: Path,
    options: RunOptions,
    progress: ProgressCallback | None,
    isolation: str,
) -> None:
    contract = item.plan.contract
    record = store.begin_attempt(contract.id, item.plan.agent_spec, epoch)
    label = f"{contract.id} · {agent_name(item.plan.agent_spec)} · epoch {epoch}"
    if record.status == "done":
        if progress:
            progress(label, record)
        return
    if progress:
        progress(label, None)
    work = options.out / "work" / record.attempt_id
    cfg = AttemptConfig(
        contract=contract,
        agent=item.agent,
        agent_name=agent_name(item.plan.agent_spec),
        source=item.source,
        work=work,
        evidence=store.attempt_dir(record.attempt_id),
        env_cache=cache / "envs",
        history_cache=cache / "history",
        store=store,
        attempt_id=record.attempt_id,
        isolation=isolation,
    )
    try:
        run_attempt(cfg, PHASES)
    except Exception as exc:  # one attempt's crash is data; the run goes on
        store.finish_attempt(record.attempt_id, None, crash=f"{type(exc).__name__}: {exc}"[:4000])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if progress:
        progress(label, store.get(record.attempt_id))
