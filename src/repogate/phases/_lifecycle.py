"""The lifecycle gates: generated-artifact freshness, authority (A), release receipt."""

from __future__ import annotations

from pathlib import Path

from repogate import git
from repogate.gates.authority import check_authority, load_reviews
from repogate.gates.generated import check_generated
from repogate.gates.release import check_release_notes
from repogate.pipeline import AttemptConfig, Progress, gate, generator_policy, workspace
from repogate.receipt import Observation


def _reviews_path(cfg: AttemptConfig) -> Path | None:
    reviews = cfg.contract.authority.reviews
    return (
        None
        if reviews is None
        else cfg.contract.resolve(reviews.replace("{agent}", cfg.agent_name))
    )


def _authority(cfg: AttemptConfig, progress: Progress) -> Observation:
    state = progress.candidate
    authority = cfg.contract.authority
    codeowners = None
    if authority.codeowners:
        raw = git.show_file(workspace(cfg), state.base_commit, authority.codeowners)
        codeowners = None if raw is None else raw.decode("utf-8", "replace")
    path = _reviews_path(cfg)
    scenario = cfg.contract.cohort.get("origin") == "scenario"
    reviews = None
    if path is not None and path.is_file():
        reviews = load_reviews(path, state.patch_digest if scenario else None)
    return check_authority(
        codeowners,
        progress.changed,
        reviews,
        state.patch_digest,
        authority.author,
        authority.min_approvals,
    )


def lifecycle(cfg: AttemptConfig, progress: Progress) -> Progress:
    """The lifecycle gates: generated-artifact freshness, authority (A), release receipt."""
    if cfg.contract.profile != "lifecycle" and not cfg.contract.oracles.generators:
        return progress
    regen = cfg.work / "regenerate"
    git.export_tree(workspace(cfg), progress.candidate.candidate_commit, regen)
    env = progress.workspace_env
    policy = generator_policy(cfg, env, regen)
    progress = gate(
        cfg,
        progress,
        "V-generated",
        lambda: check_generated(
            regen,
            cfg.contract.oracles.generators,
            progress.changed,
            policy,
            env.bin_dir,
        ),
    )
    if cfg.contract.profile != "lifecycle":
        return progress
    progress = gate(cfg, progress, "A", lambda: _authority(cfg, progress))
    return gate(
        cfg,
        progress,
        "release",
        lambda: check_release_notes(progress.patch, cfg.contract.oracles.release_notes),
    )
