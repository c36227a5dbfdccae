"""Shipping costs as people read them on receipts."""

from __future__ import annotations


def format_cost(cost: float, currency: str = "EUR") -> str:
    """Return ``cost`` with two decimals and the currency, or ``free`` when it is nothing."""
    if cost == 0:
        return "free"
    return f"{cost:.2f} {currency}"
