"""Environments a contract's commands run in (placeholder until the seam's Protocol is merged)."""
