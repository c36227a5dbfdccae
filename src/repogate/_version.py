"""The evaluator version, recorded in every receipt and in the policy digest."""

__version__ = "0.1.0"
