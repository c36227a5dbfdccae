"""Test oracles: run the contract's test command, read its structured report, grade the outcomes.

- :mod:`repogate.oracles.junit`: parse a pytest JUnit XML report (safely) into node id -> outcome,
  and match expected ids robustly.
- :mod:`repogate.oracles.pytest_runner`: run the test command in the sandbox with the report written
  to a harness-owned folder outside the workspace.
- :mod:`repogate.oracles.grading`: FAIL_TO_PASS / PASS_TO_PASS grading as SWE-bench defines it, the
  base-state check, and flaky-test detection.
"""
