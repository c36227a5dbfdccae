"""A built scenario's injected variants, for the embedded default (issue 24 item 5).

``scenario.toml`` may list ``[[injected]]`` tables: an injection ``kind``, the ``contract`` stem it
derives from (default ``contract``) and the ``agents`` to run on the variant (usually one robust
and one mimicking scripted agent; names from ``agents/``, then ``injected/``, or ``gold``/``null``).
:func:`with_injected` derives each with :func:`repogate.tasks.vary.vary` under ``<dest>/varied``
and returns the built scenario with the variants' contracts and agents added. Only the embedded
default calls it, so tests that build a scenario see its own contracts alone.
"""

from __future__ import annotations

import shutil

from repogate.tasks.scenarios import BuiltScenario, read_spec, shipped_ids
from repogate.tasks.vary import derived_id, vary

INJECTED_AGENTS = "injected"
"""The scenario folder holding the scripted agents only the injected variants run."""


def with_injected(built: BuiltScenario) -> BuiltScenario:
    """Return ``built`` plus its scenario's injected variants (see the module docstring).

    Raises:
        UserInputError: a kind does not apply to its contract (a scenario's own fault).
        GitError: git failed.
    """
    folder, spec = read_spec(built.name)
    if not spec.injected:
        return built
    dest = built.repo.parent
    agents_dir = dest / "agents"
    extra = sorted((folder / INJECTED_AGENTS).glob("*.toml"))
    for agent in extra:
        agents_dir.mkdir(exist_ok=True)
        shutil.copyfile(agent, agents_dir / agent.name)
    contracts = list(built.contracts)
    pairings = dict(built.pairings)
    for injection in spec.injected:
        parent = dest / f"{injection.contract}.toml"
        derived = vary(parent, injection.kind, dest / "varied", None)
        contracts.append(derived)
        pairings[str(derived)] = injection.agents
    agents = (*built.agents, *(agents_dir / a.name for a in extra))
    return built.model_copy(
        update={"contracts": tuple(contracts), "pairings": pairings, "agents": agents}
    )


def contract_ids(name: str) -> tuple[str, ...]:
    """Return the ids of the contracts ``with_injected(build_scenario(name, ...))`` holds, in order.

    Read without building (:func:`repogate.tasks.scenarios.shipped_ids`, then each injected
    variant's :func:`repogate.tasks.vary.derived_id`), so a run can check its inputs against the
    embedded default's contracts before any repository is made.

    Raises:
        UserInputError: no scenario of that name.
    """
    _, spec = read_spec(name)
    own = shipped_ids(name)
    return (*own.values(), *(derived_id(own[i.contract], i.kind) for i in spec.injected))
