"""Counts in prose: ``1 task``, ``3 tasks`` (one rule for every message that counts things)."""

from __future__ import annotations

from collections.abc import Sequence


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """Return ``n`` with ``noun`` in the number it takes: ``counted(1, "test")`` is ``1 test``.

    Args:
        n: how many (any integer; only 1 and -1 take the singular, as English does).
        noun: the singular form.
        plural: the plural form when it is not ``noun + "s"`` (``"matches"``).

    Returns:
        ``"<n> <noun or plural>"``.
    """
    return f"{n} {noun if abs(n) == 1 else plural or noun + 's'}"


def listed(items: Sequence[str], shown: int) -> str:
    """Return the first ``shown`` of ``items`` joined by ``", "``, the rest counted.

    One rule for every message that names some of many things: ``listed(["a", "b", "c"], 2)``
    is ``a, b and 1 more``; ``""`` for no item. The items are said as given (quote, cut or
    escape them first).
    """
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more
