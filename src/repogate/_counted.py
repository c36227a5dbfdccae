"""Counts in prose: ``1 task``, ``3 tasks`` (one rule for every message that counts things)."""

from __future__ import annotations


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
