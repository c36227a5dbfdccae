"""The ``predictions:FILE`` agent: SWE-bench predictions, JSON (a list or an id-keyed object) or JSONL.

Each prediction has the keys ``instance_id``, ``model_name_or_path`` and ``model_patch`` (the
SWE-bench harness's format); ``instance_id`` is matched to the contract id. A file holding several
models is several agents, one per model (``predictions:FILE#MODEL``, named by the model).

A contract the file has no row for is that agent's empty patch (status ``no_prediction``): not
resolved, not accepted, and counted, as SWE-bench's harness counts a missing prediction
(``swebench/harness/reporting.py``: ``empty_patch_ids``, and the resolved rate's denominator is
every instance). ``run --require-all-predictions`` refuses such a run instead, as soon as the run's
contract ids are known and before any repository is read (:func:`require_predictions`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError, field_validator

from repogate._counted import listed
from repogate._files import read_text
from repogate._model import ForeignModel
from repogate._problems import every_problem
from repogate.agent_spec import AgentSpec, PredSpec
from repogate.agents.gold import apply_as_proposal
from repogate.contract import TransitionContract
from repogate.errors import AgentSpecError
from repogate.protocols import Proposal, TaskView
from repogate.receipt import visible
from repogate.sandbox import SandboxPolicy


class Prediction(ForeignModel):
    """One SWE-bench prediction row (other keys a harness or agent adds are ignored)."""

    instance_id: str
    model_name_or_path: str
    model_patch: str | None

    @field_validator("instance_id", "model_name_or_path")
    @classmethod
    def _shown_as_written(cls, value: str) -> str:
        """Names reach tables and progress lines: no control or invisible character."""
        if visible(value) != value:
            raise ValueError(f"{visible(value)!r} holds control or invisible characters")
        return value

    @field_validator("model_patch")
    @classmethod
    def _unicode_text(cls, value: str | None) -> str | None:
        """A patch is applied as UTF-8 bytes: a lone surrogate cannot be."""
        if value is not None:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("not Unicode text (a lone surrogate)") from None
        return value


def _rows(path: Path) -> list[Any]:
    text = read_text(path, "predictions file", AgentSpecError, "give a .json or .jsonl file")
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, a 5000-digit number, nesting
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        raise AgentSpecError(
            f"predictions file {path} is not JSON: {why}", "fix the JSON"
        ) from None
    if isinstance(data, dict):
        return list(data.values())
    if isinstance(data, list):
        return data
    raise AgentSpecError(
        f"predictions file {path} holds {type(data).__name__}", "give a list of rows"
    )


def load_predictions(path: Path) -> dict[str, dict[str, Prediction]]:
    """Read predictions keyed by ``model_name_or_path``, then by ``instance_id``.

    Raises:
        AgentSpecError: unreadable file; a row that is not an object or lacks a required string
            key (row number and key named); one model giving an ``instance_id`` twice (both
            rows named).
    """
    found: dict[str, dict[str, Prediction]] = {}
    rows: dict[tuple[str, str], int] = {}
    for number, row in enumerate(_rows(path), start=1):
        try:
            prediction = Prediction.model_validate(row)
        except ValidationError as exc:
            raise AgentSpecError(
                f"predictions file {path}, row {number}: {every_problem(exc, Prediction)}",
                "each row needs instance_id, model_name_or_path and model_patch (strings)",
            ) from None
        model, instance = prediction.model_name_or_path, prediction.instance_id
        first = rows.setdefault((model, instance), number)
        if first != number:
            raise AgentSpecError(
                f"predictions file {path} gives instance_id {instance!r} of model {model!r} "
                f"twice, rows {first} and {number}",
                "keep one row per model and instance",
            )
        found.setdefault(model, {})[instance] = prediction
    return found


SHOWN = 5
"""How many instance ids or model names a refusal names before ``and N more``."""
SHOWN_CHARS = 80
"""Characters a name of the file is cut to in a refusal (``...`` at the end when cut)."""


def shown_names(names: Iterable[str]) -> str:
    """Return the first :data:`SHOWN` of ``names`` sorted, each cut, then how many more.

    A predictions file's ids and model names are the model's to choose (red team rt33: a
    100,000-character id, or 2,000 models, made one error line of 100 KB and more).

    Returns:
        ``a, b, c`` or ``a, b, c, d, e and 12 more``; each name visible on one line and cut to
        :data:`SHOWN_CHARS`; empty for no name.
    """
    ordered = sorted(names)
    cut = [n if len(n) <= SHOWN_CHARS else n[: SHOWN_CHARS - 3] + "..." for n in ordered[:SHOWN]]
    return listed([visible(n) for n in cut] + ordered[SHOWN:], SHOWN)


def _picked(spec: PredSpec) -> dict[str, Prediction]:
    """The rows of the model ``spec`` picks (the file's only model without ``#MODEL``), by id.

    Raises:
        AgentSpecError: no such model, or several models and the spec names none.
    """
    path, model = spec.file, spec.model
    by_model = load_predictions(path)
    if model is None and len(by_model) > 1:
        raise AgentSpecError(
            f"predictions file {path} holds {len(by_model)} models",
            f"name one as predictions:{path}#MODEL (one of: {shown_names(by_model)})",
        )
    if model is not None and model not in by_model:
        raise AgentSpecError(
            f"predictions file {path} has no model {model!r}",
            f"give one of: {shown_names(by_model) or 'none'}",
        )
    return by_model.get(model or next(iter(by_model), ""), {})


def _refuse_missing(
    spec: PredSpec, predictions: dict[str, Prediction], contract_ids: Iterable[str]
) -> None:
    """Raise when ``spec.require_all`` is set and ``predictions`` lack a row for a contract id.

    Raises:
        AgentSpecError: one line naming the missing ids (the first :data:`SHOWN`, then how many
            more) and the file's own (the first :data:`SHOWN`).
    """
    missing = [i for i in dict.fromkeys(contract_ids) if i not in predictions]
    if not spec.require_all or not missing:
        return
    named = listed([repr(i) for i in missing], SHOWN)
    known = shown_names(predictions) or "none"
    rows = "a row for that instance_id" if len(missing) == 1 else "rows for those instance_ids"
    raise AgentSpecError(
        f"predictions file {spec.file} has no instance {named} (it has: {known})",
        f"add {rows}, run only the contracts it covers, or drop --require-all-predictions to "
        "count it as an empty patch",
    )


def require_predictions(specs: Sequence[AgentSpec], contract_ids: Sequence[str]) -> None:
    """Refuse a ``--require-all-predictions`` file without a row for each of ``contract_ids``.

    Called as soon as a run knows its contract ids (before any repository is read or built), so
    the refusal costs nothing; :meth:`PredictionsAgent.create` refuses the same per contract.

    Args:
        specs: the run's agents; only predictions specs with ``require_all`` are checked.
        contract_ids: the ids of every contract the agents run on.

    Raises:
        AgentSpecError: the first such file lacking a row (its missing ids named), or whose
            model cannot be picked.
    """
    for spec in specs:
        if isinstance(spec, PredSpec) and spec.require_all:
            _refuse_missing(spec, _picked(spec), contract_ids)


class PredictionsAgent:
    """Applies the prediction whose ``instance_id`` is the contract id."""

    def __init__(self, spec: str, prediction: Prediction | None) -> None:
        self.spec = spec
        self._prediction = prediction

    @classmethod
    def create(cls, spec: PredSpec, contract: TransitionContract) -> PredictionsAgent:
        """Build for ``contract`` from ``FILE`` or ``FILE#MODEL``.

        Raises:
            AgentSpecError: no such model, or several models and the argument names none; or
                the file has no row for the contract and ``spec.require_all`` is set (without
                it, the agent proposes nothing, status ``no_prediction``).
        """
        predictions = _picked(spec)
        _refuse_missing(spec, predictions, [contract.id])
        return cls(spec.text, predictions.get(contract.id))

    @property
    def has_prediction(self) -> bool:
        """Whether the file has a row for this agent's contract."""
        return self._prediction is not None

    def propose(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy
    ) -> Proposal:
        """Apply the prediction's ``model_patch`` exactly; without a row, change nothing."""
        if self._prediction is None:
            return Proposal(
                status="no_prediction",
                model=self.spec,
                detail=f"the predictions file has no row for instance {task.id!r}: "
                "an empty patch, as SWE-bench counts a missing prediction",
            )
        patch = (self._prediction.model_patch or "").encode("utf-8")
        return apply_as_proposal(workspace, patch, self._prediction.model_name_or_path)

    def describe(self) -> dict[str, Any]:
        """Return the spec and the model the predictions name (None without a row)."""
        model = None if self._prediction is None else self._prediction.model_name_or_path
        return {"spec": self.spec, "model": model}
