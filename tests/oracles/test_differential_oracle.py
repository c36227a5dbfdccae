"""The differential oracle: each outcome on real call servers (sandboxed processes, real trees).

Every function here is compared in two trees written under ``tmp_path``, each served by its own
sandboxed process (``repogate.sandbox._session.Session``), exactly as the attempt's phase does.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from repogate.gates.differential import _fold, check_behaviour
from repogate.oracles._differential_worker import describe_call
from repogate.oracles.differential import FunctionOutcome, Server, compare_function
from repogate.oracles.functions import (
    Target,
    changed_functions,
    is_test_path,
    literals_in_tests,
    module_name,
)
from repogate.sandbox import SandboxPolicy
from repogate.sandbox._session import Session

WORKER = "_differential_worker.py"

BASE = b"def clamp(value):\n    return value\n"
REFERENCE = b"def clamp(value: int) -> int:\n    return min(max(value, 0), 100)\n"


def _tree(root: Path, name: str, source: bytes) -> Path:
    tree = root / name
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_bytes(b"")
    (tree / "pkg" / "mod.py").write_bytes(source)
    return tree


def _starter(tree: Path, tools: Path, budget_s: float = 120.0) -> Callable[[], Session]:
    policy = SandboxPolicy(
        timeout_s=budget_s,
        writable=(),
        writable_cwd=True,
        readable=(tools,),
        env={"PYTHONHASHSEED": "0"},  # as the phase starts them
    )
    return partial(Session, [sys.executable, str(tools / WORKER)], tree, policy)


def _compare(
    tmp_path: Path,
    candidate: bytes,
    reference: bytes = REFERENCE,
    *,
    qualname: str = "clamp",
    literals: tuple[object, ...] = (),
    named: dict[str, str] | None = None,
    call_timeout_s: float = 10.0,
) -> FunctionOutcome:
    tools = tmp_path / "tools"
    tools.mkdir()
    shutil.copyfile(Path(str(resources.files("repogate.oracles") / WORKER)), tools / WORKER)
    trees = _tree(tmp_path, "candidate", candidate), _tree(tmp_path, "reference", reference)
    files = {"pkg/mod.py": (BASE, candidate, reference)}
    targets = {t.qualname: t for t in changed_functions(files, ["."])}
    servers = (
        Server(_starter(trees[0], tools), call_timeout_s),
        Server(_starter(trees[1], tools), call_timeout_s),
    )
    try:
        return compare_function(targets[qualname], servers, list(literals), named or {}, 60)
    finally:
        for server in servers:
            server.close()


def test_the_reference_against_itself_shows_no_difference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gold is never flagged: the reference compared with itself finds 0 differences.

    Hypothesis writes nothing into the folder the harness was started in (its default home).
    """
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.chdir(user)
    seen = _compare(tmp_path, REFERENCE)
    assert seen.outcome == "same" and seen.examples == 60 and seen.reason == ""
    assert list(user.iterdir()) == []


def test_a_wrong_but_plausible_candidate_is_flagged_with_the_shrunk_input(tmp_path: Path) -> None:
    """A difference is evidence: the shortest distinguishing input, with both outcomes."""
    seen = _compare(tmp_path, b"def clamp(value: int) -> int:\n    return min(value, 100)\n")
    assert seen.outcome == "differs"
    assert seen.input == "pkg.mod.clamp(value=-1)"  # Hypothesis shrank it to the edge
    # arguments the call left as they were are not repeated
    assert (seen.candidate, seen.reference) == ("returned -1", "returned 0")


def test_an_exception_of_another_type_is_a_difference(tmp_path: Path) -> None:
    candidate = (
        b"def clamp(value: int) -> int:\n"
        b"    if value < 0:\n        raise ValueError(value)\n"
        b"    return min(value, 100)\n"
    )
    seen = _compare(tmp_path, candidate)
    assert seen.outcome == "differs" and seen.input == "pkg.mod.clamp(value=-1)"
    assert seen.candidate.startswith("raised builtins.ValueError")


def test_mutating_an_argument_is_a_difference(tmp_path: Path) -> None:
    reference = b"def total(items: list[int]) -> int:\n    return sum(items)\n"
    candidate = (
        b"def total(items: list[int]) -> int:\n"
        b"    s = sum(items)\n    items.clear()\n    return s\n"
    )
    seen = _compare(tmp_path, candidate, reference, qualname="total")
    assert seen.outcome == "differs"
    assert seen.input == "pkg.mod.total(items=[0])"
    # the arguments the call changed read as the call itself, as a person writes it
    assert seen.candidate == "returned 0 and changed its arguments to pkg.mod.total(items=[])"
    assert seen.reference == "returned 0"


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        ((), {"value": -1}, "(value=-1)"),
        ((1, "a"), {}, "(1, 'a')"),
        (([2],), {"b": {"k": (1,)}, "a": set()}, "([2], a=set(), b={'k': (1,)})"),
    ],
)
def test_the_arguments_after_a_call_are_written_as_a_call(
    args: tuple[Any, ...], kwargs: dict[str, Any], expected: str
) -> None:
    assert describe_call(args, kwargs) == expected


def test_a_hang_of_the_reference_is_timed_out_with_its_reason_never_a_crash(
    tmp_path: Path,
) -> None:
    """The reference hanging is the evaluator's (a candidate hanging differs: see below)."""
    reference = (
        b"def clamp(value: int) -> int:\n"
        b"    while value < 0:\n        pass\n"
        b"    return min(value, 100)\n"
    )
    seen = _compare(tmp_path, REFERENCE, reference, call_timeout_s=2.0)
    assert seen.outcome == "timed out"
    assert "the reference's call server: timed out after 2 s on pkg.mod.clamp(" in seen.reason


def test_a_reference_that_kills_its_server_is_an_outcome(tmp_path: Path) -> None:
    """A forking or exiting reference ends its server: recorded, the next call restarts it."""
    reference = (
        b"import os\n"
        b"def clamp(value: int) -> int:\n"
        b"    if value < 0:\n        os._exit(3)\n"
        b"    if os.fork() == 0:\n        os._exit(0)\n"
        b"    return min(max(value, 0), 100)\n"
    )
    seen = _compare(tmp_path, REFERENCE, reference)
    assert seen.outcome == "timed out"  # the server ended: no answer within the budget
    assert "ended" in seen.reason and "pkg.mod.clamp(value=-" in seen.reason
    assert "the reference's call server" in seen.reason


def test_a_reference_module_that_does_not_import_is_not_applicable(tmp_path: Path) -> None:
    reference = b"import no_such_module_here\ndef clamp(value: int) -> int:\n    return value\n"
    seen = _compare(tmp_path, REFERENCE, reference)
    assert seen.outcome == "not applicable"
    assert seen.reason.startswith("cannot be imported in the reference: ModuleNotFoundError")


def test_a_nondeterministic_function_is_not_applicable(tmp_path: Path) -> None:
    reference = b"import random\ndef clamp(value: int) -> int:\n    return random.random()\n"
    seen = _compare(tmp_path, reference, reference)
    assert seen.outcome == "not applicable"
    assert seen.reason.startswith("not deterministic: the reference disagrees with itself")


@pytest.mark.parametrize(
    "body",
    [
        b"    return time.time() if value > 50 else value\n",  # a clock, past the first inputs
        b"    return Box(value) if value > 50 else value\n",  # an object holding a clock
        b"    return random.random() if value > 50 else value\n",  # a random draw
    ],
)
def test_a_reference_that_disagrees_with_itself_is_never_a_difference(
    tmp_path: Path, body: bytes
) -> None:
    """Gold is never flagged for a clock (seen on click-fcd85032cf: a progress bar's start time)."""
    source = (
        b"import random, time\n"
        b"class Box:\n    def __init__(self, value):\n        self.value, self.at = value, time.time()\n"
        b"def clamp(value: int) -> int:\n" + body
    )
    seen = _compare(tmp_path, source, source)
    assert seen.outcome == "not applicable"
    assert seen.reason.startswith("not deterministic: the reference ")


def test_hash_order_agrees_between_the_two_processes(tmp_path: Path) -> None:
    source = b"def clamp(value: int) -> list[str]:\n    return list({str(value), 'a', 'b', 'c'})\n"
    assert _compare(tmp_path, source, source).outcome == "same"


def test_a_strategy_hypothesis_refuses_is_not_applicable(tmp_path: Path) -> None:
    seen = _compare(tmp_path, REFERENCE, named={"value": "nothing"})
    assert seen.outcome == "not applicable" and "Hypothesis" in seen.reason


def test_literals_the_tests_pass_reach_the_inputs(tmp_path: Path) -> None:
    """A difference only at a value the tests name is found from the tests' literals."""
    reference = b"def label(code: str) -> str:\n    return code.upper()\n"
    candidate = (
        b"def label(code: str) -> str:\n    return 'EU' if code == 'eu-west-7' else code.upper()\n"
    )
    seen = _compare(tmp_path, candidate, reference, qualname="label", literals=("eu-west-7",))
    assert seen.outcome == "differs" and seen.input == "pkg.mod.label(code='eu-west-7')"


def test_changed_functions_say_why_one_cannot_be_called() -> None:
    base = b"class C:\n    def m(self):\n        return 1\n"
    new = (
        b"class C:\n    def m(self):\n        return 2\n"
        b"    @staticmethod\n    def s(x):\n        return x\n"
        b"def gen(n):\n    yield n\n"
        b"async def co():\n    return 1\n"
        b"def f(a, /, b=2, *, c):\n    return a\n"
    )
    targets = {t.qualname: t for t in changed_functions({"src/p/m.py": (base, new, new)}, ["src"])}
    assert targets["C.m"].not_applicable.startswith("an instance method")
    assert targets["C.s"].not_applicable == "" and targets["C.s"].module == "p.m"
    assert targets["gen"].not_applicable.startswith("a generator function")
    assert targets["co"].not_applicable.startswith("a coroutine function")
    assert targets["f"].params == (
        ("a", "", False, True),
        ("b", "", True, False),
        ("c", "", False, False),
    )
    only_ref = changed_functions({"m.py": (None, b"", b"def g():\n    return 1\n")}, ["."])
    assert only_ref == [
        Target(
            path="m.py",
            module="m",
            qualname="g",
            not_applicable="absent from the candidate: nothing to compare with",
        )
    ]


def test_module_names_test_paths_and_literals() -> None:
    assert module_name("src/click/core.py", ["src"]) == "click.core"
    assert module_name("pkg/__init__.py", ["."]) == "pkg"
    assert module_name("scripts/my-tool.py", ["."]) is None
    assert [
        is_test_path(p)
        for p in ("tests/a.py", "pkg/test_a.py", "pkg/conftest.py", "pkg/testing.py")
    ] == [
        True,
        True,
        True,
        False,
    ]
    assert literals_in_tests([b"f(1, 'a', 1e999, 2.5, b'x', 'a')\n'''doc\nstring'''"]) == [
        1,
        "a",
        2.5,
        b"x",
    ]


def test_the_check_folds_outcomes_and_says_not_applicable(tmp_path: Path) -> None:
    """No function to call: skipped (advisory) or error (hard), said so; never a pass."""
    starter = _starter(tmp_path, tmp_path)
    soft = check_behaviour([], [], {}, (starter, starter), hard=False)
    hard = check_behaviour([], [], {}, (starter, starter), hard=True)
    assert [(c.status, c.detail) for c in soft.checks] == [
        ("skipped", "not applicable: no changed function to call")
    ]
    assert [c.status for c in hard.checks] == ["error"]


@pytest.mark.parametrize("name", ["integers", "text"])
def test_a_named_strategy_is_used(tmp_path: Path, name: str) -> None:
    seen = _compare(tmp_path, REFERENCE, named={"value": name})
    # text into min/max raises TypeError in both states alike: still no difference
    assert seen.outcome == "same"


WRONG_UNLESS_WATCHED = {
    # each is wrong on negative values (clamp(-1) == -1) and keeps the oracle from seeing it
    "exits its server": b"import os\ndef clamp(value: int) -> int:\n"
    b"    if value < 0:\n        os._exit(0)\n    return min(value, 100)\n",
    "hangs": b"def clamp(value: int) -> int:\n"
    b"    while value < 0:\n        pass\n    return min(value, 100)\n",
    "will not import in the worker": b"import sys\n"
    b"if sys.argv[0].endswith('_differential_worker.py'):\n    raise ImportError('no')\n"
    b"def clamp(value: int) -> int:\n    return min(value, 100)\n",
}


@pytest.mark.parametrize("shape", sorted(WRONG_UNLESS_WATCHED))
def test_a_candidate_that_breaks_its_own_server_differs_from_the_reference(
    tmp_path: Path, shape: str
) -> None:
    """Threat (red team): a wrong candidate turned ``failed`` into an evaluator ``error``.

    Its own call server ending, hanging or refusing the import where the reference's answered
    was ``timed out`` or ``not applicable`` (an ``error`` when the check is hard, the
    evaluator's; ``skipped`` when advisory). The reference answered the same question in the
    same budget, so the candidate's failure to answer is its behaviour: ``differs``.
    """
    seen = _compare(tmp_path, WRONG_UNLESS_WATCHED[shape], call_timeout_s=2.0)
    assert seen.outcome == "differs", seen
    assert seen.reference.startswith(("returned 0", "imports")), seen
    assert seen.candidate.startswith("gave no answer"), seen


LOGGED_HALF = (
    b"def half(value: int) -> int:\n"
    b"    with open('calls.log', 'a') as log:\n"  # the server's working folder: its own tree
    b"        log.write(f'{value}\\n')\n"
    b"    if value < 0:\n        raise ValueError(value)\n"
    b"    return value // 2\n"
)


def test_each_side_counts_the_inputs_that_returned_and_raised(tmp_path: Path) -> None:
    """Evidence: how many compared inputs returned and how many raised, per state.

    The function logs every input it is called with; the candidate's server is called once per
    compared input, so its log gives the true counts (negative inputs raise).
    """
    seen = _compare(tmp_path, LOGGED_HALF, LOGGED_HALF, qualname="half")
    values = [int(v) for v in (tmp_path / "candidate" / "calls.log").read_text().split()]
    raised = sum(v < 0 for v in values)
    assert seen.outcome == "same" and seen.examples == len(values) == 60
    assert 0 < raised < 60
    assert (seen.candidate_returned, seen.candidate_raised) == (60 - raised, raised)
    assert (seen.reference_returned, seen.reference_raised) == (60 - raised, raised)
    assert seen.reason == ""


ALWAYS_RAISES = {
    # the first step needs an object no strategy draws (click-f634bd0176: a command's context)
    "an attribute the drawn value lacks": b"def half(value: int) -> int:\n"
    b"    return value.make_context().value // 2\n",
    # a guard the drawn values never pass
    "a guard no input passes": b"def half(value: int) -> int:\n"
    b"    if not isinstance(value, bytes):\n        raise TypeError(value)\n    return 0\n",
}


@pytest.mark.parametrize("shape", sorted(ALWAYS_RAISES))
def test_an_agreement_where_every_input_raised_says_so(tmp_path: Path, shape: str) -> None:
    """Both states raising the same exception on every input agree on nothing they return.

    The outcome stays ``same`` (the exceptions' types agree), with the counts and a reason; the
    check does not count it as a comparison (:func:`test_the_check_does_not_pass_on_raising_alone`).
    """
    source = ALWAYS_RAISES[shape]
    seen = _compare(tmp_path, source, source, qualname="half")
    assert seen.outcome == "same" and seen.examples == 60
    assert (seen.candidate_returned, seen.candidate_raised) == (0, 60)
    assert (seen.reference_returned, seen.reference_raised) == (0, 60)
    assert seen.reason == (
        "all 60 inputs raised before returning on both sides: "
        "the comparison says nothing about return values"
    )


ALL_RAISED = FunctionOutcome(
    function="m.f",
    outcome="same",
    reason="all 100 inputs raised before returning on both sides: "
    "the comparison says nothing about return values",
    examples=100,
    candidate_raised=100,
    reference_raised=100,
)
RETURNED = FunctionOutcome(
    function="m.g",
    outcome="same",
    examples=50,
    candidate_returned=40,
    candidate_raised=10,
    reference_returned=40,
    reference_raised=10,
)


def test_the_check_does_not_pass_on_raising_alone() -> None:
    """Only a function with some input returning in both states makes the check ``passed``."""
    alone = _fold([ALL_RAISED], hard=False)
    assert (alone.status, alone.detail) == (
        "skipped",
        "not applicable: m.f: same (all 100 inputs raised before returning on both sides: "
        "the comparison says nothing about return values)",
    )
    assert _fold([ALL_RAISED], hard=True).status == "error"
    both = _fold([ALL_RAISED, RETURNED], hard=False)
    assert (both.status, both.detail) == (
        "passed",
        "1 function(s), 50 inputs in both states (40 returned, 10 raised), 0 differences; "
        "m.f: same (all 100 inputs raised before returning on both sides: "
        "the comparison says nothing about return values)",
    )
