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
there (:func:`uncollected`); it is left out, file by file, and the other files' results stand. A
step none of whose files can be collected is an ``error`` (the evaluator's or the history's), never
a regression.

History results depend only on the commit, the environment and the selection, so they are cached on
disk under ``sha256(commit, environment digest, selection)``; repeated attempts read them back. One
entry is made by one worker at a time (a file lock beside it); a worker wanting it meanwhile waits.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future
from contextlib import AbstractContextManager
from pathlib import Path, PurePosixPath

from repogate import git
from repogate._locks import locked, write_atomic
from repogate.oracles.junit import match_ids

RULES = "per-file-collection"
"""How history results are collected: part of their cache key (see :meth:`HistoryCache.key`)."""

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
    named = sorted({i.split("::", 1)[0] for i in contract_ids} - touched)
    return tuple(
        sorted({p for p in touched if is_test_file(p)} | git.existing_paths(repo, commit, named))
    )


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
    """Return the ids of ``files`` that passed in history and did not pass on the replayed state.

    Ids are matched as the grader matches them (:func:`repogate.oracles.junit.match_ids`): exactly,
    else through the run-varying fallback, so an id that embeds ``datetime.now()`` is the same
    test in history and on the replayed state.
    """
    passed = [
        t
        for t, outcome in history.items()
        if outcome == "passed" and any(_in_file(t, f) for f in files)
    ]
    matched = match_ids(passed, replayed)
    return tuple(
        sorted(t for t in passed if (hit := matched[t]) is None or replayed[hit] != "passed")
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
        """Return the cache key: sha256 (hex) over the commit, environment digest and selection.

        The key also holds :data:`RULES`, so results recorded under older collection rules (a
        whole session lost to one file) are not read back.
        """
        payload = json.dumps(
            [RULES, commit, environment_digest, sorted(files)], separators=(",", ":")
        )
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
        write_atomic(self._path(key), json.dumps(record, sort_keys=True))

    def lock(self, key: str) -> AbstractContextManager[None]:
        """Return the lock of ``key``'s entry: its one builder holds it, other workers wait."""
        return locked(self._path(key).with_suffix(".lock"))


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
    with cache.lock(key):  # two workers wanting one commit's results run its tests once
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


class HistoryRuns:
    """Real-history results per follow-up commit: selected once, then run lazily or prefetched.

    With a ``pool``, :meth:`prefetch` submits every follow-up's history run at once, so they run
    beside the replay; without one, :meth:`get` runs each when it is first asked for.

    Args:
        repo: the repository (full history).
        contract_ids: the contract's FAIL_TO_PASS and PASS_TO_PASS ids (for the selection).
        environment_digest: part of the cache key.
        cache: the on-disk cache.
        run_tests: the test runner.
        work: folder for temporary checkouts.
        pool: an executor to prefetch on, or None.
    """

    def __init__(
        self,
        repo: Path,
        contract_ids: Sequence[str],
        environment_digest: str,
        cache: HistoryCache,
        run_tests: TestRunner,
        work: Path | None,
        pool: Executor | None = None,
    ) -> None:
        self._repo, self._ids, self._env = repo, tuple(contract_ids), environment_digest
        self._cache, self._run, self._work, self._pool = cache, run_tests, work, pool
        self._files: dict[str, tuple[str, ...]] = {}
        self._futures: dict[str, Future[tuple[dict[str, str], bool]]] = {}

    @property
    def prefetching(self) -> bool:
        """True when history runs beside the replay (a pool was given)."""
        return self._pool is not None

    def files(self, commit: str, parent: str) -> tuple[str, ...]:
        """Return the selection for ``commit`` (see :func:`select_tests`), computed once."""
        if commit not in self._files:
            self._files[commit] = select_tests(self._repo, commit, parent, self._ids)
        return self._files[commit]

    def _results(self, commit: str, files: tuple[str, ...]) -> tuple[dict[str, str], bool]:
        return history_results(
            self._repo, commit, files, self._env, self._cache, self._run, self._work
        )

    def prefetch(self, commits: Sequence[tuple[str, str]]) -> None:
        """Submit the history runs of ``(commit, parent)`` pairs to the pool (no-op without one)."""
        if self._pool is None:
            return
        for commit, parent in commits:
            files = self.files(commit, parent)
            if files and commit not in self._futures:
                self._futures[commit] = self._pool.submit(self._results, commit, files)

    def get(self, commit: str, parent: str) -> tuple[dict[str, str], bool]:
        """Return ``(results, cached)`` for ``commit``: waiting for a prefetch, or running now."""
        future = self._futures.get(commit)
        if future is not None:
            return future.result()
        return self._results(commit, self.files(commit, parent))
