"""Read a pytest JUnit XML report, safely, into exact pytest node ids and outcomes.

Why JUnit and not ``pytest --report-log``: the JUnit writer ships with pytest, so reading it adds
nothing to the environment under test (``pytest-reportlog`` would be one more package in the target
environment, changing its resolved set and its digest, and ``uv sync`` removes packages the lock
does not name). The report is written with ``-o junit_family=xunit1`` so each ``<testcase>``
carries a ``file`` attribute next to the dotted ``classname``.

Node ids are rebuilt by inverting pytest's own mangling (``mangle_test_address`` in
``_pytest/junitxml.py``): pytest cuts the node id at the first ``[`` (so ``::`` and dots inside a
parameter id survive untouched in ``name``), splits the rest on ``::``, turns the file path's ``/``
into ``.`` and drops ``.py``. The inverse needs to know where the module ends in the dotted
``classname``. In order:

1. the ``file`` attribute, when its dotted form is a prefix of ``classname`` (the usual case);
2. otherwise (a test inherited from a base class in another module, where ``file`` names the
   defining module; or no ``file`` at all), the longest dotted prefix that names a file under
   ``rootdir``, trying ``/`` and ``.`` between parts (folders may contain dots);
3. otherwise, the trailing parts that start with an upper-case letter are taken as classes.

Outcomes are what happened to the test's body, as pytest's JUnit writer (``_pytest/junitxml.py``)
records it in each generation from pytest 3.x to 8.x (the dialects differ: pytest 3 writes an XFAIL
without a type and a ``<testsuite>`` root, and its node ids of methods hold an instance part,
``Class::()::test``, that its JUnit writer already drops; ``tests/oracles/junit_dialects/`` holds a
real report of each generation, ``scripts/junit_dialects.py`` regenerates them):

- no child element: ``passed``, the body ran to completion. A non-strict ``XPASS`` (an xfail-marked
  test whose body completed) is written exactly like a pass; when the harness's pytest plugin ran
  (:mod:`repogate.oracles._pytest_plugin`, told the hidden test files), it adds a property
  ``repogate_xpass`` to each one: ``hidden`` keeps it ``passed`` (the xfail mark is the hidden
  tests' own), any other value (or several values, one of them not ``hidden``: a second property
  cannot launder the first) makes it ``xpassed``, a completed body under an xfail mark the hidden
  tests did not declare (issue 9: such an XPASS is not a pass);
- ``<skipped type="pytest.xfail">`` (pytest 4.x to 8.x), or pytest 3's ``<skipped message="expected
  test failure">`` without a type: ``xfailed``, the body raised (or called ``pytest.xfail()``,
  from the test, a fixture, a conftest or the code under test; the report does not say which, and
  it does not matter). SWE-bench counts ``XFAIL`` as passed (``swebench/harness/grading.py``,
  ``test_passed``; SWE-bench issue #654); here it never is, see :mod:`repogate.oracles.grading`;
- ``<failure>``: ``failed`` (a strict ``XPASS`` is written as one, ``[XPASS(strict)]``, in every
  generation); any other ``<skipped>`` without a type (pytest's ``append_failure`` writes
  ``message="xfail-marked test passes unexpectedly"`` for a failed report of an xfail-marked
  test) is ``failed`` as well, except pytest's ``append_collect_skipped``, which writes a module
  skipped at collection (``pytest.importorskip``, ``allow_module_level``) as a typeless
  ``<skipped message="collection skipped">`` in every generation up to 8.x at least
  (pydata/xarray-4493 on pytest 6.2.1: a module skipping without dask was read as failed, and the
  reference's run refused as "pytest exited 0 but its report lists a failure"): ``skipped``;
- ``<error>``: ``error`` (setup or teardown error, or a collection error, whose id is the path of
  the file or folder that failed to collect);
- any other ``<skipped>``: ``skipped``.

``<testcase>`` elements are read straight from defusedxml's tree: every attribute pytest writes
(``classname``, ``name``, ``file``) is public there.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal
from xml.etree.ElementTree import Element, ParseError

import defusedxml
import defusedxml.ElementTree

from repogate.errors import RepogateError

TestOutcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
"""What happened to one test (see the module docstring); only ``passed`` is a pass."""

MAX_REPORT_BYTES = 256 * 1024 * 1024
"""Reports larger than this (bytes) are refused rather than parsed."""

_RANK: dict[TestOutcome, int] = {
    "passed": 0,
    "xpassed": 1,
    "skipped": 2,
    "xfailed": 3,
    "error": 4,
    "failed": 5,
}
_XFAIL_TYPE = "pytest.xfail"
_XFAIL_MESSAGE_PYTEST3 = "expected test failure"
_COLLECTION_SKIPPED = "collection skipped"  # LogXML's append_collect_skipped, no type
XPASS_PROPERTY = "repogate_xpass"
"""The JUnit property the harness's plugin writes on a non-strict XPASS (see the module docs)."""
HIDDEN_MARK = "hidden"
"""Its value when the xfail mark is the hidden tests' own."""
_ROOTS = ("testsuites", "testsuite")
_MAX_SPLIT_PARTS = 8

_VOLATILE = re.compile(
    # the folders of an absolute path in a parameter (a checkout's, a temporary folder's)
    r"(?P<folders>(?<=[\[\-])(?:/[^/\s\[\]]+)+/)"
    r"|(?P<iso>\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:[+-]\d{2}:?\d{2}|Z)?)"
    r"|(?P<date>\d{1,2}[-/.]\d{1,2}[-/.]\d{4})"
    r"|(?P<clock>\d{2}:\d{2}:\d{2}(?:\.\d+)?)"
    r"|(?P<address>0x[0-9a-fA-F]{6,})"
    r"|(?P<digits>\d{9,})"
)


def _mask(token: re.Match[str]) -> str:
    """The mark of one run-varying token: NUL and the kind of token (so shapes stay apart)."""
    return f"\x00{token.lastgroup}\x00"


class ReportError(RepogateError):
    """A test report is missing, too large, malformed, or refused as unsafe XML.

    Args:
        path: the report file.
        why: what is wrong with it.
    """

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"test report {path.name}: {why}")
        self.path = path
        self.why = why


def read_report(path: Path, *, max_bytes: int = MAX_REPORT_BYTES) -> bytes:
    """Return a report's bytes, read once (hash and parse the same bytes).

    Raises:
        ReportError: the file cannot be read, or is larger than ``max_bytes``.
    """
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ReportError(path, f"{size} bytes is larger than the {max_bytes}-byte limit")
        return path.read_bytes()
    except OSError as exc:
        raise ReportError(path, f"cannot be read ({exc.strerror})") from None


def parse_junit(
    path: Path, rootdir: Path | None = None, *, max_bytes: int = MAX_REPORT_BYTES
) -> dict[str, TestOutcome]:
    """Parse a pytest JUnit XML report file into ``{node id: outcome}``.

    Args:
        path: the report file (written by ``--junitxml`` with ``-o junit_family=xunit1``).
        rootdir: see :func:`parse_junit_bytes`.
        max_bytes: reports larger than this many bytes are refused.

    Returns:
        See :func:`parse_junit_bytes`.

    Raises:
        ReportError: the file is missing, larger than ``max_bytes``, or refused by
            :func:`parse_junit_bytes`.
    """
    return parse_junit_bytes(read_report(path, max_bytes=max_bytes), path, rootdir)


def parse_junit_bytes(
    data: bytes, source: Path, rootdir: Path | None = None
) -> dict[str, TestOutcome]:
    """Parse a pytest JUnit XML report's bytes into ``{node id: outcome}``.

    The XML is parsed with ``defusedxml`` with DTDs forbidden: pytest never writes one, so any DTD
    (entity expansion, external entities) is refused rather than expanded.

    Args:
        data: the report's bytes.
        source: the report's path, for error messages.
        rootdir: the checkout the tests ran in, used to place the module boundary in a dotted
            ``classname`` when the ``file`` attribute does not settle it; None skips that step.

    Returns:
        Node id (exactly as ``pytest --collect-only -q`` prints it) mapped to its outcome. A node
        id reported more than once keeps its worst outcome (failed > error > xfailed > skipped >
        xpassed > passed).

    Raises:
        ReportError: not well-formed XML, holds a DTD or entity declaration, or is not a JUnit
            document.
    """
    outcomes: dict[str, TestOutcome] = {}
    for case in _document(data, source).iter("testcase"):
        if not case.get("classname") and not case.get("name"):
            continue  # names no test: pytest 8's entry for a test its internal error cut short
        test_id = node_id(
            case.get("classname", ""), case.get("name", ""), case.get("file") or None, rootdir
        )
        outcome = _outcome(case)
        previous = outcomes.get(test_id)
        if previous is None or _RANK[outcome] > _RANK[previous]:
            outcomes[test_id] = outcome
    return outcomes


def _document(data: bytes, source: Path) -> Element:
    try:
        root: Element = defusedxml.ElementTree.fromstring(data, forbid_dtd=True)
    except defusedxml.DefusedXmlException as exc:
        raise ReportError(source, f"refused as unsafe XML ({type(exc).__name__})") from None
    except ParseError as exc:
        raise ReportError(source, f"not a JUnit XML document ({exc})") from None
    if root.tag not in _ROOTS:
        raise ReportError(source, f"not a JUnit XML document (its root is <{root.tag}>)")
    return root


def failure_texts(data: bytes, source: Path, rootdir: Path | None = None) -> dict[str, str]:
    """Return ``{node id: message and text}`` of each failed or errored test of a JUnit report.

    For people and for classifying a failure (a connection refused, a name that does not
    resolve); never for grading, which reads outcomes only. Each text is cut to 4,000 characters.

    Raises:
        ReportError: as :func:`parse_junit_bytes`.
    """
    texts: dict[str, str] = {}
    for case in _document(data, source).iter("testcase"):
        bad = [*case.findall("failure"), *case.findall("error")]
        if bad:
            test_id = node_id(
                case.get("classname", ""), case.get("name", ""), case.get("file") or None, rootdir
            )
            text = " ".join(f"{e.get('message', '')} {e.text or ''}" for e in bad)
            texts[test_id] = text[:4000]
    return texts


INTERNAL_ERROR_ID = "pytest.py::internal"
"""The id :func:`node_id` gives the entry pytest's junitxml writes for an internal error
(``classname="pytest" name="internal"``, ``LogXML.pytest_internalerror``): no test of the project."""


def _outcome(case: Element) -> TestOutcome:
    """The outcome of one ``<testcase>`` (see the module docstring for the map)."""
    if case.find("failure") is not None:
        return "failed"
    if case.find("error") is not None:
        return "error"
    types = {skip.get("type") for skip in case.findall("skipped")}
    if not types:
        marks = {p.get("value") for p in case.iter("property") if p.get("name") == XPASS_PROPERTY}
        return "xpassed" if marks - {HIDDEN_MARK} else "passed"
    if _XFAIL_TYPE in types:
        return "xfailed"
    if None in types:  # pytest 3's dialect, or its append_failure for an xfail-marked test
        typeless = {s.get("message") for s in case.findall("skipped") if s.get("type") is None}
        if typeless == {_XFAIL_MESSAGE_PYTEST3}:
            return "xfailed"
        return "skipped" if typeless == {_COLLECTION_SKIPPED} else "failed"
    return "skipped"


def node_id(classname: str, name: str, file: str | None, rootdir: Path | None = None) -> str:
    """Rebuild a pytest node id from a JUnit ``<testcase>``'s attributes.

    Args:
        classname: the dotted ``classname`` (module path, then classes); empty for an entry that
            stands for a whole file (a collection error), whose dotted path is then in ``name``.
        name: the ``name`` attribute: the test name with its parameter id, e.g. ``test_b[x::y]``.
        file: the ``file`` attribute (xunit1), or None.
        rootdir: the checkout, to resolve the module boundary when ``file`` does not.

    Returns:
        The node id, e.g. ``tests/test_x.py::TestA::test_b[1-a b]``; for a whole-file entry, the
        file's path.
    """
    if not classname:
        module, _classes = _split_module(name.split("."), file, rootdir)
        return module
    module, classes = _split_module(classname.split("."), file, rootdir)
    return "::".join([module, *classes, name])


def _dotted(file: str) -> str:
    return re.sub(r"\.py$", "", file.replace("/", "."))


def _split_module(
    parts: list[str], file: str | None, rootdir: Path | None
) -> tuple[str, list[str]]:
    dotted = ".".join(parts)
    if file is not None:
        prefix = _dotted(file)
        if dotted == prefix:
            return file, []
        if dotted.startswith(prefix + "."):
            return file, dotted[len(prefix) + 1 :].split(".")
    if rootdir is not None:
        for i in range(len(parts), 0, -1):
            for candidate in _joinings(parts[:i]):
                if (rootdir / candidate).is_file():
                    return candidate, parts[i:]
    cut = len(parts)
    while cut > 1 and parts[cut - 1][:1].isupper():
        cut -= 1
    return "/".join(parts[:cut]) + ".py", parts[cut:]


def _joinings(parts: Sequence[str]) -> Iterator[str]:
    if len(parts) > _MAX_SPLIT_PARTS:
        yield "/".join(parts) + ".py"
        return
    for seps in itertools.product("/.", repeat=len(parts) - 1):
        joined = parts[0] + "".join(sep + part for sep, part in zip(seps, parts[1:], strict=True))
        yield joined + ".py"


def volatile_key(test_id: str) -> str:
    """Return ``test_id`` with run-varying tokens masked, for the fallback match.

    Masked: the folders of an absolute path in a parameter (``[/tmp/x/tests/mod.py]``: the
    checkout's or a temporary folder's, which differ between machines and between fresh trees;
    the file name stays), dates and times (``2024-05-01 10:11:12.123456+00:00``,
    ``11-29-2026``), clock times, hex addresses of six or more digits (``0x7f3a9c...``, object
    reprs) and runs of nine or more digits (epoch timestamps). Each mask keeps the kind of token it hides, so ``[10:11:12 2026-12-01]`` and
    ``[12-01-2026 10:11:12]`` stay two keys. An id with none of these is returned unchanged.
    """
    return _VOLATILE.sub(_mask, test_id)


def swebench_forms(test_id: str) -> set[str]:
    r"""Return the ids SWE-bench's pytest log parsers read off a result line naming ``test_id``.

    SWE-bench made its datasets' FAIL_TO_PASS / PASS_TO_PASS ids from ``pytest -rA`` lines such
    as ``PASSED tests/test_cli.py::test_locate_app[cliapp.factory- create_app2("foo", "bar") ]``,
    reading the id as the first run of non-blank characters after the status
    (``swebench/harness/log_parsers/python.py``: ``_PYTEST_STATUS_FIRST``, a ``\S+`` group), so an id
    whose parameter holds a blank is cut there (``test_locate_app[cliapp.factory-``). Its parser
    for requests, pylint and pydicom (``parse_log_pytest_options``) also cuts a parameter that
    starts with ``/`` (a file path) to its last part, ``[/a/b/c.py]`` to ``[/c.py]``.

    Args:
        test_id: a node id as a JUnit report gives it.

    Returns:
        The cut form, plus the path-shortened form where it applies (only ``test_id`` itself when
        neither changes it).
    """
    words = test_id.split()
    cut = words[0] if words else test_id
    forms = {cut}
    option = re.fullmatch(r"(.*?)\[(.*)\]", cut)
    if option:
        main, value = option.groups()
        if value.startswith("/") and not value.startswith("//") and "*" not in value:
            forms.add(f"{main}[/{value.split('/')[-1]}]")
    return forms


def looks_truncated(test_id: str) -> bool:
    """Return True for an id cut short as SWE-bench's parser cuts it (``[`` never closed)."""
    return "[" in test_id and not test_id.endswith("]")


def pytest4_id(test_id: str) -> str:
    """``test_id`` without pytest 3's instance part (``Class::()::test`` -> ``Class::test``)."""
    return test_id.replace("::()::", "::")


def _worst(candidates: Sequence[str], outcomes: Mapping[str, TestOutcome] | None) -> str | None:
    if len(candidates) == 1:
        return candidates[0]
    if not candidates or outcomes is None:
        return None
    return max(sorted(candidates), key=lambda t: _RANK[outcomes[t]])


def match_ids(
    expected: Iterable[str], observed: Mapping[str, TestOutcome] | Iterable[str]
) -> dict[str, str | None]:
    """Match expected test ids to the ids a run reported: exact first, then guarded fallbacks.

    In order, for an expected id the run did not report exactly:

    1. **run-varying values**: some parametrized ids embed values that change from run to run
       (``datetime.now()`` in a marshmallow parametrization, an object's address), so an id
       recorded once never appears again. This applies only when the expected id holds a
       run-varying token (see :func:`volatile_key`) and exactly one reported id has the same
       masked form;
    2. **pytest 3's node ids**: ``Class::()::test`` stands for ``Class::test`` (pytest 4 dropped
       the instance part; the JUnit report never has it);
    3. **SWE-bench's log parser**: the reported ids whose :func:`swebench_forms` include the
       expected id (a dataset id cut at a blank, ``test_locate_app[cliapp.factory-``), as
       SWE-bench's own grading finds it. When several reported ids share that form, SWE-bench's
       log holds one line for each and its status map keeps one of them; here the id with the
       worst outcome stands for them all (failed > error > xfailed > skipped > xpassed > passed),
       so a cut id passes only when every test it may name passed. Without outcomes (``observed``
       given as ids only), several such ids match nothing.

    Anything else stays unmatched (None): an ambiguous match is never guessed.

    Args:
        expected: the contract's ids (FAIL_TO_PASS, PASS_TO_PASS).
        observed: the ids a run reported, or its ``{node id: outcome}`` mapping (which lets the
            SWE-bench fallback pick the worst of several ids).

    Returns:
        Each expected id mapped to the reported id it stands for, or None.
    """
    outcomes = observed if isinstance(observed, Mapping) else None
    seen = set(observed)
    by_key: dict[str, list[str]] = {}
    by_form: dict[str, list[str]] = {}
    for test_id in sorted(seen):
        by_key.setdefault(volatile_key(test_id), []).append(test_id)
        for form in swebench_forms(test_id) - {test_id}:
            by_form.setdefault(form, []).append(test_id)
    matched: dict[str, str | None] = {}
    for test_id in expected:
        if test_id in seen:
            matched[test_id] = test_id
            continue
        key = volatile_key(test_id)
        candidates = by_key.get(key, []) if key != test_id else []
        hit = candidates[0] if len(candidates) == 1 else None
        plain = pytest4_id(test_id)
        if hit is None and plain in seen:
            hit = plain
        if hit is None:
            hit = _worst(by_form.get(plain, []), outcomes)
        matched[test_id] = hit
    return matched
