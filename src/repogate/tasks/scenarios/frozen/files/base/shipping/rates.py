"""Shipping costs by destination zone."""

from __future__ import annotations

RATES = {
    "domestic": 5.00,
    "eu": 12.00,
    "world": 20.00,
}


def shipping_cost(zone: str, order_total: float) -> float:
    """Return the cost of shipping an order worth ``order_total`` to ``zone``."""
    if zone not in RATES:
        raise KeyError(f"unknown zone {zone!r}")
    return RATES[zone]
