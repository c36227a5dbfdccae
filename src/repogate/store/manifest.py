"""The run manifest: what a run was, written before its first attempt.

It records the evaluator version, each agent's spec and the model and scaffold it reports (for a
model-driven agent: the model the endpoint reported, the sampling settings, the prompt templates'
digests and the agent's version, :func:`repogate.agents.configuration`), the
tool rights, budgets and network policy each contract grants, the isolation actually in force, the
seeds, human interventions, the contracts' digests and the rule that selected them: enough to tell
what produced the denominator, and to rerun it.
"""

from __future__ import annotations

import platform
import sys
from datetime import datetime
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from repogate import clock
from repogate._model import FrozenModel, SchemaVersion
from repogate._version import __version__
from repogate.contract import TransitionContract
from repogate.sandbox import Isolation
from repogate.vocabulary import PROFILE_VERSIONS


class ContractEntry(FrozenModel):
    """One selected contract: its id, policy digest, profile, budgets, rights and network grants."""

    id: str
    source: str
    policy_digest: str
    profile: str
    cohort: dict[str, str]
    time_budget_s: float
    token_budget: int | None
    cost_budget_usd: float | None = None
    sample_budget: int | None = None
    agent_network: bool
    install_network: bool
    editable: tuple[str, ...]
    commands: tuple[str, ...]
    environment_backend: str = "uv"
    """The contract's ``[environment] backend`` (``uv``, ``image``); ``uv`` in manifests written
    before backends."""
    image: str | None = None
    """The image backend's ``[environment] image``, as the contract writes it; the image's digest
    is in each attempt's environment receipt (gate E) and its test runs' isolation (gate V)."""
    environment_supplied_by: Literal["evaluator", "agent"] = "evaluator"
    """The contract's ``[environment] supplied_by``: ``agent`` when the agent reconstructs the
    environment (its recipe graded at gate E); ``evaluator`` in manifests written before it.
    The cohort gains the tag ``environment`` (:func:`environment_cohort`) either way."""
    intervention: str | None = None
    """For a contract ``repogate tasks vary`` derived: the kind, the parent and what was planted
    (``[derivation]``); None for an original task and in manifests written before it."""
    profile_version: int | None = None
    """The version of ``profile``'s check list the run decides under
    (:data:`repogate.vocabulary.PROFILE_VERSIONS`); None in manifests written before profiles had
    versions."""


class _Described(FrozenModel):
    """A ``describe()`` result: written with the keys it was given, none added as null.

    Which keys an agent or executor gives depends on its kind, so each entry names them all as
    optional; leaving out the ones it did not give keeps the manifest as the describer wrote it.
    """

    @model_serializer(mode="wrap")
    def _given_keys_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {key: value for key, value in dumped.items() if key in self.model_fields_set}


class AgentEntry(_Described):
    """One agent as the manifest records it (:meth:`repogate.protocols.Agent.describe`).

    Every agent gives ``spec``; the rest depends on its kind:

    - gold, null, commit, scripted: ``model`` (``gold``, ``null``, ``commit``, ``scripted``) and
      ``scaffold``; a commit agent its full ``commit`` id, a scripted one its ``description``;
    - predictions: ``model``, the model the file names for the task (None without a row);
    - cmd: ``argv``, the command line with its files made absolute;
    - model-driven (baseline, mini; :func:`repogate.agents.configuration`): ``kind``,
      ``agent_version``, ``model``, ``endpoint`` (a URL without credentials, or ``replay:FILE``),
      ``config`` (baseline: its whole configuration; mini: file name and sha256), ``prompts``
      (template name -> sha256 hex), mini's ``sampling`` and ``limits`` (mini-swe-agent's own
      keys, kept as given), and ``reported_model`` (what the endpoint's ``GET /models/{name}``
      said, as it said it).
    """

    spec: str
    model: str | None = None
    scaffold: str | None = None
    kind: str | None = None
    argv: tuple[str, ...] | None = None
    commit: str | None = None
    description: str | None = None
    agent_version: str | None = None
    endpoint: str | None = None
    config: dict[str, Any] | None = None
    prompts: dict[str, str] | None = None
    sampling: dict[str, Any] | None = None
    limits: dict[str, Any] | None = None
    reported_model: dict[str, Any] | None = None


class ExecutorEntry(_Described):
    """Where a run's attempts ran (:meth:`repogate.jobs.Executor.describe`).

    Attributes:
        name: ``local`` or ``ray`` (``--executor``).
        workers: attempts at once; for Ray, None when not capped.
        ray: Ray's version, for the ``ray`` executor.
    """

    name: str
    workers: int | None = 1
    ray: str | None = None


class RunManifest(FrozenModel):
    """The manifest of one run (schema_version 1).

    ``run_id`` came later as an optional field, so a manifest written before it reads as None.
    ``weak_isolation_allowed_by`` names who let untrusted code run without bubblewrap (the
    ``--allow-weak-isolation`` flag, or the embedded default's own scenarios); None under
    bubblewrap. ``warnings`` then says what that isolation leaves open. ``agents`` and
    ``executor`` were plain JSON objects before they were typed; the keys were the same, so those
    manifests read as these records.
    """

    schema_version: SchemaVersion = 1
    run_id: str | None = None
    """The run's id (:attr:`repogate.store.Store.run_id`), the same on resume and in a copy;
    None in manifests written before run ids."""
    evaluator: str = f"repogate {__version__}"
    created_at: datetime = Field(default_factory=clock.now)
    """When the run was first created (UTC); a resume or an extension keeps it."""
    python: str = sys.version.split()[0]
    platform: str = platform.platform()
    agents: tuple[AgentEntry, ...]
    contracts: tuple[ContractEntry, ...]
    selection: str
    epochs: int = 1
    planned_attempts: int | None = None
    seeds: tuple[int, ...] = ()
    human_interventions: tuple[str, ...] = ()
    isolation_agent: Isolation
    isolation_tests: Isolation
    weak_isolation_allowed_by: str | None = None
    warnings: tuple[str, ...] = ()
    executor: ExecutorEntry = Field(default_factory=lambda: ExecutorEntry(name="local", workers=1))
    """Where the attempts ran: the executor's spec (``name``, ``workers``, Ray's version)."""
    skip_sentinel_when_rejected: bool = False
    """``repogate run --skip-sentinel-when-rejected`` was in force (for any command of the run):
    gate S was not run on an attempt a hard check had already failed, so the sentinel stage and
    its failure rate cover only the attempts not already rejected. False in manifests written
    before the option."""


def isolation_summary(manifest: RunManifest | None) -> str:
    """The isolation a run's commands had, as one line: who, the mechanism, the network.

    For example ``agents: bwrap, network off; tests: bwrap, network off`` (the weakest any
    command of the run had: :func:`repogate.sandbox.weakest`); without a manifest (a run begun
    before it was written) ``agents: ?, network ON; tests: ?, network ON``, never stronger than
    what may have been.
    """
    if manifest is None:
        return "agents: ?, network ON; tests: ?, network ON"
    return "; ".join(
        f"{who}: {i.kind}, network {'off' if i.network_off else 'ON'}"
        for who, i in (("agents", manifest.isolation_agent), ("tests", manifest.isolation_tests))
    )


def contract_entry(contract: TransitionContract, source: str) -> ContractEntry:
    """Describe ``contract`` (read from ``source``) for the manifest."""
    return ContractEntry(
        id=contract.id,
        source=source,
        policy_digest=contract.policy_digest(),
        profile=contract.profile,
        cohort={**contract.cohort, **environment_cohort(contract)},
        time_budget_s=contract.permissions.time_budget_s,
        token_budget=contract.permissions.token_budget,
        cost_budget_usd=contract.permissions.cost_budget_usd,
        sample_budget=contract.permissions.sample_budget,
        agent_network=contract.permissions.network,
        install_network=contract.environment.network,
        environment_backend=contract.environment.backend,
        image=contract.environment.image,
        environment_supplied_by=contract.environment.supplied_by,
        editable=contract.permissions.editable,
        commands=contract.permissions.commands,
        intervention=_intervention(contract),
        profile_version=PROFILE_VERSIONS[contract.profile],
    )


ENVIRONMENT_COHORT = "environment"
"""The cohort tag every contract entry carries, derived from ``[environment] supplied_by``:
``supplied`` (the evaluator builds it) or ``reconstructed`` (the agent does), so
``repogate report --by environment`` compares the two."""


def environment_cohort(contract: TransitionContract) -> dict[str, str]:
    """The derived ``environment`` cohort tag of ``contract`` (a tag the contract sets wins)."""
    if ENVIRONMENT_COHORT in contract.cohort:
        return {}
    supplied = contract.environment.supplied_by == "evaluator"
    return {ENVIRONMENT_COHORT: "supplied" if supplied else "reconstructed"}


def _intervention(contract: TransitionContract) -> str | None:
    derived = contract.derivation
    if derived is None:
        return None
    return f"{derived.kind} on {derived.parent_id} (base {derived.parent_base_commit[:12]}): {derived.description}"
