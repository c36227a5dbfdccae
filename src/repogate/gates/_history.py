"""The sentinel's tests: which to run after a follow-up, their results in real history, regressions.

Selection (per follow-up commit ``C`` replayed against parent ``P``): the test files ``P..C``
touched that still exist at ``C``, plus the files of the contract's FAIL_TO_PASS and PASS_TO_PASS
ids that exist at ``C``. Whole files are run, not single ids: a node id a later commit removed would
make pytest stop with "not found" and hide every other result, and whole files cover what the
follow-up's author saw pass. A test file is a ``.py`` file named ``test_*.py`` or ``*_test.py``
(pytest's default ``python_files``).

The tests that passed at ``C`` in real history are the yardstick; a test among them that does not
pass on the replayed state is a regression attributed to the candidate. A selected file that yields
no result at all in history (or only a file-level error: a collection error) cannot be collected
there; that step is an ``error`` (the evaluator's or the history's), never a regression.

History results depend only on the commit, the environment and the selection, so they are cached on
disk under ``sha256(commit, environment digest, selection)``; repeated attempts read them back.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath

from repogate import git

TestRunner = Callable[[Path, Sequence[str]], Mapping[str, str]]
"""Runs tests: ``(checkout folder, test files or ids) -> {pytest node id: outcome}``.

Outcomes are ``passed``, ``failed``, ``error`` or ``skipped`` (see :mod:`repogate.oracles.junit`);
a collection error is reported under the file's path with ``error``; nothing run is ``{}``.
"""


def is_test_file(path: str) -> bool:
    """Return True for pytest's default test file names (``test_*.py``, ``*_test.py``)."""
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def select_tests(
    repo: Path, commit: str, parent: str, contract_ids: Sequence[str]
) -> tuple[str, ...]:
    """Return the test files to run for follow-up ``commit`` (see the module docstring), sorted.

    Raises:
        GitError: a commit is unknown.
    """
    touched = {c.path for c in git.changed_paths(repo, parent, commit) if c.status != "D"}
    wanted = {p for p in touched if is_test_file(p)}
    for test_file in {i.split("::", 1)[0] for i in contract_ids}:
        if test_file not in wanted and git.show_file(repo, commit, test_file) is not None:
            wanted.add(test_file)
    return tuple(sorted(wanted))


def _in_file(test_id: str, test_file: str) -> bool:
    return test_id == test_file or test_id.startswith(test_file + "::")


def uncollected(results: Mapping[str, str], files: Sequence[str]) -> tuple[str, ...]:
    """Return the files of ``files`` that gave no test result (none, or only a file-level error)."""
    return tuple(
        f for f in files if not any(_in_file(t, f) and t != f for t in results) or f in results
    )


def regressions(
    history: Mapping[str, str], replayed: Mapping[str, str], files: Sequence[str]
) -> tuple[str, ...]:
    """Return the ids of ``files`` that passed in history and did not pass on the replayed state."""
    return tuple(
        sorted(
            t
            for t, outcome in history.items()
            if outcome == "passed"
            and replayed.get(t) != "passed"
            and any(_in_file(t, f) for f in files)
        )
    )


def run_in_tree(
    repo: Path, tree: str, files: Sequence[str], run_tests: TestRunner, work: Path | None
) -> dict[str, str]:
    """Check ``tree`` out into a fresh folder under ``work`` and run ``files`` there.

    Raises:
        GitError: the tree is unknown.
    """
    with tempfile.TemporaryDirectory(prefix="repogate-sentinel-", dir=work) as tmp:
        checkout = Path(tmp) / "checkout"
        git.checkout_tree(repo, tree, checkout)
        return dict(run_tests(checkout, files))


class HistoryCache:
    """Real-history test results on disk, one JSON file per (commit, environment, selection).

    Args:
        root: the cache folder (made when first written).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    @staticmethod
    def key(commit: str, environment_digest: str, files: Sequence[str]) -> str:
        """Return the cache key: sha256 (hex) over the commit, environment digest and selection."""
        payload = json.dumps([commit, environment_digest, sorted(files)], separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / "history" / f"{key}.json"

    def get(self, key: str) -> dict[str, str] | None:
        """Return the cached results for ``key``, or None (absent or unreadable)."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        results = data.get("results") if isinstance(data, dict) else None
        return dict(results) if isinstance(results, dict) else None

    def put(self, key: str, record: Mapping[str, object]) -> None:
        """Write ``record`` (holding ``results``) for ``key`` atomically (temp file, rename)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle, sort_keys=True)
        Path(tmp).replace(path)


def history_results(
    repo: Path,
    commit: str,
    files: Sequence[str],
    environment_digest: str,
    cache: HistoryCache,
    run_tests: TestRunner,
    work: Path | None,
) -> tuple[dict[str, str], bool]:
    """Return the results of ``files`` at ``commit`` in real history, and whether they were cached.

    Raises:
        GitError: the commit is unknown.
    """
    key = cache.key(commit, environment_digest, files)
    cached = cache.get(key)
    if cached is not None:
        return cached, True
    results = run_in_tree(repo, commit, files, run_tests, work)
    record = {
        "commit": commit,
        "environment_digest": environment_digest,
        "files": list(files),
        "results": results,
    }
    cache.put(key, record)
    return results, False
