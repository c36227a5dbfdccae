"""A graded oracle is every graded test and what it reads from the repository (gate I's rules).

The hidden test patch and the test folders are the oracle already (:mod:`repogate.gates.integrity`),
and graded doctests inside product modules are graded from the hidden tests' text
(:mod:`repogate.oracles.embedded`). What else a graded test is made of, and the rule that decides
an edit to it:

- ``graded module``: a ``.py`` file outside the test folders and the hidden tests that holds a
  graded test function (a self-check module the project's pytest configuration collects, such as
  ``python_files = ["selfcheck.py"]``). The whole file is oracle: its functions, its module-level
  tables, its fixtures. Editing it fails ``oracle_untouched`` (a project that keeps product code
  in the same module as a graded test function cannot have that module fixed by the agent).
- ``read only by graded tests``: a file other than Python code that only test code opened in
  gate E's traced run of the graded ids (:mod:`repogate.oracles.graded_reads`): a table of
  expected values, a fixture's data file. Changing or deleting it fails ``oracle_untouched``.
- ``new file the graded tests read``: a data file the patch adds that the graded tests open
  when it is added to the traced tree, or that changes their outcomes there
  (:mod:`repogate.phases._added_reads`): a table added in place of, or over, the one they read.
- ``read by product code too``: a file the product code opened as well. It is the product's data:
  a fix may edit it (the edit is recorded in the receipt, never refused).

A ``conftest.py`` on the tests' path is oracle by :mod:`repogate.gates.integrity`'s hook rule.
Compare SWE-bench's harness, whose evaluation script checks out only the files the test patch
modifies at the base before applying it (``swebench/harness/test_spec``,
``make_eval_script_list_common``): what a test reads outside them is the candidate's there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from repogate._model import FrozenModel
from repogate.contract import TransitionContract
from repogate.git import ChangedPath
from repogate.globs import TEST_GLOBS, matches_any
from repogate.oracles.embedded import embedded_ids, is_doctest_id
from repogate.oracles.graded_reads import TracedReads

OracleRule = Literal[
    "graded module",
    "read only by graded tests",
    "new file the graded tests read",
    "read by product code too",
]
"""The rule that decided an edit to what a graded test is made of (see the module docs)."""


class GradedOracle(FrozenModel):
    """What the graded tests are made of beyond the test files, for one attempt.

    Attributes:
        modules: files outside the test folders and the hidden tests holding a graded test
            function, sorted: oracle as a whole.
        reads: what gate E's trace saw the graded tests and the product code open; None when
            no trace was made (then only ``modules`` decide).
        added_reads: data files the patch adds that are oracle (rule ``new file the graded
            tests read``), sorted.
    """

    modules: tuple[str, ...] = ()
    reads: TracedReads | None = None
    added_reads: tuple[str, ...] = ()


class GradedEdits(FrozenModel):
    """A patch's edits to what the graded tests are made of.

    Attributes:
        oracle: edits that fail ``oracle_untouched``, each ``path (why: rule '...')``, sorted.
        rules: each edited path -> the rule that decided it (refused or allowed).
    """

    oracle: tuple[str, ...] = ()
    rules: dict[str, OracleRule] = Field(default_factory=dict)

    @property
    def refused(self) -> dict[str, OracleRule]:
        """The edited paths a rule refused (every rule but ``read by product code too``)."""
        return {p: r for p, r in self.rules.items() if r != "read by product code too"}


def _test_id_file(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def graded_modules(contract: TransitionContract, hidden_paths: Sequence[str]) -> tuple[str, ...]:
    """Return the files outside the test folders and hidden tests that hold a graded test function.

    Args:
        contract: the task (its FAIL_TO_PASS and PASS_TO_PASS ids).
        hidden_paths: the files the hidden test patch touches.
    """
    hidden = set(hidden_paths)
    found = {
        _test_id_file(i)
        for i in (*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass)
        if not is_doctest_id(i)
    }
    return tuple(sorted(f for f in found if f not in hidden and not matches_any(f, TEST_GLOBS)))


def graded_edits(changed: Sequence[ChangedPath], oracle: GradedOracle) -> GradedEdits:
    """Return which of ``changed`` edit what the graded tests are made of, and by which rule.

    A file only the graded tests read that the patch adds (absent at the base) is not an edit of
    the oracle: the tests read it at the reference, and a candidate must be able to add it. Files
    of the test folders are left to :mod:`repogate.gates.integrity`'s test-file rule.

    Args:
        changed: the patch's changed paths.
        oracle: :class:`GradedOracle` of the attempt.
    """
    reads = oracle.reads
    test_only = set(reads.test_only) if reads is not None else set()
    shared = set(reads.shared) if reads is not None else set()
    where = f"traced at the {reads.tree}" if reads is not None else ""
    refused: list[str] = []
    rules: dict[str, OracleRule] = {}
    for change in changed:  # renames come as a delete and an add (``--no-renames``)
        path = change.path
        if matches_any(path, TEST_GLOBS):
            continue  # a file of the test folders: gate I's test-file rule decides it
        if path in oracle.modules:
            rules[path] = "graded module"
            refused.append(f"{path} (holds a graded test function: rule 'graded module')")
        elif path in oracle.added_reads and change.status == "A":
            rules[path] = "new file the graded tests read"
            refused.append(
                f"{path} (a new file the graded tests read, {where} with it added: "
                "rule 'new file the graded tests read')"
            )
        elif path in test_only and change.status != "A":
            rules[path] = "read only by graded tests"
            refused.append(
                f"{path} (only the graded tests read it, {where}: rule 'read only by graded tests')"
            )
        elif path in shared:
            rules[path] = "read by product code too"
    return GradedEdits(oracle=tuple(sorted(set(refused))), rules=rules)


def load_notices(contract: TransitionContract, hidden_paths: Sequence[str]) -> tuple[str, ...]:
    """Say which graded ids live in editable files that are not test files, and how each is held.

    Ids in the hidden tests' files or in test files are the usual case and go unsaid (editing
    those files fails ``oracle_untouched``); the files a graded test reads are known only after
    gate E's trace and are named in its receipt (``graded_reads``).

    Args:
        contract: the task.
        hidden_paths: the files the hidden test patch touches.

    Returns:
        One line for graded doctests (graded from the hidden tests' text), one for graded test
        functions in modules outside the test folders (those modules are oracle as a whole).
    """
    permissions = contract.permissions
    notices = []
    doctests = embedded_ids(contract, hidden_paths)
    if doctests:
        notices.append(
            f"contract {contract.id} grades ids inside files the agent may edit: "
            + ", ".join(doctests)
            + "; they are graded from the hidden tests' version of that text"
        )
    modules = set(graded_modules(contract, hidden_paths))
    held = [
        test_id
        for test_id in (*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass)
        if _test_id_file(test_id) in modules
        and matches_any(_test_id_file(test_id), permissions.editable)
        and not matches_any(_test_id_file(test_id), permissions.forbidden)
    ]
    if held:
        notices.append(
            f"contract {contract.id} grades test functions in modules the agent may edit, outside "
            "the test folders: " + ", ".join(held) + "; those modules are oracle as a whole "
            "(a patch editing them fails oracle_untouched)"
        )
    return tuple(notices)
