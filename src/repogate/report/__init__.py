"""Reports: text, JSON and HTML, read from decisions and the store only.

The terminal's live progress and attempt tables are the command line's (:mod:`repogate.cli`).

Its public face is the modules ``__all__`` names; a ``_`` module is the package's own.
"""

__all__ = [
    "aggregate",
    "autonomy",
    "charts",
    "classify",
    "differences",
    "differs",
    "gates",
    "html",
    "injections",
    "json",
    "load",
    "model",
    "policy",
    "stats",
    "swebench",
    "text",
]
