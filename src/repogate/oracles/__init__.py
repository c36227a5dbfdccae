"""Test oracles: run the contract's test command, read its structured report, grade the outcomes.

- :mod:`repogate.oracles.junit`: parse a pytest JUnit XML report (safely) into node id -> outcome,
  and match expected ids robustly.
- :mod:`repogate.oracles.pytest_runner`: run the test command in the sandbox with the report written
  to a harness-owned folder outside the workspace.
- :mod:`repogate.oracles.grading`: FAIL_TO_PASS / PASS_TO_PASS grading as SWE-bench defines it, the
  base-state check, and flaky-test detection.

Its public face is the modules ``__all__`` names; a ``_`` module is the package's own.
"""

__all__ = [
    "base_suite",
    "differential",
    "embedded",
    "functions",
    "graded_reads",
    "grading",
    "guard",
    "imports",
    "junit",
    "pytest_runner",
    "regress_tools",
    "reruns",
    "selection",
    "service_tls",
    "services",
]
