"""Agents under evaluation, built from a typed spec (:mod:`repogate.agent_spec`).

===================  ==========================================================================
spec                 agent
===================  ==========================================================================
``gold``             applies the contract's reference patch
``null``             changes nothing
``predictions:FILE`` applies ``model_patch`` from SWE-bench predictions (JSON or JSONL); a
                     file of several models is one agent per model (``FILE#MODEL``)
``cmd:COMMAND``      runs any command-line agent in its workspace under the sandbox
``scripted:FILE``    canned edits from a TOML file (shipped for tests and demos)
``baseline:MODEL``   localise, repair, validate with a model (:mod:`repogate.agents.baseline`)
``mini:MODEL``       mini-swe-agent's loop, actions in the sandbox (:mod:`repogate.agents.mini`)
``commit:SHA``       no agent: commit SHA's tree is the candidate (``repogate gate``)
===================  ==========================================================================
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repogate.agent_spec import (
    AgentSpec,
    CmdSpec,
    CommitSpec,
    GoldSpec,
    ModelSpec,
    NullSpec,
    PredSpec,
    ScriptSpec,
    parse_agent_spec,
)
from repogate.agents import baseline, mini
from repogate.agents.command import CommandAgent
from repogate.agents.commit import CommitAgent
from repogate.agents.gold import GoldAgent, NullAgent
from repogate.agents.model_agent import check_ready
from repogate.agents.predictions import PredictionsAgent, load_predictions, require_predictions
from repogate.agents.scripted import ScriptedAgent, load_script
from repogate.contract import TransitionContract
from repogate.errors import AgentSpecError
from repogate.models.meter import budget_of
from repogate.protocols import Agent

__all__ = [
    "CommandAgent",
    "CommitAgent",
    "GoldAgent",
    "NullAgent",
    "PredictionsAgent",
    "ScriptedAgent",
    "check_ready",
    "configuration",
    "fingerprint",
    "load_predictions",
    "load_script",
    "make_agent",
    "parse_specs",
    "require_predictions",
    "requiring_all",
    "resolve_specs",
]


def make_agent(spec: AgentSpec, contract: TransitionContract, repo: Path) -> Agent:
    """Build the agent ``spec`` names for ``contract``.

    Args:
        spec: the parsed spec.
        contract: the task.
        repo: the harness's full-history repository (the gold agent reads its reference there).

    Raises:
        AgentSpecError: an unusable file, or one that does not cover ``contract``.
        ContractError: the reference patch does not apply at the base (gold).
    """
    if isinstance(spec, ModelSpec):
        return _model_agent(spec, contract)
    match spec:
        case GoldSpec():
            return GoldAgent.create(contract, repo)
        case NullSpec():
            return NullAgent()
        case PredSpec():
            return PredictionsAgent.create(spec, contract)
        case CmdSpec():
            return CommandAgent(spec)
        case ScriptSpec():
            return ScriptedAgent(spec, load_script(spec.file))
        case CommitSpec():
            return CommitAgent.create(spec, contract, repo)


def _model_agent(spec: ModelSpec, contract: TransitionContract) -> Agent:
    """A model-driven agent with the contract's budgets; its key or recording checked first."""
    check_ready(spec)
    if spec.kind == "baseline":
        config = baseline.load_config(spec.config)
        return baseline.BaselineAgent(spec, config, budget_of(contract, config.samples))
    return mini.MiniAgent(spec, mini.load_config(spec), budget_of(contract))


def configuration(spec: ModelSpec) -> dict[str, Any]:
    """What a model-driven agent is configured with, for its fingerprint and the run manifest.

    Versions, model, endpoint (never a key), sampling settings, prompt templates' digests.

    Raises:
        AgentSpecError: its configuration file is unusable (or mini-swe-agent is not installed).
    """
    return baseline.configuration(spec) if spec.kind == "baseline" else mini.configuration(spec)


def fingerprint(spec: AgentSpec) -> str:
    """Return sha256 over the spec's text and the content of every file it names (hex).

    A scripted agent, a predictions file or a command's script that changed is another agent. A
    model-driven agent's fingerprint also covers its configuration as the run would record it
    (:func:`configuration`: endpoint, sampling, prompt templates' digests, agent
    versions), so a rerun under another configuration is refused.
    """
    digest = hashlib.sha256(spec.text.encode())
    for path in spec.files():
        if path.is_file():
            digest.update(path.read_bytes())
    if isinstance(spec, ModelSpec):
        digest.update(json.dumps(configuration(spec), sort_keys=True).encode())
    return digest.hexdigest()


def parse_specs(texts: Sequence[str]) -> list[AgentSpec]:
    """Parse ``--agent`` values and read the files they name, before anything is written.

    A predictions file of several models becomes one spec per model (``FILE#MODEL``); a
    scripted agent's file is read and validated.

    Raises:
        AgentSpecError: a malformed spec, an unusable file (named, with how to fix it), or one
            agent named twice.
    """
    return resolve_specs([parse_agent_spec(text) for text in texts])


def requiring_all(specs: Sequence[AgentSpec]) -> list[AgentSpec]:
    """Return ``specs`` with every predictions spec refusing a contract it has no row for."""
    return [
        s.model_copy(update={"require_all": True}) if isinstance(s, PredSpec) else s for s in specs
    ]


def resolve_specs(specs: Sequence[AgentSpec]) -> list[AgentSpec]:
    """Return ``specs`` with every file they name read, and predictions split per model.

    Raises:
        AgentSpecError: a predictions or scripted file is unusable; a model-driven agent has no
            key (``OPENAI_API_KEY``) or an unusable recording; or two specs name one agent
            (the same spec twice, or a model of a predictions file named beside the file): a
            run plans each agent once, so a repeat would be merged unseen.
    """
    resolved: list[AgentSpec] = []
    for spec in specs:
        if isinstance(spec, ScriptSpec):
            load_script(spec.file)
        if isinstance(spec, ModelSpec):
            configuration(spec)  # its configuration file read and checked
            check_ready(spec)  # its key (or recording), before any scenario is built
        if isinstance(spec, PredSpec) and spec.model is None:
            models = sorted(load_predictions(spec.file))
            if len(models) > 1:
                resolved += [spec.with_model(model) for model in models]
                continue
        resolved.append(spec)
    named: dict[tuple[str, ...], str] = {}
    for spec in resolved:
        key = _identity(spec)
        if key in named:
            also = "" if named[key] == spec.text else f" (it is {named[key]!r})"
            raise AgentSpecError(
                f"agent {spec.text!r} is named twice{also}",
                "name each agent once (--epochs N repeats every attempt)",
            )
        named[key] = spec.text
    return resolved


def _identity(spec: AgentSpec) -> tuple[str, ...]:
    """What makes ``spec`` one agent, as a tuple of strings.

    A predictions or scripted file by the file it resolves to (``./p.jsonl``, ``sub/../p.jsonl``,
    an absolute path or a link to it are one file), with the model it picks; any other agent by
    its text.
    """
    if isinstance(spec, PredSpec):
        return (spec.kind, str(spec.file.resolve()), spec.model or "")
    if isinstance(spec, ScriptSpec):
        return (spec.kind, str(spec.file.resolve()))
    return (spec.text,)
