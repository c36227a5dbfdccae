"""The differential oracle: call the candidate's and the reference's versions of each changed function.

Hypothesis (https://hypothesis.readthedocs.io) draws inputs for each function
(:func:`repogate.oracles.functions.strategy_for`), and each input is sent to two call servers
(:mod:`repogate.oracles._differential_worker`), one per state, each a separate sandboxed process
whose working folder is its own tree (:class:`repogate.sandbox._session.Session`): the candidate's
and the reference's code never share a process, and neither can write a file the other reads.
The outcomes compared are the result (a canonical description), the exception's type, and the
arguments after the call (mutation). Before a difference counts, the reference is asked again:
one that disagrees with itself (a clock, a random draw) makes the function ``not applicable``;
both servers run with one fixed hash seed, so set and dict orders agree between the processes. On the first difference Hypothesis shrinks the input; the
shortest distinguishing input is recorded with both outcomes, never a bare flag (after PatchDiff,
arXiv 2503.15223, which compares a patch's behaviour with the reference's the same way).

The candidate giving no answer where the reference gave one (its server ended, hung past the
call budget, answered out of step, or its module does not import in the worker) ``differs``: the
reference answered the same question in the same budget, so the silence is the candidate's
behaviour, and a wrong candidate cannot turn its difference into the evaluator's ``timed out``
(red team, 2026-12-02). Every other failure to compare is an outcome with its reason, never a
crash: a function that does not import in the reference, is not deterministic (the reference
disagrees with itself on one input), or cannot be called
(:class:`~repogate.oracles.functions.Target`) is ``not applicable``; a reference call past its
budget (a hang) or a reference server that dies (a fork that kills it, an exit) is ``timed out``
(the server is restarted for the next function); a Hypothesis health-check failure is ``not
applicable`` naming the check.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn, TypedDict

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import errors as hypothesis_errors
from hypothesis.configuration import set_hypothesis_home_dir

from repogate._counted import counted
from repogate._model import FrozenModel
from repogate.oracles.functions import Target, strategy_for
from repogate.sandbox import Session

Outcome = Literal["same", "differs", "not applicable", "timed out"]

_DETERMINISM_PROBES = 3


class FunctionOutcome(FrozenModel):
    """What comparing one function found.

    Attributes:
        function: ``module.qualname``.
        outcome: ``same``, ``differs``, ``not applicable`` or ``timed out``.
        reason: why it was not compared (``not applicable``, ``timed out``); for ``same``, why
            the agreement says nothing about return values (every input raised in both states).
        examples: inputs called in both states.
        input: the shortest distinguishing input, as a call (``differs`` only).
        candidate: the candidate's outcome on it.
        reference: the reference's outcome on it.
        candidate_returned: of the ``examples`` inputs, how many the candidate returned from.
        candidate_raised: how many raised in the candidate.
        reference_returned: how many the reference returned from (its first answer to each).
        reference_raised: how many raised in the reference.
    """

    function: str
    outcome: Outcome
    reason: str = ""
    examples: int = 0
    input: str = ""
    candidate: str = ""
    reference: str = ""
    candidate_returned: int = 0
    candidate_raised: int = 0
    reference_returned: int = 0
    reference_raised: int = 0


class _Counts(TypedDict):
    examples: int
    candidate_returned: int
    candidate_raised: int
    reference_returned: int
    reference_raised: int


class _Stop(Exception):
    """A call could not be compared (hang, dead server, nondeterminism): stop this function."""


class _Differs(Exception):
    """The two states disagreed on one input (Hypothesis shrinks it)."""


def _halt() -> NoReturn:
    # One raising line: Hypothesis tells failures apart by where they were raised, and a stop
    # seen again on replay from another line would read as a flaky test.
    raise _Stop


class Server:
    """One state's call server, restarted when it died (after a hang or an exit).

    Args:
        start: opens a new :class:`Session` of the server for this state.
        call_timeout_s: the budget of one call, in seconds.
    """

    def __init__(self, start: Callable[[], Session], call_timeout_s: float) -> None:
        self._start = start
        self._session: Session | None = None
        self._timeout = call_timeout_s
        self._next = 0

    def ask(self, request: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
        """Send ``request``; return the answer (None when there is none) and why there is none."""
        if self._session is None or not self._session.alive:
            if self._session is not None:
                self._session.close()
            self._session = self._start().__enter__()
        self._next += 1
        line = self._session.ask(json.dumps({**request, "id": self._next}), self._timeout)
        if line is None:
            return None, self._session.failure
        try:
            answer = json.loads(line)
        except ValueError:
            return None, "an answer that is not JSON"
        if not isinstance(answer, dict) or answer.get("id") != self._next:
            self._session.close()  # the stream is out of step: start afresh next time
            return None, "an answer out of step with its question"
        return answer, ""

    def close(self) -> None:
        """Stop the server."""
        if self._session is not None:
            self._session.close()
            self._session = None


@dataclass(frozen=True)
class _Outcome:
    """What one call did, as compared: the result or exception, and the arguments after it."""

    kind: str  # returned, raised
    what: str  # the result's description, or the exception's qualified type
    args: str  # the arguments after the call: ``(1, value=[])``
    args_before: str = field(default="", compare=False)  # the same input in both states

    def said(self, target: Target) -> str:
        """``returned 0 and changed its arguments to pkg.mod.f(items=[])``, as a person reads it.

        The arguments are named only when the call changed them (mutation), written as the call.
        """
        text = f"{self.kind} {self.what}"
        if self.args != self.args_before:
            text += f" and changed its arguments to {target.name}{self.args}"
        return text


def _outcome(answer: Mapping[str, Any]) -> _Outcome:
    returned = answer.get("kind") == "returned"
    return _Outcome(
        kind="returned" if returned else "raised",
        what=str(answer.get("value" if returned else "type")),
        args=str(answer.get("args")),
        args_before=str(answer.get("args_before")),
    )


def _call_text(target: Target, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{target.name}({', '.join(parts)})"


@dataclass
class _Run:
    target: Target
    servers: tuple[Server, Server]
    examples: int = 0
    stopped: str = ""
    stop_kind: Outcome = "not applicable"
    found: list[tuple[str, str, str]] = field(default_factory=list)
    answered: _Outcome | None = None  # the reference's outcome of the call under way
    returned: list[int] = field(default_factory=lambda: [0, 0])  # per state: candidate, reference
    raised: list[int] = field(default_factory=lambda: [0, 0])

    def counts(self) -> _Counts:
        """The inputs that returned and raised per state, as :class:`FunctionOutcome` fields."""
        return {
            "examples": self.examples,
            "candidate_returned": self.returned[0],
            "candidate_raised": self.raised[0],
            "reference_returned": self.returned[1],
            "reference_raised": self.raised[1],
        }

    def call(self, which: int, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> _Outcome:
        request = {
            "op": "call",
            "module": self.target.module,
            "qualname": self.target.qualname,
            "args": repr(args),
            "kwargs": repr(dict(kwargs)),
        }
        answer, why = self.servers[which].ask(request)
        state = ("candidate", "reference")[which]
        if answer is None or answer.get("kind") not in ("returned", "raised"):
            detail = why or str((answer or {}).get("message", "no answer"))
            call = _call_text(self.target, args, kwargs)
            if which == 0 and self.answered is not None:
                # the reference answered this very call in the same budget: the candidate's
                # silence (its server ended, hung, refused) is its behaviour, not the evaluator's
                self.found.append(
                    (call, f"gave no answer ({detail})", self.answered.said(self.target))
                )
                self.stopped = f"the candidate's call server: {detail} on {call}"
                _halt()
            self.stopped = f"the {state}'s call server: {detail} on {call}"
            self.stop_kind = (
                "timed out" if "timed out" in detail or "ended" in detail else "not applicable"
            )
            _halt()
        return _outcome(answer)

    def body(self, drawn: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        if self.stopped:
            _halt()
        args, kwargs = drawn
        self.answered = None
        reference = self.call(1, args, kwargs)
        if self.examples < _DETERMINISM_PROBES and self.call(1, args, kwargs) != reference:
            call = _call_text(self.target, args, kwargs)
            self.stopped = f"not deterministic: the reference disagrees with itself on {call}"
            _halt()
        self.answered = reference
        candidate = self.call(0, args, kwargs)
        self.examples += 1
        for which, key in ((0, candidate), (1, reference)):
            (self.returned if key.kind == "returned" else self.raised)[which] += 1
        if candidate != reference and self.call(1, args, kwargs) != reference:
            # a clock, a random draw, an address: the reference disagrees with itself here
            call = _call_text(self.target, args, kwargs)
            self.stopped = f"not deterministic: the reference gives two results for {call}"
            _halt()
        if candidate != reference:
            self.found.append(
                (
                    _call_text(self.target, args, kwargs),
                    candidate.said(self.target),
                    reference.said(self.target),
                )
            )
            raise _Differs


def compare_function(
    target: Target,
    servers: tuple[Server, Server],
    literals: Sequence[Any],
    named: Mapping[str, str],
    max_examples: int,
) -> FunctionOutcome:
    """Compare ``target`` in the candidate (``servers[0]``) and the reference (``servers[1]``).

    Returns:
        The outcome; ``differs`` carries the shortest distinguishing input Hypothesis found.
    """
    if target.not_applicable:
        return FunctionOutcome(
            function=target.name, outcome="not applicable", reason=target.not_applicable
        )
    probe = {"op": "probe", "module": target.module, "qualname": target.qualname}
    failures: list[tuple[str, str, str]] = []  # (state, reason, the server's own why)
    for which, state in ((1, "reference"), (0, "candidate")):
        answer, why = servers[which].ask(probe)
        if answer is None or answer.get("kind") != "ok":
            failures.append((state, why or str((answer or {}).get("message", "")), why))
            break
    if failures and failures[0][0] == "candidate":  # the reference imports it: the candidate's
        return FunctionOutcome(
            function=target.name,
            outcome="differs",
            input=f"import {target.name}",
            candidate=f"gave no answer (cannot be imported: {failures[0][1]})",
            reference="imports it",
        )
    if failures:
        _, reason, why = failures[0]
        return FunctionOutcome(
            function=target.name,
            outcome="timed out" if "timed out" in why else "not applicable",
            reason=f"cannot be imported in the reference: {reason}",
        )
    run = _Run(target, servers)

    def check(drawn: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        run.body(drawn)

    test = settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=(HealthCheck.too_slow,),
    )(given(strategy_for(target, literals, named))(check))
    name = target.name
    try:
        with tempfile.TemporaryDirectory(prefix="repogate-hypothesis-") as home:
            # Hypothesis keeps caches under its home folder, by default the current one: the
            # user's. A private one per function, removed after.
            set_hypothesis_home_dir(home)
            try:
                test()
            finally:
                set_hypothesis_home_dir(None)
    except (_Differs, _Stop):
        pass
    except hypothesis_errors.FailedHealthCheck as exc:
        reason = f"Hypothesis health check failed: {str(exc).splitlines()[0]}"
        return FunctionOutcome(function=name, outcome="not applicable", reason=reason)
    except hypothesis_errors.HypothesisException as exc:  # Flaky, Unsatisfiable ...
        if not (run.found or run.stopped):  # else what was seen before it is the outcome
            reason = f"not deterministic or not testable (Hypothesis {type(exc).__name__})"
            return FunctionOutcome(function=name, outcome="not applicable", reason=reason)
    if run.found:  # Hypothesis replays the shrunk input last
        shown, candidate, reference = run.found[-1]
        return FunctionOutcome(
            function=name,
            outcome="differs",
            input=shown,
            candidate=candidate,
            reference=reference,
            **run.counts(),
        )
    if run.stopped:
        return FunctionOutcome(
            function=name, outcome=run.stop_kind, reason=run.stopped, **run.counts()
        )
    said = ""
    if run.examples and not (run.returned[0] or run.returned[1]):
        said = (
            f"all {counted(run.examples, 'input')} raised before returning on both sides: "
            "the comparison says nothing about return values"
        )
    return FunctionOutcome(function=name, outcome="same", reason=said, **run.counts())
