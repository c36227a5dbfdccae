"""What ``repogate gate`` evaluates: a pull request's base and head in the repository CI checked out.

Inputs come from the command line first, then from the variables GitHub Actions sets
(https://docs.github.com/en/actions/reference/workflows-and-actions/variables):

==========================  =====================================================================
value                       from
==========================  =====================================================================
repository                  ``--repo``, else ``GITHUB_WORKSPACE``, else the current folder
head (the candidate)        ``--head``, else ``GITHUB_SHA`` (on ``pull_request`` events, GitHub's
                            merge commit of the pull request into its base branch)
base (the authorised S0)    ``--base``, else the merge base of ``GITHUB_BASE_REF`` (the base
                            branch, read as ``origin/REF`` then ``REF``) and the head, else the
                            contract's ``base_commit`` when it names one
==========================  =====================================================================

The contract file supplies the oracles, permissions, authority and profile; the request replaces
its ``repo`` with the repository and its ``base_commit`` with the base (``target_commit``
cleared: the merge is into the base). A repository contract used for every pull request leaves
the base to the gate with a ``base_commit`` of zeros (:data:`GATE_SUPPLIES_BASE`, git's null id
cut to any length: ``"0000000"``). A contract that names a real base commit binds the gate to it:
the gate compares against that commit, and refuses (``UserInputError``) a base given or derived
otherwise that is another commit, rather than silently grading against a base the contract did
not authorise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from repogate import git
from repogate.contract import (
    Criterion,
    Oracles,
    PatchSource,
    Requirement,
    TransitionContract,
    load_contract,
)
from repogate.errors import GitError, UserInputError
from repogate.gates.protection import load_protection

__all__ = ["GATE_SUPPLIES_BASE", "GateRequest", "gate_supplies_base", "resolve_request"]

GATE_SUPPLIES_BASE = "0000000"
"""The ``base_commit`` a repository contract for ``repogate gate`` gives to leave the base to the
gate: zeros (any length from 7 to 40, git's null object id), which no commit is."""


def gate_supplies_base(base_commit: str) -> bool:
    """Whether a contract's ``base_commit`` leaves the base to the gate (all zeros)."""
    return set(base_commit) == {"0"}


@dataclass(frozen=True)
class GateRequest:
    """One pull request to gate.

    Attributes:
        repository: the repository's working folder (its ``.git`` holds base and head).
        base: the base commit (40 hex).
        head: the candidate commit (40 hex).
        contract: the contract, bound to ``repository`` and ``base``.
        said_by: where base and head came from, e.g. ``--base``, ``GITHUB_BASE_REF=main``.
    """

    repository: Path
    base: str
    head: str
    contract: TransitionContract
    said_by: tuple[str, ...]


def _commit(repo: Path, rev: str, what: str, fix: str) -> str:
    try:
        return git.rev_parse(repo, f"{rev}^{{commit}}")
    except GitError:
        raise UserInputError(f"{what} {rev!r} is not a commit of {repo}", fix) from None


def _base_from_ref(repo: Path, ref: str, head: str) -> str:
    fix = "fetch the base branch (actions/checkout with fetch-depth: 0) or give --base SHA"
    for candidate in (f"refs/remotes/origin/{ref}", f"refs/heads/{ref}", ref):
        if _names_commit(repo, candidate):
            tip = _commit(repo, candidate, "GITHUB_BASE_REF", fix)
            base = git.merge_base(repo, tip, head)
            if base is None:
                raise UserInputError(
                    f"base branch {ref} and head {head[:12]} share no history", fix
                )
            return base
    raise UserInputError(f"GITHUB_BASE_REF {ref!r} names no branch of {repo}", fix)


def _names_commit(repo: Path, rev: str) -> bool:
    try:
        git.rev_parse(repo, f"{rev}^{{commit}}")
    except GitError:
        return False
    return True


def _contract_base(repo: Path, contract: TransitionContract, file: Path) -> str | None:
    """The commit the contract's ``base_commit`` names in ``repo``; None when it leaves it to the gate.

    Raises:
        UserInputError: it names no commit of ``repo`` (a stale or mistyped base).
    """
    if gate_supplies_base(contract.base_commit):
        return None
    return _commit(
        repo,
        contract.base_commit,
        f"the base_commit of {file.name}",
        f'fetch it, or set base_commit = "{GATE_SUPPLIES_BASE}" to let the gate supply the base',
    )


def _graded(oracles: Oracles, head: str, fail_to_pass: Sequence[str]) -> Oracles:
    """Add the pull request's FAIL_TO_PASS ids; hidden tests default to their files at the head."""
    if not fail_to_pass:
        return oracles
    files = sorted({test_id.split("::", 1)[0] for test_id in fail_to_pass})
    hidden = oracles.hidden_tests or PatchSource(commit=head, paths=tuple(files))
    ids = tuple(dict.fromkeys([*oracles.fail_to_pass, *fail_to_pass]))
    return oracles.model_copy(update={"fail_to_pass": ids, "hidden_tests": hidden})


def _with_criterion(requirement: Requirement, fail_to_pass: Sequence[str]) -> Requirement:
    """A contract stating no criterion gets one: the pull request's FAIL_TO_PASS tests pass."""
    if requirement.criteria or not fail_to_pass:
        return requirement
    criterion = Criterion(
        id="PR",
        claim="the tests the pull request names as FAIL_TO_PASS pass",
        source="ticket",
        oracles=tuple(fail_to_pass),
    )
    return requirement.model_copy(update={"criteria": (criterion,)})


def resolve_request(
    contract_file: Path,
    *,
    base: str | None,
    head: str | None,
    repo: Path | None,
    reviews: Path | None,
    fail_to_pass: Sequence[str] = (),
    protection: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> GateRequest:
    """Resolve a gate's inputs from its options and GitHub Actions' variables.

    Args:
        contract_file: the contract TOML (oracles, permissions, authority, profile).
        base: ``--base``; None reads ``GITHUB_BASE_REF``, else the contract's ``base_commit``.
        head: ``--head``; None reads ``GITHUB_SHA``.
        repo: ``--repo``; None reads ``GITHUB_WORKSPACE``, else the current folder.
        reviews: ``--reviews``: a review-evidence JSON file for gate A (replaces the contract's).
        fail_to_pass: ``--fail-to-pass``: test ids the pull request must make pass, added to the
            contract's; their files are taken from the head as hidden tests (applied on the base,
            where they must fail, and on the candidate), unless the contract names hidden tests.
        protection: ``--protection``: GitHub's branch-protection JSON for the base branch
            (replaces the contract's ``authority.branch_protection``; read now, so a bad file is
            refused before anything runs).
        env: the environment to read (default ``os.environ``).

    Raises:
        UserInputError: no head or base given or derivable, a commit not in the repository, a
            folder that is not a git repository, a missing review file, a contract whose
            ``base_commit`` names a commit other than the base given or derived (or no commit of
            the repository), unless it is zeros (:data:`GATE_SUPPLIES_BASE`).
        ContractError: the contract file is unusable.
    """
    env = os.environ if env is None else env
    folder = (repo or Path(env.get("GITHUB_WORKSPACE") or Path.cwd())).resolve()
    if not _names_commit(folder, "HEAD") and not (folder / ".git").exists():
        raise UserInputError(
            f"{folder} is not a git repository", "run in the checked-out repository or give --repo"
        )
    said = []
    head_rev = head or env.get("GITHUB_SHA")
    if not head_rev:
        raise UserInputError("no head commit", "give --head SHA or set GITHUB_SHA")
    said.append("--head" if head else "GITHUB_SHA")
    head_sha = _commit(folder, head_rev, "head", "give a commit of the checked-out repository")
    if reviews is not None and not reviews.is_file():
        raise UserInputError(f"review file {reviews} does not exist", "give --reviews FILE")
    contract = load_contract(contract_file)
    named = _contract_base(folder, contract, contract_file)
    if base:
        base_sha = _commit(folder, base, "base", "give a commit of the checked-out repository")
        said.append("--base")
    elif env.get("GITHUB_BASE_REF"):
        ref = env["GITHUB_BASE_REF"]
        base_sha = _base_from_ref(folder, ref, head_sha)
        said.append(f"merge base of GITHUB_BASE_REF={ref} and the head")
    elif named is not None:
        base_sha = named
        said.append(f"base_commit of {contract_file.name}")
    else:
        raise UserInputError(
            "no base commit",
            "give --base SHA or set GITHUB_BASE_REF, or name the base_commit in the contract",
        )
    if named is not None and named != base_sha:
        raise UserInputError(
            f"the contract {contract_file.name} names base_commit {named[:12]}, but the gate's "
            f"base ({said[-1]}) is {base_sha[:12]}",
            f'give --base {named[:12]}, or set base_commit = "{GATE_SUPPLIES_BASE}" in the '
            "contract to let the gate supply the base",
        )
    authority = contract.authority
    if reviews is not None:
        authority = authority.model_copy(update={"reviews": str(reviews.resolve())})
    if protection is not None:
        load_protection(protection)
        authority = authority.model_copy(update={"branch_protection": str(protection.resolve())})
    bound = contract.model_copy(
        update={
            "repo": str(folder),
            "base_commit": base_sha,
            "target_commit": None,
            "authority": authority,
            "oracles": _graded(contract.oracles, head_sha, fail_to_pass),
            "requirement": _with_criterion(contract.requirement, fail_to_pass),
        }
    )
    return GateRequest(folder, base_sha, head_sha, bound, tuple(said))
