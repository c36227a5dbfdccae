"""Shipping costs."""

from shipping.rates import shipping_cost

__all__ = ["shipping_cost"]
