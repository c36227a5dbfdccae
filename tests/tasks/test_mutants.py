"""Mutants of the reference's added lines only, with mutmut's operators and two of our own."""

from __future__ import annotations

import pytest

from repogate.tasks._mutants import added_lines, mutants_of, mutate_file, spread

PATCH = b"""diff --git a/pkg/m.py b/pkg/m.py
--- a/pkg/m.py
+++ b/pkg/m.py
@@ -1,3 +1,6 @@
 def f(x):
-    return x
+    \"\"\"Doc.\"\"\"
+    if x > 100:
+        return 100
+    return x
"""  # the two context lines after the hunk's added lines follow (one of them blank)
PATCH += b" \n LIMIT = 7\n"
TEXT = 'def f(x):\n    """Doc."""\n    if x > 100:\n        return 100\n    return x\n\nLIMIT = 7\n'


def test_added_lines_are_read_from_the_hunks() -> None:
    assert added_lines(PATCH) == {"pkg/m.py": {2, 3, 4, 5}}


def test_only_added_lines_are_mutated_and_docstrings_left_alone() -> None:
    made = mutate_file("pkg/m.py", TEXT, {2, 3, 4, 5})
    assert {m.line for m in made} == {3, 4, 5}  # never LIMIT = 7 (line 7), never the docstring
    shown = {(m.operator, m.before, m.after) for m in made}
    assert ("operator_swap_op", "> 100", ">= 100") in shown  # mutmut's comparison swap
    assert ("operator_number", "100", "101") in shown  # mutmut's number operator
    assert ("_statement_removed", "return 100", "pass") in shown  # ours
    assert ("_return_swapped", "return x", "return None") in shown  # ours
    assert all(m.text != TEXT and not m.equivalent for m in made)
    assert mutants_of({"pkg/m.py": TEXT}, PATCH) == made


def test_a_mutant_with_the_references_own_ast_is_equivalent() -> None:
    """A one-quoted docstring mutated (mutmut's string operator) changes no behaviour: kept apart."""
    made = mutate_file("m.py", 'def f(x):\n    "Doc."\n    return x\n', {2, 3})
    docs = [m for m in made if m.line == 2]
    assert [m.after for m in docs] == ['"XXDoc.XX"', '"doc."', '"DOC."']
    assert all(m.equivalent for m in docs)
    assert [m.equivalent for m in made if m.line == 3] == [False, False]


def test_a_mutant_of_a_message_text_only_is_marked_so() -> None:
    """A survivor changing only a message is equivalent-looking, kept apart from real survivors."""
    text = "def f(x):\n    if x > 1:\n        raise ValueError('too big')\n    return x\n"
    made = {(m.before, m.after): m for m in mutate_file("m.py", text, {2, 3})}
    assert made[("'too big'", "'XXtoo bigXX'")].text_only
    assert not made[("> 1", ">= 1")].text_only
    assert not any(m.equivalent for m in made.values())


def test_a_string_code_reads_is_never_text_only() -> None:
    """A key, a compared value or a returned string is behaviour (seen on click-948d7a707a:
    ``extra["envvars"]`` mutated to ``extra["ENVVARS"]`` survived, and is a real survivor)."""
    text = "def f(d, x):\n    d['envvars'] = 1\n    return x == 'on' or 'off'\n"
    made = mutate_file("m.py", text, {2, 3})
    strings = [m for m in made if m.operator == "operator_string"]
    assert {m.before for m in strings} == {"'envvars'", "'on'", "'off'"}
    assert not any(m.text_only for m in strings)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('def f(opt: str, ctx: t.Optional["Context"]) -> str:\n    return opt\n', 1),
        ('def f(opt: str) -> "Context":\n    return opt\n', 1),
        ('def f(opt: str) -> str:\n    ctx: "Context | None" = None\n    return opt\n', 2),
    ],
    ids=["parameter", "return", "variable"],
)
def test_a_mutant_of_an_annotation_string_only_is_text_only(text: str, line: int) -> None:
    """A forward reference's text is read by no code at run time (unless it evaluates
    annotations): a survivor changing only it is equivalent-looking (seen on click-988c683963:
    ``t.Optional["Context"]`` mutated to ``t.Optional["context"]`` survived, counted as real)."""
    made = [m for m in mutate_file("m.py", text, {line}) if m.operator == "operator_string"]
    assert made and all("Context" in m.before for m in made)
    assert all(m.text_only and not m.equivalent for m in made)


@pytest.mark.parametrize("test", ["TYPE_CHECKING", "t.TYPE_CHECKING", "typing.TYPE_CHECKING"])
def test_code_only_type_checkers_run_is_never_mutated(test: str) -> None:
    """The body of ``if TYPE_CHECKING:`` never runs, so no test can kill its mutants (seen on
    click-0e0c00324a: ``from _typeshed import ReadableBuffer`` under ``if t.TYPE_CHECKING:``
    removed survived, counted as a real survivor); its ``else`` runs and is mutated."""
    text = f"if {test}:\n    from m import X\n    Y = 1\nelse:\n    Y = 2\n"
    made = mutate_file("m.py", text, {1, 2, 3, 4, 5})
    assert made and {m.line for m in made} == {5}


def test_a_file_that_does_not_parse_gives_no_mutant() -> None:
    assert mutate_file("m.py", "def (:\n", {1}) == []


def test_spread_is_even_and_deterministic() -> None:
    assert spread(list(range(10)), 4) == [0, 2, 5, 7]
    assert spread([1, 2], 5) == [1, 2]
