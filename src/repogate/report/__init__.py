"""Reports: terminal tables and JSON, read from decisions and the store only.

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
    "progress",
    "stats",
    "swebench",
    "terminal",
    "text",
]
