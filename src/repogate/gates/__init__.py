"""Gates: one module per gate, each exposing a function that returns a receipt's observation.

Its public face is the modules ``__all__`` names; a ``_`` module is the package's own.
"""

__all__ = [
    "authority",
    "base_state",
    "codeowners",
    "concerns",
    "dependency",
    "differential",
    "generated",
    "generator_change",
    "graded_oracle",
    "graded_trees",
    "imports",
    "injection",
    "integrity",
    "oracle_commands",
    "protection",
    "reconstruction",
    "regression",
    "release",
    "requirements",
    "runner_files",
    "sentinel",
    "verification",
]
