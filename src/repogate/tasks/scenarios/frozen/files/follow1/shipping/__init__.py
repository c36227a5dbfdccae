"""Shipping costs."""

from shipping.format import format_cost
from shipping.rates import shipping_cost

__all__ = ["format_cost", "shipping_cost"]
