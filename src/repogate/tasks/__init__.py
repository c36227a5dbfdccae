"""Contract sources: built-in scenarios (and, later, mined history and SWE-bench imports)."""
