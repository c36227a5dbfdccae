"""What the graded tests read from the repository, traced at gate E (the oracle beyond the tests).

A graded test is more than its function: it reads tables and data files of the repository, and an
agent that may edit those could rewrite the expected values to match its bug (turn-3 case
``graded-test-reads-package-data``: a test in ``units/tests/`` reads ``units/data/conversions.json``).
Gate E runs the graded ids once more with the guard's read trace switched on
(:mod:`repogate.oracles._guard_plugin`, ``REPOGATE_GUARD_READS``), on the reference (where the
graded tests pass, so they read all they need) or, without a reference, on the base with the
hidden tests. Each file of the checkout other than Python code that the session opened is put on
the side of the code that opened it: the innermost frame of a checkout file at the ``open`` call.
Test code is a file holding a collected test (doctests excepted), a ``conftest.py``, a test module,
a file in a ``tests``/``test``/``testing`` folder, or a doctest's example; anything else of the
checkout is product code.

A file only test code opened is oracle: gate I fails ``oracle_untouched`` when a patch changes it
(:mod:`repogate.gates.graded_oracle`). A file product code opened too is the product's data, and a
fix may edit it. The trace runs on the base's or the reference's code, never on a candidate's.

Limits: a test that hands a path to product code which opens it (``load(path)``) counts as a
product read; files opened from C code (an extension's ``fopen``) are not seen; Python modules are
not traced (they are code: a module holding graded tests is oracle by its ids, a helper module
outside the test folders that only tests import cannot be told from the package under test).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from repogate._model import FrozenModel

TracedTree = Literal["reference", "base"]
"""Which state the trace ran on: the reference when the contract has one, else the base."""


class TracedReads(FrozenModel):
    """The repository files (not Python code) one traced session opened, by the side that did.

    Attributes:
        test: files test code opened, relative to the checkout, sorted.
        product: files product code opened, sorted.
        tree: the state the session ran on.
        truncated: the session opened more files than a record keeps (1,000 a side, 64 KiB of
            names): the lists are the first ones by name, and a file missing from ``product``
            may read as test-only.
    """

    test: tuple[str, ...] = ()
    product: tuple[str, ...] = ()
    tree: TracedTree = "base"
    truncated: bool = False

    @property
    def test_only(self) -> tuple[str, ...]:
        """Files only test code opened: oracle."""
        product = set(self.product)
        return tuple(p for p in self.test if p not in product)

    @property
    def shared(self) -> tuple[str, ...]:
        """Files both test and product code opened: the product's data, a fix may edit them."""
        product = set(self.product)
        return tuple(p for p in self.test if p in product)

    def joined(self, other: TracedReads) -> TracedReads:
        """Return the reads of this session and ``other`` (a rerun of some tests of the same tree).

        Each file keeps every side that opened it in either session, as :func:`merge_records`
        joins the records of one session's processes.
        """
        return TracedReads(
            test=tuple(sorted({*self.test, *other.test})),
            product=tuple(sorted({*self.product, *other.product})),
            tree=self.tree,
            truncated=self.truncated or other.truncated,
        )


def merge_records(records: list[Mapping[str, object]]) -> TracedReads | None:
    """Return the union of the ``reads`` of guard records, or None when none carries any.

    Args:
        records: the guard's signed, finished records of one run (:mod:`repogate.oracles.guard`).
    """
    test: set[str] = set()
    product: set[str] = set()
    seen = truncated = False
    for record in records:
        reads = record.get("reads")
        if not isinstance(reads, dict):
            continue
        seen = True
        truncated = truncated or reads.get("truncated") is True
        for side, into in (("test", test), ("product", product)):
            values = reads.get(side)
            if isinstance(values, list):
                into.update(v for v in values if isinstance(v, str))
    if not seen:
        return None
    return TracedReads(
        test=tuple(sorted(test)), product=tuple(sorted(product)), truncated=truncated
    )
