"""Validation problems in prose: every problem pydantic found in a file, in one line.

Every loader of a file a user (or an agent) writes validates it with pydantic and says what is
wrong through :func:`every_problem`, so no problem is hidden behind another: a misspelt table
(``[requirment]``) makes pydantic report the table the contract lacks first, and the hint that
names the misspelling (``did you mean 'requirement'?``) used to sit in an unseen "(and 1 more)".
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from repogate._counted import counted


def every_problem(exc: ValidationError, model: type[BaseModel]) -> str:
    """Return every problem of ``exc`` in one line, each as :func:`describe_problem` says it.

    Args:
        exc: what ``model.model_validate`` raised.
        model: the model validated (its fields name the valid keys an unknown key is offered).

    Returns:
        One problem as it is (``key 'a.b': Input should be a valid integer``); several counted
        and joined by ``"; "`` (``2 problems: key 'requirement': Field required; unknown key
        'requirment' (did you mean 'requirement'? valid keys here: ...)``).
    """
    problems = list(dict.fromkeys(describe_problem(e, model) for e in exc.errors()))
    if len(problems) == 1:
        return problems[0]
    return f"{counted(len(problems), 'problem')}: {'; '.join(problems)}"


def describe_problem(error: ErrorDetails, model: type[BaseModel]) -> str:
    """Return one validation problem as a phrase naming its key.

    ``key 'a.b': message``; for a key ``model`` has not, ``unknown key 'a.c' (did you mean
    'a.b'? valid keys here: ...)``; for a value where a boolean belongs (a strict boolean field,
    :data:`pydantic.StrictBool`), ``key 'a.b': "yes" is not a boolean (use true or false)``. The
    key is the dotted path from the top of the file (list positions as numbers, from 0).
    """
    loc = ".".join(str(p) for p in error["loc"]) or "(top level)"
    if error["type"] in _NOT_A_BOOLEAN:
        return f"key {loc!r}: {_as_written(error['input'])} is not a boolean (use true or false)"
    if error["type"] != "extra_forbidden":
        return f"key {loc!r}: {error['msg']}"
    valid = sorted(_valid_keys(model, error["loc"][:-1]))
    close = difflib.get_close_matches(str(error["loc"][-1]), valid, n=1)
    hint = [f"did you mean {close[0]!r}?"] if close else []
    listed = [f"valid keys here: {', '.join(valid)}"] if valid else []
    said = " ".join(hint + listed)
    return f"unknown key {loc!r}" + (f" ({said})" if said else "")


_NOT_A_BOOLEAN = frozenset({"bool_type", "bool_parsing"})
"""pydantic's error types for a value given where a boolean belongs (strict, and lax)."""


def _as_written(value: object) -> str:
    """``value`` as TOML and JSON write it (``"yes"``, ``1``), cut to 60 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, TypeError):  # a circular value: not from a parsed file
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _valid_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The field names of the model at ``loc`` inside ``model`` (none when it is not one)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part)) if hasattr(current, "model_fields") else None
        if field is None:
            return []
        current = _inner_model(field.annotation)
        if current is None:
            return []
    return list(current.model_fields) if hasattr(current, "model_fields") else []


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, itself or inside ``X | None``, ``tuple[X, ...]``, ``list[X]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None
