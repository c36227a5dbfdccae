"""Validation problems in prose: every problem pydantic found in a file, in one line.

Every loader of a file a user (or an agent) writes validates it with pydantic and says what is
wrong through :func:`every_problem`, so no problem is hidden behind another: a misspelt table
(``[requirment]``) makes pydantic report the table the contract lacks first, and the hint that
names the misspelling (``did you mean 'requirement'?``) used to sit in an unseen "(and 1 more)".

The line stays short and visible whatever the file holds (red team rt32): at most
:data:`MAX_PROBLEMS_SAID` problems are said, the rest counted (an agent's 4 MiB
``requirements.json`` of bad claims made a 39 MB note); each is cut to
:data:`MAX_PROBLEM_CHARS` (a megabyte key was quoted whole); and every invisible character a key,
a value or pydantic's message quotes is escaped (:func:`repogate.receipt.visible`: a C1 ``CSI``,
a bidi override or a line separator reached the terminal through ``_as_written``).
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from pydantic import BaseModel, RootModel, ValidationError
from pydantic_core import ErrorDetails

from repogate._counted import counted
from repogate.receipt import visible

MAX_PROBLEMS_SAID = 20
"""Problems said at most in one line; the others are counted (``(and 3 more problems)``)."""
MAX_PROBLEM_CHARS = 300
"""Characters one problem is cut to (``...`` at the end when cut)."""


def every_problem(exc: ValidationError, model: type[BaseModel]) -> str:
    """Return every problem of ``exc`` in one line, each as :func:`describe_problem` says it.

    Args:
        exc: what ``model.model_validate`` raised.
        model: the model validated (its fields name the valid keys an unknown key is offered).

    Returns:
        One problem as it is (``key 'a.b': Input should be greater than 0``); several counted
        and joined by ``"; "`` (``2 problems: key 'requirement': Field required; unknown key
        'requirment' (did you mean 'requirement'? valid keys here: ...)``); past
        :data:`MAX_PROBLEMS_SAID`, the rest only counted (``(and 7 more problems)``).
    """
    errors = exc.errors(include_url=False, include_context=False)
    # the same problem twice is said once; only the first few are described (difflib, keys)
    distinct = list({(repr(e["loc"]), e["type"], e["msg"]): e for e in errors}.values())
    said = list(dict.fromkeys(describe_problem(e, model) for e in distinct[:MAX_PROBLEMS_SAID]))
    if len(distinct) <= MAX_PROBLEMS_SAID:
        return said[0] if len(said) == 1 else f"{counted(len(said), 'problem')}: {'; '.join(said)}"
    more = counted(len(distinct) - MAX_PROBLEMS_SAID, "more problem")
    return f"{counted(len(distinct), 'problem')}: {'; '.join(said)} (and {more})"


def what_to_fix(exc: ValidationError) -> str:
    """Say what the problems of ``exc`` ask the user to fix: the key, the value, or both.

    An unknown key (``extra_forbidden``) or a key the file lacks (``missing``) is a problem of the
    key; every other one (a string where a number belongs, a number out of range, a word that is
    not one of the choices) is a problem of the value written under a right key.

    Returns:
        ``"fix the key"`` or ``"fix the value"`` (``"keys"``, ``"values"`` for several), or
        ``"fix the keys and values"`` when the problems are of both kinds.
    """
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    distinct = {(repr(e["loc"]), e["type"], e["msg"]): e["type"] for e in errors}.values()
    keys = sum(1 for kind in distinct if kind in _KEY_PROBLEMS)
    values = len(distinct) - keys
    if keys and values:
        return "fix the keys and values"
    if keys:
        return "fix the keys" if keys > 1 else "fix the key"
    return "fix the values" if values > 1 else "fix the value"


_KEY_PROBLEMS = frozenset({"extra_forbidden", "missing"})
"""pydantic's error types that are the key's problem (unknown, or absent), not its value's."""


def describe_problem(error: ErrorDetails, model: type[BaseModel]) -> str:
    """Return :func:`_describe` of ``error`` visible on one line, cut to :data:`MAX_PROBLEM_CHARS`."""
    text = visible(_describe(error, model))
    return text if len(text) <= MAX_PROBLEM_CHARS else text[: MAX_PROBLEM_CHARS - 3] + "..."


def _describe(error: ErrorDetails, model: type[BaseModel]) -> str:
    """Return one validation problem as a phrase naming its key.

    ``key 'a.b': message``; for a key ``model`` has not, ``unknown key 'a.c' (did you mean
    'a.b'? valid keys here: ...)``; for a value where a boolean belongs (a strict boolean field,
    :data:`pydantic.StrictBool`), ``key 'a.b': "yes" is not a boolean (use true or false)``; for
    a value where a number belongs (:data:`pydantic.StrictInt`, :data:`pydantic.StrictFloat`),
    ``key 'a.b': "120" is not a number (write 120 without quotes)`` (:func:`_not_a_number`); for a
    value where a list belongs, ``key 'a.b': "x" is not a list (write ["x"])``; a validator's own
    message without pydantic's ``Value error, ``. The key is the dotted path from the top of the file (list positions as numbers, from 0).
    """
    loc = ".".join(str(p) for p in error["loc"]) or "(top level)"
    if error["type"] in _NOT_A_BOOLEAN:
        return f"key {loc!r}: {_as_written(error['input'])} is not a boolean (use true or false)"
    if error["type"] in _NOT_AN_INTEGER | _NOT_A_NUMBER:
        return f"key {loc!r}: {_not_a_number(error['input'], error['type'] in _NOT_AN_INTEGER)}"
    if error["type"] in _NOT_A_LIST:
        return f"key {loc!r}: {_not_a_list(error['input'])}"
    if error["type"] in _NOT_A_TABLE:
        return (
            f"key {loc!r}: {_as_written(error['input'])} is not a table (write key = value pairs)"
        )
    if error["type"] != "extra_forbidden":
        return f"key {loc!r}: {_without_prefix(error['msg'])}"
    valid = sorted(_valid_keys(model, error["loc"][:-1]))
    close = difflib.get_close_matches(str(error["loc"][-1]), valid, n=1)
    hint = [f"did you mean {close[0]!r}?"] if close else []
    listed = [f"valid keys here: {', '.join(valid)}"] if valid else []
    said = " ".join(hint + listed)
    return f"unknown key {loc!r}" + (f" ({said})" if said else "")


_NOT_A_BOOLEAN = frozenset({"bool_type", "bool_parsing"})
"""pydantic's error types for a value given where a boolean belongs (strict, and lax)."""
_NOT_AN_INTEGER = frozenset({"int_type", "int_parsing", "int_from_float"})
"""pydantic's error types for a value given where an integer belongs (strict, and lax)."""
_NOT_A_NUMBER = frozenset({"float_type", "float_parsing"})
"""pydantic's error types for a value given where a number belongs (strict, and lax)."""


_NOT_A_LIST = frozenset({"tuple_type", "list_type", "set_type", "frozen_set_type"})
"""pydantic's error types for a value given where a list belongs (its tuple, list and set types:
TOML and JSON have only arrays)."""
_NOT_A_TABLE = frozenset({"dict_type", "model_type", "model_attributes_type"})
"""pydantic's error types for a value given where a table (a JSON object) belongs."""
_PREFIXES = ("Value error, ", "Assertion failed, ")
"""What pydantic puts before a validator's own message; the message alone is the problem."""


def _without_prefix(message: str) -> str:
    """``message`` without pydantic's ``Value error, `` (a validator's ``ValueError``) prefix."""
    for prefix in _PREFIXES:
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


def _not_a_list(value: object) -> str:
    """Why ``value`` is not the list its key takes, and what to write.

    ``"a/**" is not a list (write ["a/**"])``; pydantic says "a valid tuple", a word TOML and
    JSON do not have.
    """
    shown = _as_written(value)
    if isinstance(value, str | int | float) and len(shown) <= 40:
        return f"{shown} is not a list (write [{shown}])"
    return f"{shown} is not a list (write [...], an array)"


def _not_a_number(value: object, whole: bool) -> str:
    """Why ``value`` is not the number (``whole``: the integer) its key takes, and what to write.

    ``"120" is not a number (write 120 without quotes)``; ``true is not a number (write a whole
    number, not true or false)``; ``1.5 is not a whole number (this key takes an integer)``;
    ``2.0 is not an integer (write 2, without the decimal point)``.
    """
    shown = _as_written(value)
    wanted = "a whole number" if whole else "a number"
    if isinstance(value, bool):
        return f"{shown} is not a number (write {wanted}, not true or false)"
    if isinstance(value, str):
        written = _number_in(value, whole)
        if written is not None:
            return f"{shown} is not a number (write {written} without quotes)"
        return f"{shown} is not a number (write {wanted} without quotes)"
    if isinstance(value, float) and whole:
        if value.is_integer() and abs(value) < 1e15:
            return f"{shown} is not an integer (write {int(value)}, without the decimal point)"
        if value.is_integer():  # 1e20: whole, but written as a float
            return f"{shown} is not an integer (write its digits, without an exponent)"
        return f"{shown} is not a whole number (this key takes an integer)"
    return f"{shown} is not {wanted}"


def _number_in(text: str, whole: bool) -> str | None:
    """``text`` as the TOML or JSON number it spells, when it spells one the key takes."""
    candidate = text.strip()
    if not candidate or len(candidate) > 40 or not all(c in "0123456789+-.eE_" for c in candidate):
        return None  # "inf", "nan", "0x1f" and words are not offered back as numbers
    try:
        number = float(candidate)
    except ValueError:
        return None
    if whole and not number.is_integer():
        return None
    if whole:
        try:
            return str(int(candidate.replace("_", "")))
        except ValueError:  # "1e3", "2.0": a whole number, not written as an integer
            return str(int(number)) if abs(number) < 1e15 else None
    return candidate


def _as_written(value: object) -> str:
    """``value`` as TOML and JSON write it (``"yes"``, ``1``), cut to 60 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, TypeError):  # a circular value: not from a parsed file
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _valid_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The field names of the model at ``loc`` inside ``model`` (none when it is not one)."""
    current: Any = _unwrapped(model)
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part)) if hasattr(current, "model_fields") else None
        if field is None:
            return []
        current = _unwrapped(_inner_model(field.annotation))
        if current is None:
            return []
    return list(current.model_fields) if hasattr(current, "model_fields") else []


def _unwrapped(model: type[BaseModel] | None) -> type[BaseModel] | None:
    """The model a :class:`pydantic.RootModel` holds (its ``root``), else ``model`` itself."""
    while model is not None and issubclass(model, RootModel):
        model = _inner_model(model.model_fields["root"].annotation)
    return model


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, itself or inside ``X | None``, ``tuple[X, ...]``, ``list[X]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None
