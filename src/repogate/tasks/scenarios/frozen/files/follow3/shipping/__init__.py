"""Shipping costs."""

from shipping.costs import shipping_cost
from shipping.format import format_cost

__all__ = ["format_cost", "shipping_cost"]
