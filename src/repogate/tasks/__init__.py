"""Contract sources: built-in scenarios (and, later, mined history and SWE-bench imports).

Its public face is the modules ``__all__`` names; a ``_`` module is the package's own.
"""

__all__ = [
    "dates",
    "handoff",
    "import_strength",
    "ingest",
    "mine",
    "recipe",
    "scenario_injections",
    "scenarios",
    "strength",
    "swebench",
    "taskset",
    "validate",
    "vary",
]
