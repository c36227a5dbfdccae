"""Rerun policy for failures: a failure is charged only when it reproduces; a flip is flaky.

SWE-bench runs each test once, so there a PASS_TO_PASS test that fails now and then marks even the
reference solution unresolved. A fixed number of repeats made up front (the contract's ``repeat``)
only catches a flaky test when the repeats happen to disagree, which at low failure rates they
usually do not. So reruns are triggered by the failure itself:

1. **On the candidate**: every PASS_TO_PASS id that did not pass (and is not already excluded) is
   run again, up to :data:`RERUNS` more times, stopping as soon as each has flipped. An id whose
   outcome differs from its first one in any rerun is flaky.
2. **At the base**: every id still failing on the candidate after step 1 is run again at the base
   (hidden tests applied), up to :data:`RERUNS` times, stopping as soon as each has flipped. The
   base-state check saw it pass; a failure here makes it flaky at the base.
3. **At the base-state check**: an id with the wrong base outcome (a PASS_TO_PASS test that does
   not pass, a FAIL_TO_PASS test that does not fail) is run again the same way before the task is
   called invalid.

Flaky means the outcome flips under the *same* conditions. A rerun runs the ids in question only,
never the rest of their files (:func:`selection`): cheap, but not the run where the outcome was
seen. So an id whose outcome flips alone is confirmed with the first run's selection (the graded
ids, their files whole) before it is called flaky, up to :data:`RERUNS` more times, stopping at
the first flip there (:func:`pending_again`). Only a flip under that selection is flaky; an id
that flips alone and never with the first run's selection is *order-dependent*
(:attr:`Rerun.order_dependent`): its first outcome stands and it is charged (red team: an ``add()``
wrong only when another test module is loaded failed in the graded run, passed alone, and was
excused as flaky).

Flaky ids are left out of the verdict with a :class:`Rerun` record (its outcome sequences), whatever
``repeat`` is. A rerun whose report cannot be used (a timeout, no report) ends the reruns of that
state without concluding anything: the first outcome stands.

No PASS_TO_PASS failure is rerun once a FAIL_TO_PASS test has failed (the attempt is rejected
whatever the reruns find; :func:`repogate.gates.verification.failures_to_confirm`).

The policy is data in, data out: :func:`first_outcomes` starts a state's record, :func:`pending` names
the ids to run again, :func:`seen_again` adds a rerun's outcomes, and :func:`records` closes it.
The runs themselves are the caller's (:func:`repogate.gates.verification.rerun_state`).

Cost: nothing when every graded test has the expected outcome. A real regression that reproduces
alone costs at most ``2 * RERUNS`` runs of the failing tests alone (each run still collects their
files), as before. A flaky test costs, on top of its reruns alone, usually one run of the graded
selection (it flips there at once); an order-dependent failure, ``RERUNS`` of them (a rejected
attempt). For a test that fails with probability ``p`` whatever the code, a flip alone is followed
by up to ``RERUNS`` runs with the selection, so the chance it is still charged on the candidate
stays about ``p ** (1 + RERUNS)`` (one more factor of at most 2 for the confirmation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from repogate._model import FrozenModel
from repogate.oracles.grading import Observed, observe_ids
from repogate.oracles.junit import TestOutcome, pytest4_id, volatile_key

RERUNS = 4
"""More runs, at most, of a failing id in one state (candidate or base); see the module docs."""

Seen = dict[str, tuple[Observed, ...]]
"""Each rerun id's outcomes so far in one state: the first one, then one per rerun, in order."""


def selection(test_ids: Sequence[str]) -> list[str]:
    """Return the lines that select ``test_ids`` for a rerun (the harness plugin's selection).

    An id is selected as it is spelled: a node id, or one cut at a blank as SWE-bench's datasets
    cut them (the plugin matches both). An id pytest cannot be asked for by name selects its
    whole file instead: one holding a run-varying value
    (:func:`~repogate.oracles.junit.volatile_key`: the value differs in the next run) or a path
    parameter SWE-bench's parser shortened (``[/c.py]``, see
    :func:`~repogate.oracles.junit.swebench_forms`).
    """
    lines: list[str] = []
    for test_id in test_ids:
        shortened = re.search(r"\[/[^/]*\]$", test_id) is not None
        whole_file = volatile_key(test_id) != test_id or shortened
        lines.append(test_id.split("::", 1)[0] if whole_file else pytest4_id(test_id))
    return list(dict.fromkeys(lines))


class Rerun(FrozenModel):
    """The record of one id's reruns in one state.

    Attributes:
        test_id: the id as the contract names it.
        state: ``candidate`` or ``base`` (base plus hidden tests).
        outcomes: the first outcome, then one per rerun alone, in order.
        flaky: the outcome flipped under the first run's selection, so the id is left out of the
            verdict.
        again: the outcomes of the reruns with the first run's selection (made only once the id
            flipped alone), in order.
        order_dependent: it flipped alone, never with the first run's selection: not flaky, its
            first outcome stands (it depends on what else runs in the session).
    """

    test_id: str
    state: Literal["candidate", "base"]
    outcomes: tuple[Observed, ...]
    flaky: bool
    again: tuple[Observed, ...] = ()
    order_dependent: bool = False


def first_outcomes(first: Mapping[str, Observed]) -> Seen:
    """Start a state's rerun record: each id of ``first`` with the outcome in question."""
    return {t: (o,) for t, o in first.items()}


def pending(seen: Mapping[str, Sequence[Observed]]) -> list[str]:
    """Return the ids of ``seen`` still to run again (none has flipped yet), in its order."""
    return [t for t, o in seen.items() if len(set(o)) == 1]


def seen_again(
    seen: Mapping[str, tuple[Observed, ...]], outcomes: Mapping[str, TestOutcome]
) -> Seen:
    """Return ``seen`` with each :func:`pending` id's outcome in a rerun's ``outcomes`` added.

    Args:
        seen: the record so far.
        outcomes: node id -> outcome of one usable rerun of the :func:`pending` ids (a rerun
            that gave no usable report ends the reruns instead: its state's record stands).
    """
    ids = pending(seen)
    observed, _matched, _invalid = observe_ids(outcomes, ids)
    return {t: (*o, observed[t]) if t in ids else o for t, o in seen.items()}


def flipped(seen: Mapping[str, Sequence[Observed]]) -> list[str]:
    """Return the ids of ``seen`` whose outcome flipped (differs from the first), in its order."""
    return [t for t, o in seen.items() if len(set(o)) > 1]


def pending_again(
    seen: Mapping[str, Sequence[Observed]], again: Mapping[str, Sequence[Observed]]
) -> list[str]:
    """Return the ids that flipped alone and not yet with the first run's selection, in order.

    Args:
        seen: each id's first outcome, then its outcomes alone (:func:`seen_again`).
        again: each id's outcomes on reruns with the first run's selection so far (ids absent
            have had none).
    """
    return [t for t in flipped(seen) if all(o == seen[t][0] for o in again.get(t, ()))]


def seen_with_selection(
    seen: Mapping[str, Sequence[Observed]],
    again: Mapping[str, tuple[Observed, ...]],
    outcomes: Mapping[str, TestOutcome],
) -> Seen:
    """Return ``again`` with each :func:`pending_again` id's outcome in ``outcomes`` added.

    Args:
        seen: the record alone (first outcome, then the reruns alone).
        again: the outcomes with the first run's selection so far.
        outcomes: node id -> outcome of one usable rerun with the first run's selection.
    """
    ids = pending_again(seen, again)
    observed, _matched, _invalid = observe_ids(outcomes, ids)
    return {**again, **{t: (*again.get(t, ()), observed[t]) for t in ids}}


def records(
    seen: Mapping[str, Sequence[Observed]],
    state: Literal["candidate", "base"],
    again: Mapping[str, Sequence[Observed]] | None = None,
) -> tuple[Rerun, ...]:
    """Return one :class:`Rerun` per id of ``seen``, in its order.

    Args:
        seen: each id's first outcome, then its outcomes on reruns.
        state: the state's name in the records.
        again: the outcomes of the ids that flipped in ``seen`` on reruns with the first run's
            selection (:func:`seen_with_selection`); an id flipping in ``seen`` is ``flaky`` only
            when one of these differs from its first outcome, ``order_dependent`` when some were
            made and none does. None when the reruns of ``seen`` already ran with the first run's
            selection: then any flip is flaky.
    """
    out: list[Rerun] = []
    for t, o in seen.items():
        flips = len(set(o)) > 1
        same = () if again is None else tuple(again.get(t, ()))
        flaky = flips and (again is None or any(x != o[0] for x in same))
        out.append(
            Rerun(
                test_id=t,
                state=state,
                outcomes=tuple(o),
                flaky=flaky,
                again=same,
                order_dependent=flips and bool(same) and not flaky,
            )
        )
    return tuple(out)


def flaky_ids(records: Sequence[Rerun]) -> set[str]:
    """Return the ids the records found flaky."""
    return {r.test_id for r in records if r.flaky}


def describe(records: Sequence[Rerun]) -> str:
    """Return one line naming each flaky id with its outcomes; empty when none flipped.

    Example: ``flips on reruns: t.py::test_x (base: passed, failed)``.
    A record that flipped alone and never with the first run's selection is said too, after:
    ``t.py::test_y fails with the whole selection, passes alone (order-dependent on the
    candidate: failed, passed; with the selection: failed, failed)``.
    """
    flips = [f"{r.test_id} ({r.state}: {', '.join(r.outcomes)})" for r in records if r.flaky]
    said = ["flips on reruns: " + ", ".join(flips)] if flips else []
    said += [
        f"{r.test_id} {_ORDER_WORDS[r.outcomes[0] == 'passed']} (order-dependent on the "
        f"{r.state}: {', '.join(r.outcomes)}; with the selection: {', '.join(r.again)})"
        for r in records
        if r.order_dependent
    ]
    return "; ".join(said)


_ORDER_WORDS = {
    False: "fails with the whole selection, passes alone",
    True: "passes with the whole selection, fails alone",
}
