"""Reading test runs for validation: outcomes, network and service failures, bare ids.

Helpers of :mod:`repogate.tasks.validate`, kept apart so each stays one concern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from repogate.contract import Service
from repogate.oracles.grading import named
from repogate.oracles.junit import TestOutcome, failure_texts, looks_truncated, match_ids
from repogate.oracles.pytest_runner import TestRun

FAILING: frozenset[TestOutcome] = frozenset({"failed", "error"})
PASSED: frozenset[TestOutcome] = frozenset({"passed"})


def outcome_of(run: TestRun, test_id: str) -> TestOutcome | None:
    """The id's outcome; ``error`` when it is absent because its file failed to collect.

    The id is matched as the grader matches it (:func:`~repogate.oracles.junit.match_ids`): an
    id holding a run-varying value (a tree's absolute path) reads another run's spelling of it.
    """
    found = run.outcomes.get(test_id)
    if found is None:  # the exact spelling first: matching costs a pass over the whole run
        hit = match_ids([test_id], run.outcomes)[test_id]
        found = None if hit is None else run.outcomes[hit]
    if found is None and run.outcomes.get(test_id.split("::", 1)[0]) == "error":
        return "error"
    return found


def always(runs: Sequence[TestRun], test_id: str, allowed: frozenset[TestOutcome]) -> bool:
    return all(outcome_of(r, test_id) in allowed for r in runs)


def resolve_ids(
    declared: Sequence[str], reported: Mapping[str, TestOutcome]
) -> tuple[dict[str, str], list[str], list[str]]:
    """Map declared ids to reported node ids.

    A full id (``path::name``) is matched as the grader matches it
    (:func:`~repogate.oracles.junit.match_ids`), which includes an id SWE-bench's log parser cut
    at a blank (``test_locate_app[cliapp.factory-``): the reported ids of that cut form, the one
    with the worst outcome in ``reported`` standing for them all. A bare name (SWE-bench's ids for sympy and django
    are function names) is looked up among the reported ids whose last ``::`` part equals it.

    Returns:
        (declared -> reported, ids not found, bare names found in more than one file).
    """
    full = [t for t in declared if "::" in t]
    matched = match_ids(full, reported)
    by_name: dict[str, list[str]] = {}
    for test_id in reported:
        by_name.setdefault(test_id.rsplit("::", 1)[-1], []).append(test_id)
    resolved: dict[str, str] = {}
    missing: list[str] = []
    ambiguous: list[str] = []
    for test_id in declared:
        hit = matched.get(test_id) if "::" in test_id else None
        if "::" not in test_id:
            found = by_name.get(test_id, [])
            files = {f.split("::", 1)[0] for f in found}
            if len(files) > 1:
                ambiguous.append(test_id)
                continue
            hit = found[0] if len(found) == 1 else None
        if hit is None:
            missing.append(test_id)
        else:
            resolved[test_id] = hit
    return resolved, missing, ambiguous


def missing_detail(missing: Sequence[str]) -> str:
    """The rejection's sentence for declared ids no run reported, naming cut ones as such."""
    cut = [t for t in missing if looks_truncated(t)]
    text = f"{len(missing)} declared id(s) are not in the collected suite: {named(missing)}"
    if cut:
        text += (
            f"; {len(cut)} of them cut at a blank as SWE-bench's log parser cuts ids, and no "
            f"reported id has that form: {named(cut)}"
        )
    return text


# What a test that reached for the network prints when there is none (requests/urllib3, socket).
_NETWORK_ERROR = re.compile(
    r"ConnectionError|ConnectionRefused|NewConnectionError|Max retries exceeded|"
    r"Name or service not known|Temporary failure in name resolution|Network is unreachable|"
    r"getaddrinfo failed|gaierror|No address associated with hostname",
)


def _failed_where(
    runs: Sequence[TestRun], tree: Path, matches: Callable[[str], object]
) -> set[str]:
    """Ids whose failure text in any of ``runs``' JUnit reports ``matches``."""
    found: set[str] = set()
    for run in runs:
        if run.report_path is not None and run.report_path.is_file():
            texts = failure_texts(run.report_path.read_bytes(), run.report_path, tree)
            found |= {t for t, text in texts.items() if matches(text)}
    return found


def network_failures(runs: Sequence[TestRun], tree: Path) -> set[str]:
    """Ids that failed on a network error in any of ``runs`` (read from their JUnit reports)."""
    return _failed_where(runs, tree, _NETWORK_ERROR.search)


# A TLS failure: in a sandbox whose only network is loopback, only a local peer (a declared
# service) can have answered. ssl, urllib3, requests.
_TLS_ERROR = re.compile(
    r"SSLError|\[SSL|CERTIFICATE_VERIFY_FAILED|WRONG_VERSION_NUMBER|wrong version number|"
    r"unknown protocol|EOF occurred in violation|record layer failure",
)
# A connection failure: a service's only when the text names the service's address.
_CONNECTION_ERROR = re.compile(
    r"ConnectionError|ConnectionRefused|Connection refused|Max retries exceeded|"
    r"RemoteDisconnected|BadStatusLine|Connection reset",
)
_LOOPBACK = ("127.0.0.1", "localhost")


def service_addresses(services: Sequence[Service]) -> set[tuple[str, int]]:
    """The (host, port) pairs of ``services``: a TLS front's port, and every URL in their ``env``.

    A loopback host stands for both of its spellings (``127.0.0.1``, ``localhost``).
    """
    found: set[tuple[str, int]] = set()
    for service in services:
        if service.port is not None:
            found.add(("127.0.0.1", service.port))
        for value in service.env.values():
            try:
                parts = urlsplit(value)
                host, port = parts.hostname, parts.port
            except ValueError:
                continue
            if host and port:
                found.add((host, port))
    return found | {(h, p) for host, p in found if host in _LOOPBACK for h in _LOOPBACK}


def service_failures(
    runs: Sequence[TestRun], tree: Path, addresses: set[tuple[str, int]]
) -> set[str]:
    """Ids that failed on a declared service not offering what the test asked.

    With services declared (``addresses`` not empty): a TLS failure (the sandbox has loopback
    only, so a local service answered), or a connection failure whose text names a service's
    address, as ``host:port`` or urllib3's ``host='h', port=p`` (urllib's own message names no
    address: such a refusal stays ``needs_network``).
    """
    if not addresses:
        return set()
    spelled = [re.escape(f"{h}:{p}") for h, p in addresses]
    spelled += [rf"host='{re.escape(h)}', port={p}\b" for h, p in addresses]
    named = re.compile(rf"(?:{'|'.join(spelled)})(?!\d)")
    return _failed_where(
        runs,
        tree,
        lambda text: (
            _TLS_ERROR.search(text) or (_CONNECTION_ERROR.search(text) and named.search(text))
        ),
    )


def tests_of(outcomes: Mapping[str, TestOutcome]) -> dict[str, TestOutcome]:
    """Reported tests and their outcomes, without the file-level entries of collection errors."""
    return {t: o for t, o in outcomes.items() if "::" in t}
