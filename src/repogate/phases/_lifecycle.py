"""The lifecycle gates: generated-artifact freshness, authority (A), release receipt."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from repogate import git
from repogate.attempt import AttemptConfig, AttemptProgress, gate, gate_seen
from repogate.errors import ContractError
from repogate.gates.authority import (
    AuthorityObservation,
    ReviewEvidence,
    check_authority,
    load_reviews,
)
from repogate.gates.codeowners import CODEOWNERS_LOCATIONS
from repogate.gates.concerns import concern_tests
from repogate.gates.generated import check_generated
from repogate.gates.generator_change import (
    changed_generator_files,
    judge_generator_change,
    with_base_generator,
)
from repogate.gates.graded_trees import write_tree
from repogate.gates.protection import load_protection
from repogate.gates.release import check_release_notes
from repogate.oracles.grading import observe_ids
from repogate.oracles.pytest_runner import run_tests
from repogate.phases._shared import generator_policy, oracle_policy, workspace
from repogate.phases._trees import export, graded_state
from repogate.receipt import Check, Observation
from repogate.vocabulary import ErrorKind


def _reviews_path(cfg: AttemptConfig) -> Path | None:
    reviews = cfg.contract.authority.reviews
    return (
        None
        if reviews is None
        else cfg.contract.resolve(reviews.replace("{agent}", cfg.agent_name))
    )


def _codeowners_at_base(cfg: AttemptConfig, base: str) -> tuple[str | None, str | None]:
    """Return (CODEOWNERS text at the base, the path read), never from the candidate.

    The contract's path when it names one (a named file missing at the base is the contract's
    error, raised); otherwise GitHub's lookup order, first found.
    """
    named = cfg.contract.authority.codeowners
    for path in (named,) if named else CODEOWNERS_LOCATIONS:
        raw = git.show_file(workspace(cfg), base, path)
        if raw is not None:
            return raw.decode("utf-8", "replace"), path
    if named:
        raise ContractError(
            f"contract {cfg.contract.id}: authority.codeowners {named!r} does not exist at the base",
            "name the CODEOWNERS file the base commit has, or leave the key out for GitHub's lookup",
        )
    return None, None


def _authority(cfg: AttemptConfig, progress: AttemptProgress) -> AuthorityObservation:
    state = progress.candidate
    authority = cfg.contract.authority
    codeowners, _read_from = _codeowners_at_base(cfg, state.base_commit)
    path = _reviews_path(cfg)
    simulated = authority.simulated_reviews
    reviews = None
    if path is not None and path.is_file():
        reviews = load_reviews(path, state.patch_digest if simulated else None)
    protection = authority.branch_protection
    outcomes, run_error, run_error_kind = _concern_outcomes(cfg, progress, reviews)
    return check_authority(
        codeowners,
        progress.changed,
        reviews,
        state.patch_digest,
        authority.author,
        authority.min_approvals,
        None if protection is None else load_protection(cfg.contract.resolve(protection)),
        outcomes,
        run_error,
        run_error_kind,
    )


def _concern_outcomes(
    cfg: AttemptConfig, progress: AttemptProgress, reviews: ReviewEvidence | None
) -> tuple[dict[str, str], str | None, ErrorKind]:
    """Run the tests review threads name on a fresh graded tree of the candidate.

    Returns:
        Each test id's outcome (``passed``, ``failed``, ``missing``...), why the run gave no
        trustworthy report (None when it did), and that error's kind (``timeout`` when the run
        reached its budget).
    """
    ids = concern_tests(reviews.threads) if reviews is not None else []
    if not ids:
        return {}, None, "other evaluator error"
    tree = cfg.work / "concerns"
    write_tree(graded_state(cfg, progress, progress.candidate.candidate_commit), tree)
    run = run_tests(
        progress.workspace_env,
        tree,
        cfg.contract.oracles.test_command,
        ids,
        cfg.evidence / "tests-concerns",
        oracle_policy(cfg),
    )
    kind: ErrorKind = "timeout" if run.execution.timed_out else "other evaluator error"
    if run.status != "ok":
        return {}, run.reason or "no report", kind
    observed, _matched, _missing = observe_ids(run.outcomes, ids)
    return {test_id: str(observed[test_id]) for test_id in ids}, None, kind


def _freshness(cfg: AttemptConfig, progress: AttemptProgress) -> Observation:
    """Regenerate the base, then the candidate, then (generator changed) with the base's generator.

    The third run is :mod:`repogate.gates.generator_change`'s.

    Only a generator that reproduces the base can judge the candidate. One that changes the
    base's files (non-deterministic output, files outside its outputs) is the task's fault:
    ``error``, never the agent's failure.
    """
    env = progress.workspace_env
    generators = cfg.contract.oracles.generators
    if generators:
        at_base = cfg.work / "regenerate-base"
        export(cfg, progress.candidate.base_commit, at_base)
        base = check_generated(at_base, generators, (), generator_policy(cfg, env, at_base), None)
        if base.checks[0].status != "passed":
            why = f"the generators do not reproduce the base commit ({base.checks[0].detail})"
            kind = base.checks[0].kind or "other evaluator error"
            return Observation(
                checks=(Check.error("generated_artifacts_fresh", why, kind),),
                details={"base": base.details},
            )
    regen = cfg.work / "regenerate"
    state = progress.candidate
    export(cfg, state.candidate_commit, regen)
    seen = check_generated(
        regen, generators, progress.changed, generator_policy(cfg, env, regen), None
    )
    program = changed_generator_files(generators, progress.changed)
    if not program:
        return seen
    # the patch changed a generator: its own regeneration cannot vouch for its outputs
    mixed = with_base_generator(workspace(cfg), state.base_commit, state.candidate_commit, program)
    by_base = cfg.work / "regenerate-base-generator"
    export(cfg, mixed, by_base)
    again = check_generated(by_base, generators, (), generator_policy(cfg, env, by_base), None)
    return judge_generator_change(seen, again, program)


def lifecycle(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """The lifecycle gates: generated-artifact freshness, authority (A), release receipt."""
    if cfg.contract.profile != "lifecycle" and not cfg.contract.oracles.generators:
        return progress
    progress = gate(cfg, progress, "V-generated", lambda: _freshness(cfg, progress))
    if cfg.contract.profile != "lifecycle":
        return progress
    progress, review = gate_seen(cfg, progress, "A", lambda: _authority(cfg, progress))
    if review is not None:
        progress = replace(
            progress, review_minutes=review.review_minutes, review_rounds=review.review_rounds
        )
    return gate(
        cfg,
        progress,
        "release",
        lambda: check_release_notes(
            progress.patch,
            cfg.contract.oracles.release_notes,
            lambda path: git.show_file(workspace(cfg), progress.candidate.base_commit, path),
            cfg.contract.oracles.release_policy,
        ),
    )
