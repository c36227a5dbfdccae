"""The differential oracle's call server: runs inside the sandbox, in the environment under test.

Standard library only (it runs under the project's interpreter, whatever its version). It is
copied alone into a folder the sandbox reads, and started once per state (candidate or
reference) with the state's tree as its working folder. One JSON request per input line, one
JSON answer per output line:

- ``{"id": n, "op": "probe", "module": m, "qualname": q}``: import ``m`` and look up ``q``;
  answer ``{"id": n, "kind": "ok"}`` or ``{"id": n, "kind": "unimportable", "message": ...}``.
- ``{"id": n, "op": "call", "module": m, "qualname": q, "args": A, "kwargs": K}``: ``A`` and
  ``K`` are Python literals (``ast.literal_eval``); answer the outcome: ``kind`` ``returned``
  (``value``: a canonical description of the result) or ``raised`` (``type``: the exception's
  qualified name, ``message``), ``args``: the arguments after the call (argument mutation)
  written as the call's parenthesised part, ``(1, value=[])`` (:func:`describe_call`), and
  ``args_before``: the same before the call.

A description is a string that never holds a memory address, so two processes describe equal
values alike. What the called code prints to standard output is thrown away (the channel is
the harness's), so printing cannot forge an answer line; a forged line still answers with the
wrong ``id`` and is refused by the harness.
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import os
import re
import sys
from typing import Any

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_DEPTH = 6
_WIDTH = 4000


def describe(value: Any, depth: int = 0) -> str:
    """A canonical description of ``value``: equal values get equal text in any process."""
    if depth > _DEPTH:
        return "..."
    if value is None or isinstance(value, (bool, int, str, bytes, complex)):
        return repr(value)[:_WIDTH]
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v, depth + 1) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"  # as Python writes a tuple
    if isinstance(value, (set, frozenset)):
        if not value:
            return f"{type(value).__name__}()"  # `{}` would read as a dict
        return "{{{}}}".format(", ".join(sorted(describe(v, depth + 1) for v in value)))
    if isinstance(value, dict):
        items = sorted(
            describe(k, depth + 1) + ": " + describe(v, depth + 1) for k, v in value.items()
        )
        return "{{{}}}".format(", ".join(items))
    kind = type(value).__module__ + "." + type(value).__qualname__
    if isinstance(value, BaseException):
        return kind + describe(value.args, depth + 1)
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict):
        return kind + describe(fields, depth + 1)
    try:
        text = repr(value)
    except Exception as exc:  # a repr that raises is described by its type
        text = f"<repr raised {type(exc).__name__}>"
    return kind + ":" + _ADDRESS.sub("", text)[:_WIDTH]


def describe_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The arguments of a call as its parenthesised part: ``(1, 'a', key=[2])``.

    Positional arguments first, then keywords in name order, each value by :func:`describe`; a
    person reads it as the call, and two processes write equal arguments alike.
    """
    parts = [describe(a, 1) for a in args]
    parts += [f"{k}={describe(v, 1)}" for k, v in sorted(kwargs.items())]
    return f"({', '.join(parts)})"


def _target(module: str, qualname: str) -> Any:
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    name: tuple[str, str] = (str(request.get("module", "")), str(request.get("qualname", "")))
    if request.get("op") == "probe":
        try:
            target = _target(*name)
        except BaseException as exc:  # any failure to import is an answer, not a crash
            return {"kind": "unimportable", "message": f"{type(exc).__name__}: {exc}"}
        if not callable(target):
            return {"kind": "unimportable", "message": f"{name[1]} is not callable"}
        return {"kind": "ok"}
    args = ast.literal_eval(request["args"])
    kwargs = ast.literal_eval(request["kwargs"])
    target = _target(*name)
    before = describe_call(args, kwargs)
    try:
        value = target(*args, **kwargs)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are outcomes too
        kind = type(exc)
        return {
            "kind": "raised",
            "type": kind.__module__ + "." + kind.__qualname__,
            "message": str(exc)[:_WIDTH],
            "args": describe_call(args, kwargs),
            "args_before": before,
        }
    return {
        "kind": "returned",
        "value": describe(value),
        "args": describe_call(args, kwargs),
        "args_before": before,
    }


def main() -> None:
    """Serve requests from standard input until it closes."""
    sys.path.insert(0, os.getcwd())  # noqa: PTH109 (a str for sys.path, as python -m puts it)
    channel = os.fdopen(os.dup(1), "w")
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # what the called code prints, even to descriptor 1, is not the channel
    sys.stdout = io.StringIO()
    for line in sys.stdin:
        request: Any = {}
        try:
            request = json.loads(line)
            answer = _answer(request)
        except BaseException as exc:
            answer = {"kind": "error", "message": f"{type(exc).__name__}: {exc}"}
        answer["id"] = request.get("id") if isinstance(request, dict) else None
        sys.stdout = io.StringIO()
        channel.write(json.dumps(answer) + "\n")
        channel.flush()


if __name__ == "__main__":
    main()
