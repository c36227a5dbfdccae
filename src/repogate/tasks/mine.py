"""Mine candidate tasks from a repository's own history (``repogate tasks mine``).

Candidates are the first-parent commits of ``A..B`` (on a main line these are merged pull
requests and direct commits alike) that change both code and tests, optionally only those
touching ``--paths`` globs (the contracts' dialect, :mod:`repogate.globs`: ``*`` within one
folder, ``**`` across folders), the first ``--limit`` of them in history order (the selection rule is
fixed before anything runs). For each one:

- base = its first parent; hidden tests = the test-file part of its diff, reference = the rest,
  both as ``git diff`` of the commit with path filters, so the contract holds identifiers only;
- FAIL_TO_PASS and PASS_TO_PASS are left empty for validation to compute by running (base +
  hidden tests, reference + hidden tests), never declared by hand;
- requirement statement = the commit message (source ``commit message``);
- sentinel window = the next first-parent commits (up to three);
- cohort tags: files and top-level packages touched (a coupling proxy), generated files, manifest
  or lockfile, release notes touched, and the CODEOWNERS owners of the touched paths
  (consequence), read at the base.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from repogate import git
from repogate.gates.codeowners import owners_of
from repogate.globs import matches_any
from repogate.tasks.ingest import Candidate
from repogate.tasks.recipe import MANIFESTS, EnvMap, recipe_for

_TEST_DIRS = frozenset({"tests", "test", "testing"})
_LOCKFILES = ("uv.lock", "poetry.lock", "Pipfile.lock", "requirements.txt")
_RELEASE = ("CHANGES", "CHANGELOG", "HISTORY", "NEWS", "changelog.d/", "newsfragments/", "changes/")
_CODEOWNERS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
_FOLLOW_UPS = 3


def is_test_path(path: str) -> bool:
    """True for a path of the test suite.

    That is a path under a ``tests``/``test``/``testing`` folder, or a ``test_*.py``,
    ``*_test.py`` or ``conftest.py`` file.
    """
    parts = path.split("/")
    name = parts[-1]
    return (
        bool(_TEST_DIRS.intersection(parts[:-1]))
        or (name.startswith("test_") and name.endswith(".py"))
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def _is_code(path: str) -> bool:
    return path.endswith(".py") and not is_test_path(path)


def _cohort(repo: Path, base: str, paths: Sequence[str], name: str) -> dict[str, str]:
    code = [p for p in paths if not is_test_path(p)]
    tops = sorted(
        {
            p.split("/")[1] if p.startswith("src/") and p.count("/") > 1 else p.split("/")[0]
            for p in code
            if p.endswith(".py")
        }
    )
    cohort = {
        "source": "mined",
        "repo": name,
        "files": str(len(paths)),
        "packages": ",".join(tops)[:200],
        "coupling": "low" if len(tops) <= 1 else "high",
        "generated_touched": str(
            any("generated" in p or p.endswith("_pb2.py") for p in paths)
        ).lower(),
        "manifest_touched": str(
            any(p in MANIFESTS or p.rsplit("/", 1)[-1] in _LOCKFILES for p in paths)
        ).lower(),
        "release_notes_touched": str(any(p.startswith(_RELEASE) for p in paths)).lower(),
    }
    text = next((t for t in (git.show_file(repo, base, c) for c in _CODEOWNERS) if t), None)
    if text is not None:
        owners = owners_of(text.decode("utf-8", "replace"), code)
        names = sorted({o for found in owners.values() for o in found})
        cohort["owners"] = ",".join(names)[:200]
        cohort["consequence"] = "owned" if names else "unowned"
    return cohort


def select_commits(
    repo: Path, span: str, globs: Sequence[str], limit: int | None
) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Return the candidates of ``span`` (``A..B``): (commit, test paths, other paths), oldest first.

    Raises:
        GitError: a revision of the span is unknown.
    """
    start, _, end = span.partition("..")
    chosen = []
    for commit in git.log_range(repo, start, end or "HEAD", first_parent=True):
        parents = git.commit_parents(repo, commit)
        if not parents:
            continue
        paths = [c.path for c in git.changed_paths(repo, parents[0], commit)]
        if globs and not any(matches_any(p, globs) for p in paths):
            continue
        tests = tuple(p for p in paths if is_test_path(p))
        rest = tuple(p for p in paths if not is_test_path(p))
        if tests and any(_is_code(p) for p in rest):
            chosen.append((commit, tests, rest))
        if limit is not None and len(chosen) >= limit:
            break
    return chosen


def candidates(
    url: str,
    repo: Path,
    span: str,
    globs: Sequence[str],
    limit: int | None,
    env_map: EnvMap,
) -> Iterator[Candidate]:
    """Yield a draft contract for each candidate commit of ``span``.

    Args:
        url: the repository as contracts name it (a URL, resolved through ``--repo-cache``).
        repo: its local full-history copy.
        span: ``A..B``.
        globs: ``--paths`` globs in the contracts' dialect (:mod:`repogate.globs`; empty: any
            path).
        limit: at most this many candidates.
        env_map: recipes by repository.
    """
    parts = git.repo_url_parts(url)
    name = f"{parts[1]}/{parts[2]}" if parts else Path(url).name
    short = name.rsplit("/", 1)[-1]
    start, _, end = span.partition("..")
    line = git.log_range(repo, start, end or "HEAD", first_parent=True)
    for commit, tests, rest in select_commits(repo, span, globs, limit):
        base = git.commit_parents(repo, commit)[0]
        date, message = git.commit_message(repo, commit)
        environment, test_command, origin = recipe_for(env_map, name, None, repo, base)
        cohort = {**_cohort(repo, base, [*tests, *rest], name), "year": date[:4], "recipe": origin}
        after = line[line.index(commit) + 1 : line.index(commit) + 1 + _FOLLOW_UPS]
        oracles: dict[str, Any] = {
            "hidden_tests": {"commit": commit, "paths": list(tests)},
            "fail_to_pass": [],
            "pass_to_pass": [],
        }
        if test_command:
            oracles["test_command"] = test_command
        contract: dict[str, Any] = {
            "id": f"{short}-{commit[:10]}",
            "repo": url,
            "base_commit": base,
            "profile": "hermetic",
            "cohort": cohort,
            "requirement": {
                "statement": message or commit,
                "criteria": [
                    {
                        "id": "R1",
                        "claim": "what the commit message describes: its tests fail before and pass after",
                        "source": "commit message",
                        "kind": "stated",
                    }
                ],
            },
            "environment": environment,
            "oracles": oracles,
            "sentinel": {
                "follow_ups": list(after),
                "window": f"the next {len(after)} first-parent commit(s) after {commit[:10]}",
            },
            "reference": {"commit": commit, "exclude": list(tests)},
        }
        source = {"repo": url, "commit": commit, "date": date}
        yield Candidate(id=contract["id"], source=source, contract=contract)
