"""A patch that changes a generator is regenerated with the base's generator too.

Freshness (:mod:`repogate.gates.generated`) runs the candidate's own generator. A patch that
rewrites the generator and hand-edits its output then passes: the rewritten generator emits the
hand edit (or nothing at all). So when the patch changes a generator's own code, a second tree is
made: the candidate with the generator's files put back as the base has them. Regenerating there
must leave the candidate's outputs unchanged; if it does not, the outputs are not what the
authoritative generator makes from the candidate's inputs, and ``generated_artifacts_fresh``
fails. Either way a changed generator is a change that needs its owner's review (as CODEOWNERS
review asks for any change to a tool others depend on): the receipt names its paths in
``needs_owner_review``.

Which files are the generator's own: the contract's ``program`` globs, or else the files its
command names (``python tools/gen.py`` names ``tools/gen.py``; ``python -m tools.gen`` names
``tools/gen.py`` and ``tools/gen/**``).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from repogate import git
from repogate.contract import Generator
from repogate.git import ChangedPath
from repogate.globs import matches_any
from repogate.receipt import Check, Observation


def _named_files(command: str) -> tuple[str, ...]:
    """Return the repository files a generator command names (see the module docstring)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return ()
    named: list[str] = []
    for i, word in enumerate(words):
        if i > 0 and words[i - 1] == "-m":
            module = word.replace(".", "/")
            named += [f"{module}.py", f"{module}/**", f"src/{module}.py", f"src/{module}/**"]
        elif not word.startswith("-") and ("/" in word or word.endswith(".py")):
            named.append(word.removeprefix("./"))
    return tuple(named)


def changed_generator_files(
    generators: Sequence[Generator], changed: Sequence[ChangedPath]
) -> tuple[str, ...]:
    """Return the changed paths that are a generator's own code, sorted.

    Args:
        generators: the contract's generators.
        changed: the patch's changed paths (base to candidate).

    Returns:
        Paths matching a generator's ``program`` globs, or (when it declares none) the files its
        command names.
    """
    found: set[str] = set()
    for gen in generators:
        globs = gen.program or _named_files(gen.command)
        found |= {c.path for c in changed if globs and matches_any(c.path, globs)}
    return tuple(sorted(found))


def with_base_generator(repo: Path, base: str, candidate: str, program: Sequence[str]) -> str:
    """Return a commit (no ref) of the candidate tree with ``program`` as the base has it.

    Args:
        repo: a repository holding both commits.
        base: the base commit.
        candidate: the candidate commit.
        program: the generator paths to restore (a path absent at the base is removed).

    Returns:
        The new commit's SHA, whose parent is ``candidate``.

    Raises:
        GitError: a commit is unknown or git failed.
    """
    files = {path: git.show_file(repo, base, path) for path in program}
    tree = git.tree_with_files(repo, git.tree_of(repo, candidate), files)
    return git.commit_tree(repo, tree, [candidate], "candidate with the base's generator")


def judge_generator_change(
    by_candidate: Observation, by_base: Observation, program: Sequence[str]
) -> Observation:
    """Combine the two regenerations into one ``generated_artifacts_fresh`` observation.

    Args:
        by_candidate: freshness with the candidate's generator (:func:`check_generated`).
        by_base: freshness of the tree :func:`with_base_generator` made, with no changed paths.
        program: the generator paths the patch changed.

    Returns:
        ``by_candidate`` when it did not pass (its verdict stands). Otherwise ``failed`` when the
        base's generator changes the candidate's outputs, ``error`` when it could not run (the
        check cannot tell), else ``passed``; the detail and ``needs_owner_review`` name the
        changed generator files. ``details["base_generator"]`` holds the second run's details.
    """
    names = ", ".join(program)
    details = {
        **by_candidate.details,
        "generator_changed": list(program),
        "needs_owner_review": list(program),
        "base_generator": by_base.details,
    }
    first = by_candidate.checks[0]
    if first.status != "passed":
        return Observation(checks=by_candidate.checks, details=details)
    second = by_base.checks[0]
    review = f"generator changed ({names}): needs its owner's review"
    if second.status == "passed":
        detail = f"{first.detail}; {review}"
        return Observation(checks=(first.model_copy(update={"detail": detail}),), details=details)
    if second.status == "failed":
        outputs = sorted({e[3:] for e in by_base.details.get("regenerated", [])} - set(program))
        detail = (
            f"the patch changes the generator ({names}); the base's generator regenerates "
            f"{', '.join(outputs)} differently: a changed generator needs its owner's review"
        )
    else:
        detail = f"the base's generator could not check the changed generator ({names}): "
        detail += second.detail
    check = Check(name=first.name, status=second.status, detail=detail, kind=second.kind)
    return Observation(checks=(check,), details=details)
