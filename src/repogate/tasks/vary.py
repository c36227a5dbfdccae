"""``repogate tasks vary``: a derived task whose base carries one injected failure or ablation.

The derived task lives in its own folder ``<out>/<id>+<kind>/``:

- ``repo/``: a new repository holding the parent's base history (the base and its ancestors
  only) plus one injected commit on top of the base (branch ``main``). The parent's repository
  is never written. The sentinel's follow-ups are copied over the injected commit with the
  injection kept in each, so the derived sentinel replays the same later history; a
  ``target_commit`` and a bare ``follow_up_count`` are dropped (recorded in ``parameters``), so
  the derived merge target is the injected base.
- ``contract.toml``: the parent contract with ``id = "<id>+<kind>"``, ``repo = "repo"``,
  ``base_commit`` = the injected commit, a cohort tag ``variant = <kind>`` (reports pair it with
  the parent by ``derivation.parent_id``) and ``[derivation]`` recording the kind, the parent and
  its base, the paths planted and the parameters chosen.

The history between the base and the sentinel's follow-ups and the patches' commits is copied
over the injected commit with its ancestry, the injection kept in each copy
(:func:`_copied_history`), so the sentinel takes each follow-up's change against the same commit
as for the parent task. A patch named by a commit names its copy (same ``paths`` and
``exclude``); a patch file is moved over the injected commit as a commit of the files it
rewrites (the injection put into them again). Either way the gold agent submits the reference
change and the hidden tests add only test files.
Relative paths of the contract (``authority.reviews``) are rewritten relative to the new folder.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import tomli_w

from repogate import git
from repogate._files import read_bytes_nofollow
from repogate.contract import Derivation, PatchSource, TransitionContract, load_contract
from repogate.errors import PatchApplyError, UserInputError
from repogate.patches import load_patch, touched_paths
from repogate.tasks._injections import INJECTORS, BaseView, Files, Planted, ablate
from repogate.vocabulary import INJECTIONS, TASK_ID_MAX, DerivationKind

REPO = "repo"
"""The derived repository's folder, beside ``contract.toml``."""


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", path).strip("-.") or "path"


def derived_id(parent: str, kind: DerivationKind, ablated: str | None = None) -> str:
    """Return ``<parent>+<kind>`` (``<parent>+ablate-<path slug>`` for an ablation).

    Raises:
        UserInputError: the id would pass :data:`TASK_ID_MAX` characters.
    """
    task_id = f"{parent}+{kind}" + (f"-{_slug(ablated)}" if ablated else "")
    if len(task_id) > TASK_ID_MAX:
        raise UserInputError(
            f"derived id {task_id[:60]}... is longer than {TASK_ID_MAX} characters",
            "shorten the parent contract's id",
        )
    return task_id


def _dropped_history(contract: TransitionContract) -> dict[str, str]:
    """Name the later history the derived contract does not carry (see the module docstring)."""
    dropped = {}
    if contract.target_commit:
        dropped["target_commit_dropped"] = contract.target_commit
    if contract.sentinel.follow_up_count and not contract.sentinel.follow_ups:
        dropped["follow_up_count_dropped"] = str(contract.sentinel.follow_up_count)
    return dropped


def _copied_history(
    repo: Path, contract: TransitionContract, plant: Planted, heads: list[str]
) -> dict[str, str]:
    """Copy the later history up to ``heads`` over the injected commit, injection kept.

    Every commit that descends from the parent's base and is an ancestor of a head (or one) is
    copied with the same parents (the base replaced by the injected commit, other copied
    parents by their copies; a parent outside that history stays), so every ancestry the
    sentinel reads (which commit a follow-up's change is taken against) and every commit's own
    change are kept. In each copy, a planted path the commit left as the parent's base had it
    keeps its injected version, and one it changed gets the injection put in again
    (``replant``). Returns the copies by original SHA (the base maps to the injected commit).
    """
    base = contract.base_commit
    later: set[str] = set()
    for sha in heads:
        later.update(git.log_range(repo, base, sha, first_parent=False))
    copied = {base: git.rev_parse(repo, "main")}
    for sha in heads:
        stack = [sha]
        while stack:  # parents before children, without recursion (histories can be long)
            top = stack[-1]
            parents = git.commit_parents(repo, top)
            todo = [p for p in parents if p in later and p not in copied]
            if todo:
                stack += todo
                continue
            stack.pop()
            if top in copied:
                continue
            theirs: Files = {}
            for path, injected in plant.files.items():
                now = git.show_file(repo, top, path)
                theirs[path] = injected if now == git.show_file(repo, base, path) else now
            tree = git.tree_with_files(repo, git.tree_of(repo, top), plant.replant(theirs))
            mapped = [copied.get(p, p) for p in parents]
            copied[top] = git.commit_tree(repo, tree, mapped, git.commit_message(repo, top)[1])
    return copied


def _moved(
    repos: tuple[Path, Path],
    contract: TransitionContract,
    patch: PatchSource,
    plant: Planted,
    copied: dict[str, str],
) -> dict[str, Any]:
    """The derived contract's patch source: the copied commit with the same filters, else moved."""
    if patch.commit is not None and patch.commit in copied:
        moved = patch.model_copy(update={"commit": copied[patch.commit]})
    else:
        moved = _moved_patch(repos, contract, patch, plant)
    return moved.model_dump(exclude_none=True)


def _patched_files(source: Path, contract: TransitionContract, patch: bytes) -> Files:
    """Return the files ``patch`` rewrites, as they are once it is applied to the parent's base."""
    with tempfile.TemporaryDirectory(prefix="repogate-vary-") as tmp:
        tree = Path(tmp) / "tree"
        git.export_tree(source, contract.base_commit, tree)
        try:
            git.apply_patch(tree, patch)
        except PatchApplyError as exc:
            raise UserInputError(
                f"contract {contract.id}: its patch does not apply to its own base ({exc})",
                "run `repogate tasks check` on the contract first",
            ) from None
        return {p: read_bytes_nofollow(tree, p) for p in touched_paths(patch)}


def _moved_patch(
    repos: tuple[Path, Path], contract: TransitionContract, patch: PatchSource, plant: Planted
) -> PatchSource:
    """Return ``patch`` as a commit over the injected base (see the module docstring).

    ``repos`` is (the parent's source, the derived repository); the injected base is the
    derived repository's ``refs/heads/injected``.
    """
    source, repo = repos
    head = git.rev_parse(repo, "injected")
    files = plant.replant(_patched_files(source, contract, load_patch(patch, contract, source)))
    tree = git.tree_with_files(repo, git.tree_of(repo, head), files)
    return PatchSource(commit=git.commit_tree(repo, tree, [head], "patch over the injection"))


def _contract_data(
    contract: TransitionContract,
    folder: Path,
    task_id: str,
    base: str,
    derivation: Derivation,
    extra_editable: tuple[str, ...],
) -> dict[str, Any]:
    data = contract.model_dump(mode="json", exclude_none=True)
    data.update(id=task_id, repo=REPO, base_commit=base, derivation=derivation.model_dump())
    data["cohort"] = {**contract.cohort, "variant": derivation.kind}
    editable = contract.permissions.editable
    data["permissions"]["editable"] = [*editable, *(p for p in extra_editable if p not in editable)]
    # later history descends from the parent's base: follow-ups are replayed (_replayed_follow_ups)
    data.pop("target_commit", None)
    reviews = contract.authority.reviews
    if reviews is not None:
        rel = os.path.relpath(contract.base_dir / reviews, folder.resolve())
        data["authority"]["reviews"] = Path(rel).as_posix()
    return data


def vary(
    contract_path: Path,
    kind: DerivationKind,
    out: Path,
    repo_cache: Path | None,
    ablated: str | None = None,
) -> Path:
    """Write the derived task of ``contract_path`` for ``kind`` under ``out``; return its contract.

    Args:
        contract_path: the parent contract's TOML file.
        kind: an injection kind (:data:`~repogate.vocabulary.INJECTIONS`) or ``ablate``.
        out: the folder the derived task's folder is made in.
        repo_cache: local mirrors for a parent whose ``repo`` is a URL.
        ablated: with ``ablate``, the convention's path.

    Returns:
        The derived ``contract.toml`` (loadable with :func:`load_contract`).

    Raises:
        UserInputError: the kind does not apply to this contract, or the derived folder exists.
        ContractError: the parent contract does not load or names a commit its repository lacks.
        GitError: git failed.
    """
    contract = load_contract(contract_path)
    source = git.resolve_source(contract.repo, contract.base_dir, repo_cache)
    task_id = derived_id(contract.id, kind, ablated)
    folder = out / task_id
    if folder.exists():
        raise UserInputError(
            f"{folder} already exists", "remove it, or give another --out to write a fresh copy"
        )
    reference = load_patch(contract.reference, contract, source) if contract.reference else None
    view = BaseView(lambda p: git.show_file(source, contract.base_commit, p), reference)
    if kind == "ablate":
        plant = ablate(contract, view, ablated or "")
    else:
        plant = INJECTORS[kind](contract, view)
    repo = folder / REPO
    try:
        git.init_repo(repo)
        git.fetch_commit(repo, source, contract.base_commit)
        base = git.rev_parse(repo, f"{contract.base_commit}^{{commit}}")
        tree = git.tree_with_files(repo, git.tree_of(repo, base), plant.files)
        message = f"repogate vary: {kind}\n\n{plant.description}\n"
        injected = git.commit_tree(repo, tree, [base], message)
        git.set_branch(repo, "main", injected)
        git.set_branch(repo, "injected", injected)
        derivation = Derivation(
            kind=kind,
            parent_id=contract.id,
            parent_base_commit=base,
            paths=tuple(sorted(plant.files)),
            trap_paths=plant.trap_paths,
            authoritative_paths=plant.authoritative_paths,
            parameters={**plant.parameters, **_dropped_history(contract)},
            description=plant.description,
        )
        data = _contract_data(contract, folder, task_id, injected, derivation, plant.editable)
        sources = [contract.oracles.hidden_tests, contract.reference]
        follow_ups = list(contract.sentinel.follow_ups)
        heads = [*follow_ups, *(p.commit for p in sources if p is not None and p.commit)]
        for sha in heads:
            git.fetch_commit(repo, source, sha)
        copied = _copied_history(repo, contract, plant, heads)
        data["sentinel"]["follow_ups"] = [copied[sha] for sha in follow_ups]
        if follow_ups:
            git.set_branch(repo, "main", copied[follow_ups[-1]])
        else:
            data["sentinel"]["follow_up_count"] = 0
        if contract.oracles.hidden_tests is not None:
            hidden = contract.oracles.hidden_tests
            data["oracles"]["hidden_tests"] = _moved(
                (source, repo), contract, hidden, plant, copied
            )
        if contract.reference is not None:
            data["reference"] = _moved((source, repo), contract, contract.reference, plant, copied)
        target = folder / "contract.toml"
        target.write_text(tomli_w.dumps(data), encoding="utf-8")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return target


def vary_from_options(
    contract_path: Path, inject: str | None, ablated: str | None, out: Path, repo_cache: Path | None
) -> str:
    """Check the CLI's ``--inject``/``--ablate`` choice, run :func:`vary`, return the line to print.

    Raises:
        UserInputError: neither or both options given, or an unknown kind.
    """
    if (inject is None) == (ablated is None):
        raise UserInputError(
            "give exactly one of --inject KIND or --ablate PATH",
            f"kinds: {', '.join(INJECTIONS)}; or a path listed in [[requirement.conventions]]",
        )
    if inject is not None and inject not in INJECTIONS:
        raise UserInputError(
            f"--inject {inject!r} is not an injection kind",
            f"choose one of: {', '.join(INJECTIONS)}",
        )
    kind: DerivationKind = "ablate" if inject is None else inject
    target = vary(contract_path, kind, out, repo_cache, ablated)
    derived = load_contract(target)
    assert derived.derivation is not None
    return f"{derived.id}: {derived.derivation.description} -> {target}"
