"""Acceptance with and without each injection (``repogate tasks vary``), paired by task.

A derived task's id is ``<parent>+<kind>`` (``<parent>+ablate-<path>`` for an ablation). For
each kind and agent, the tasks whose parent and derived variant both have scored attempts in the
report are paired; each side's per-task rate is the mean over its scored epochs (accepted or
rejected; errors are not scored, as in every rate of the report). ``lost`` counts tasks accepted
more often without the injection, ``gained`` the reverse.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from repogate._model import FrozenModel
from repogate.vocabulary import INJECTIONS

SCORED = ("accepted", "rejected")


class InjectionPair(FrozenModel):
    """One kind and agent: acceptance without and with the injection over the paired tasks.

    Attributes:
        kind: the injection kind, or ``ablate-<path>``.
        agent: the agent's short name.
        tasks: the paired tasks.
        accepted_without: the sum over paired tasks of the parent's acceptance rate.
        accepted_with: the same for the derived tasks.
        lost: paired tasks accepted more often without the injection.
        gained: paired tasks accepted more often with it.
    """

    kind: str
    agent: str
    tasks: int
    accepted_without: float
    accepted_with: float
    lost: int
    gained: int


def pairs_line(pairs: Iterable[InjectionPair]) -> str:
    """One line per kind and agent: ``stale-lockfile, gold: 1/1 -> 0/1 accepted (lost 1)``."""
    return "\n".join(
        f"{p.kind}, {p.agent}: {p.accepted_without:g}/{p.tasks} -> {p.accepted_with:g}/{p.tasks} "
        f"accepted without -> with the injection (lost {p.lost}, gained {p.gained})"
        for p in pairs
    )


def split_derived(task_id: str) -> tuple[str, str] | None:
    """Return (parent id, kind) of a derived task id, or None for an original task."""
    parent, plus, kind = task_id.rpartition("+")
    if not plus or not parent or not (kind in INJECTIONS or kind.startswith("ablate-")):
        return None
    return parent, kind


def injection_pairs(attempts: Iterable[tuple[str, str, str]]) -> tuple[InjectionPair, ...]:
    """Pair each derived task with its parent, per agent (see the module docstring).

    Args:
        attempts: (contract id, agent, outcome) of every attempt; unfinished ones as any
            outcome that is not ``accepted`` or ``rejected``.
    """
    rates: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for contract, agent, outcome in attempts:
        if outcome in SCORED:
            rates[(contract, agent)].append(outcome == "accepted")
    groups: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for (contract, agent), seen in sorted(rates.items()):
        split = split_derived(contract)
        parent = rates.get((split[0], agent)) if split else None
        if split is None or not parent:
            continue
        groups[(split[1], agent)].append((sum(parent) / len(parent), sum(seen) / len(seen)))
    return tuple(
        InjectionPair(
            kind=kind,
            agent=agent,
            tasks=len(pairs),
            accepted_without=sum(a for a, _ in pairs),
            accepted_with=sum(b for _, b in pairs),
            lost=sum(a > b for a, b in pairs),
            gained=sum(b > a for a, b in pairs),
        )
        for (kind, agent), pairs in sorted(groups.items())
    )
