"""Shipping costs by destination zone."""

from __future__ import annotations

RATES = {
    "domestic": 5.00,
    "eu": 12.00,
    "world": 20.00,
}

# Orders worth at least this much ship free to the zone.
FREE_OVER = {
    "domestic": 50.00,
}


def shipping_cost(zone: str, order_total: float) -> float:
    """Return the cost of shipping an order worth ``order_total`` to ``zone``."""
    if zone not in RATES:
        raise KeyError(f"unknown zone {zone!r}")
    threshold = FREE_OVER.get(zone)
    if threshold is not None and order_total >= threshold:
        return 0.0
    return RATES[zone]
