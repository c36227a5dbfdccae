"""Receipts: what one gate observed, bound to one candidate state.

A gate returns an :class:`Observation` (named checks, details, artifacts). :func:`observe` is the one
wrapper that turns a gate call into a :class:`Receipt`: it times the call, binds the result to a
state id, and turns a crash into an ``error`` receipt carrying the exception's type and message.
Gates never time themselves or catch their own crashes.

A receipt renders as an in-toto Statement v1 (https://github.com/in-toto/attestation, spec v1):
the subject is the candidate tree and the patch digest, the predicate type names the gate.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, Field, StrictFloat, model_validator

from repogate import clock
from repogate._interrupted import interrupt_came
from repogate._model import FrozenModel, SchemaVersion
from repogate._version import __version__
from repogate.state import CandidateState, sha256_hex
from repogate.vocabulary import CheckName, ErrorKind, GateId, GradedTree

Status = Literal["passed", "failed", "error", "skipped"]
IN_TOTO_STATEMENT = "https://in-toto.io/Statement/v1"
PREDICATE_BASE = "https://repogate.dev/receipt"
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: str) -> str:
    r"""``text`` on one line with every invisible character escaped as Python escapes it.

    Check details and crash messages quote names untrusted code chose (file names, test ids,
    exception text). Control characters (Unicode category Cc: newline, ESC, DEL, NEL), format
    characters (Cf: bidirectional overrides, zero-width characters) and line or paragraph
    separators (Zl, Zp) become ``\n``, ``\x1b``, ``\u202e``..., so a name cannot split a
    line, restyle a terminal or reorder what a reader sees; a lone surrogate (Cs: a byte of a
    non-UTF-8 file name, as ``os.fsdecode`` keeps it) becomes ``\udcff``, so printing never
    fails to encode it. Printable text, accents and other
    scripts are kept. Idempotent: the result has no invisible character left.
    """
    if text.isprintable():
        return text
    return "".join(_escape(char) for char in text)


def _escape(char: str) -> str:
    if unicodedata.category(char) not in _INVISIBLE:
        return char
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


VisibleText = Annotated[str, AfterValidator(visible)]
"""A string kept on one visible line (:func:`visible`); for text quoting untrusted names."""


class Check(FrozenModel):
    """One named hard check a gate observed: ``passed``, ``failed``, ``error`` or ``skipped``.

    ``error`` means the check could not be decided (an evaluator or environment fault); it is
    reported apart and never scored as the agent's failure. Its ``kind`` says which fault
    (:data:`repogate.vocabulary.ERROR_KINDS`), set where the error happens, so the report never
    reads it from the wording of ``detail``. Every errored check of a decision records a kind
    (:func:`repogate.decision.decide`); one stored before kinds existed has None.

    Raises:
        pydantic.ValidationError: ``kind`` given for a status other than ``error``.
    """

    name: CheckName
    status: Status
    detail: VisibleText = ""
    kind: ErrorKind | None = None

    @model_validator(mode="after")
    def _kind_only_for_errors(self) -> Check:
        if self.kind is not None and self.status != "error":
            raise ValueError(f"check {self.name}: an error kind on a {self.status} check")
        return self

    @classmethod
    def error(cls, name: CheckName, detail: str, kind: ErrorKind) -> Check:
        """An ``error`` check of ``kind``: ``name`` could not be decided, ``detail`` says why."""
        return cls(name=name, status="error", detail=detail, kind=kind)

    @property
    def passed(self) -> bool:
        """True only for ``passed``."""
        return self.status == "passed"


class Artifact(FrozenModel):
    """A file a gate produced or read as evidence: its path in the attempt folder and sha256."""

    path: str
    sha256: str

    @classmethod
    def of(cls, path: Path, root: Path) -> Artifact:
        """Describe ``path`` (a file under ``root``) by its relative path and sha256."""
        return cls(path=str(path.relative_to(root)), sha256=sha256_hex(path.read_bytes()))


class Crash(FrozenModel):
    """An exception kept as data: its type and message (at most 4,000 characters).

    The one error record of repogate's evidence: a receipt's ``crash`` (its gate raised) and a
    stored attempt's ``crash`` (the attempt raised outside any gate, or its worker died) are both
    this. ``str()`` gives ``Type: message``, the form run folders of store schema 2 hold.
    """

    type: VisibleText
    message: VisibleText

    @classmethod
    def of(cls, exc: BaseException) -> Crash:
        """Record ``exc``: its class name and its message, cut to 4,000 characters."""
        return cls(type=type(exc).__name__, message=str(exc)[:4000])

    @classmethod
    def parse(cls, text: str) -> Crash:
        """Read the ``Type: message`` string an older store kept; text without a type is a message."""
        kind, sep, message = text.partition(": ")
        if sep and kind.isidentifier():
            return cls(type=kind, message=message)
        return cls(type="", message=text)

    def __str__(self) -> str:
        return f"{self.type}: {self.message}" if self.type else self.message


class Observation(FrozenModel):
    """What a gate function returns: its checks, free-form details and artifacts.

    ``tree`` names the tree gate V graded (None for every other gate); the receipt keeps it.
    """

    checks: tuple[Check, ...] = ()
    details: dict[str, Any] = Field(default_factory=dict)
    artifacts: tuple[Artifact, ...] = ()
    tree: GradedTree | None = None


class Receipt(FrozenModel):
    """What one gate observed, bound to one state id.

    Attributes:
        schema_version: version of this record (1).
        gate: the gate's id (:data:`repogate.vocabulary.GATES` documents each).
        status: ``error`` if any check errored or the gate crashed, else ``failed`` if any check
            failed, else ``passed``; ``skipped`` when there were no checks.
        checks: the named checks.
        state_id: the :attr:`CandidateState.state_id` this observation belongs to.
        started_at: wall time the gate started (UTC).
        duration_s: how long it ran, in seconds.
        evaluator_version: the repogate version that made it.
        artifacts: evidence files with their sha256.
        details: what the gate saw, free-form JSON.
        crash: the exception, when the gate raised.
        tree: the tree gate V graded (``candidate`` or ``merged``); None for other gates. Code
            reads it through :attr:`graded_tree`, never from ``details``.
    """

    schema_version: SchemaVersion = 1
    gate: GateId
    status: Status
    checks: tuple[Check, ...] = ()
    state_id: str
    started_at: datetime
    duration_s: StrictFloat = 0.0
    evaluator_version: str = __version__
    artifacts: tuple[Artifact, ...] = ()
    details: dict[str, Any] = Field(default_factory=dict)
    crash: Crash | None = None
    tree: GradedTree | None = None

    @property
    def graded_tree(self) -> GradedTree | None:
        """The tree gate V graded, None for other gates.

        A receipt written before :attr:`tree` existed kept the label in ``details["tree"]`` only;
        for it (and only when the label is one of :data:`~repogate.vocabulary.GradedTree`'s) that
        is read instead: the one place the old record is read.
        """
        if self.tree is not None or self.gate != "V":
            return self.tree
        old = self.details.get("tree")
        return "candidate" if old == "candidate" else "merged" if old == "merged" else None

    def to_in_toto(self, state: CandidateState) -> dict[str, Any]:
        """Render as an in-toto Statement v1 whose subject is ``state``'s tree and patch digest."""
        subject: list[dict[str, Any]] = [
            {"name": "patch", "digest": {"sha256": state.patch_digest}},
        ]
        if state.candidate_tree:
            subject.insert(
                0, {"name": "candidate-tree", "digest": {"gitTree": state.candidate_tree}}
            )
        return {
            "_type": IN_TOTO_STATEMENT,
            "subject": subject,
            "predicateType": f"{PREDICATE_BASE}/{self.gate}/v1",
            "predicate": {"state": state.model_dump(mode="json"), **self.model_dump(mode="json")},
        }


def status_of(checks: tuple[Check, ...]) -> Status:
    """Fold check statuses: any ``error`` wins, then any ``failed``, then ``passed``."""
    statuses = {c.status for c in checks}
    for status in ("error", "failed", "passed"):
        if status in statuses:
            return status
    return "skipped"


Seen = TypeVar("Seen", bound=Observation)


def observed(gate: GateId, state_id: str, call: Callable[[], Seen]) -> tuple[Receipt, Seen | None]:
    """Run one gate call, turn whatever happens into a receipt, and keep what the gate returned.

    A gate may return a subclass of :class:`Observation` carrying typed fields a later phase
    reads (the environment it built, test outcomes); the receipt keeps only the checks, details
    and artifacts.

    Args:
        gate: the gate's name.
        state_id: the state the observation is bound to.
        call: the gate, its arguments already bound.

    Returns:
        The receipt, and the gate's observation (None when it crashed). A crash becomes status
        ``error`` with the exception type and message. Never raises for an ``Exception`` raised
        inside ``call``.
    """
    started = clock.now()
    t0 = clock.monotonic()
    try:
        seen = call()
    except Exception as exc:  # the one place a gate's crash becomes data
        if interrupt_came():  # the user's Ctrl-C, made an error by a library: not the gate's
            raise KeyboardInterrupt from exc
        crashed = Receipt(
            gate=gate,
            status="error",
            state_id=state_id,
            started_at=started,
            duration_s=clock.monotonic() - t0,
            crash=Crash.of(exc),
        )
        return crashed, None
    receipt = Receipt(
        gate=gate,
        status=status_of(seen.checks),
        checks=seen.checks,
        state_id=state_id,
        started_at=started,
        duration_s=clock.monotonic() - t0,
        artifacts=seen.artifacts,
        details=seen.details,
        tree=seen.tree,
    )
    return receipt, seen


def observe(gate: GateId, state_id: str, call: Callable[[], Observation]) -> Receipt:
    """Run one gate call and turn whatever happens into a receipt (:func:`observed`'s receipt)."""
    return observed(gate, state_id, call)[0]
