"""Agents under evaluation, chosen by spec string.

===================  ==========================================================================
spec                 agent
===================  ==========================================================================
``gold``             applies the contract's reference patch
``null``             changes nothing
``predictions:FILE`` applies ``model_patch`` from SWE-bench predictions (JSON or JSONL); a
                     file of several models is one agent per model (``FILE#MODEL``)
``cmd:COMMAND``      runs any command-line agent in its workspace under the sandbox
``scripted:FILE``    canned edits from a TOML file (shipped for tests and demos)
===================  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from repogate.agents.command import CommandAgent, split_command
from repogate.agents.gold import GoldAgent, NullAgent
from repogate.agents.predictions import PredictionsAgent, per_model_specs, split_arg
from repogate.agents.scripted import ScriptedAgent
from repogate.contract import TransitionContract
from repogate.errors import AgentSpecError
from repogate.protocols import Agent

Factory = Callable[[str, TransitionContract, Path], Agent]

AGENTS: dict[str, Factory] = {
    "gold": GoldAgent.create,
    "null": NullAgent.create,
    "predictions": PredictionsAgent.create,
    "cmd": CommandAgent.create,
    "scripted": ScriptedAgent.create,
}


def make_agent(spec: str, contract: TransitionContract, repo: Path) -> Agent:
    """Build the agent ``spec`` names for ``contract``.

    Args:
        spec: ``gold``, ``null``, ``predictions:FILE``, ``cmd:COMMAND`` or ``scripted:FILE``.
        contract: the task.
        repo: the harness's full-history repository (the gold agent reads its reference there).

    Raises:
        AgentSpecError: unknown kind, or an unusable file; the message lists the valid kinds.
    """
    kind, _, arg = spec.partition(":")
    if kind not in AGENTS:
        raise AgentSpecError(
            f"unknown agent {spec!r}",
            "use one of: gold, null, predictions:FILE, cmd:'COMMAND', scripted:FILE",
        )
    if kind in ("predictions", "cmd", "scripted") and not arg:
        raise AgentSpecError(f"agent {spec!r} needs an argument", f"write it as {kind}:...")
    return AGENTS[kind](arg, contract, repo)


def expand_specs(specs: Sequence[str]) -> list[str]:
    """Return ``specs`` with each predictions file of several models split into one per model.

    Raises:
        AgentSpecError: a predictions file is unusable.
    """
    expanded: list[str] = []
    for spec in specs:
        kind, _, arg = spec.partition(":")
        expanded += per_model_specs(arg) if kind == "predictions" and arg else [spec]
    return expanded


def agent_name(spec: str) -> str:
    """Return a short name for ``spec``, for tables and progress labels.

    ``gold`` and ``null`` as they are; a scripted or predictions file's stem (``edits-tests``),
    or the model a ``predictions:FILE#MODEL`` picks;
    ``cmd:`` and the base name of the command's first word (``cmd:./fix.sh --x`` gives
    ``cmd:fix.sh``). Never raises: a command that cannot be split is cut at white space.
    """
    kind, _, arg = spec.partition(":")
    if kind == "predictions" and arg:
        path, model = split_arg(arg)
        return model if model is not None else path.stem
    if kind == "scripted" and arg:
        return Path(arg).stem
    if kind == "cmd" and arg.strip():
        try:
            first = split_command(arg)[0]
        except AgentSpecError:
            first = arg.split()[0]
        return f"cmd:{Path(first).name or first}"
    return kind
