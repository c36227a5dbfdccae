"""The report's decision policy: the autonomy rule's thresholds and the gate-informativeness claim.

Written as a small TOML file given to ``repogate report --policy FILE``; every key is optional and
defaults to the value below, unknown keys are refused. The policy is versioned (``version = 1``)
and printed, with its source and digest, beside every verdict it decides::

    version = 1

    [autonomy]
    margin = 0.05            # non-inferiority margin on the paired difference (a fraction)
    acceptance_floor = 0.5   # the agent's own acceptance lower bound must reach this
    sentinel_ceiling = 0.3   # the sentinel failure rate's upper bound must stay under this
    require_sentinel = true  # no post-merge sentinel run: insufficient evidence to widen
    min_paired_tasks = 10    # tasks both agents scored, at least
    max_lost_share = 0.1     # of the baseline's scored tasks, at most this share unscored by the agent

    [gates]
    min_failures = 5         # task-agent units that failed a gate before any claim about it
    alpha = 0.05             # family-wise error rate of the claims (Holm over the gates tested)
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from pydantic import ConfigDict, Field, StrictBool, StrictFloat, StrictInt, ValidationError

from repogate._counted import counted
from repogate._files import read_text
from repogate._model import FrozenModel, SchemaVersion
from repogate._problems import every_problem, what_to_fix
from repogate.errors import UserInputError

FIX = "docs/report.md lists every key of a policy file with its default"
"""The hint of a policy file that does not validate, after what to fix (the key or the value)."""


class AutonomyPolicy(FrozenModel):
    """Thresholds of the autonomy rule (clauses a to e of :mod:`repogate.report.autonomy`)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    margin: StrictFloat = Field(0.05, ge=0.0, le=1.0)
    """(a) Non-inferiority margin: the paired difference's 95% lower bound must be >= -margin."""
    acceptance_floor: StrictFloat = Field(0.5, ge=0.0, le=1.0)
    """(b) The agent's own acceptance 95% lower bound must be >= this floor."""
    sentinel_ceiling: StrictFloat = Field(0.3, ge=0.0, le=1.0)
    """(c) The sentinel failure rate's 95% upper bound must be < this ceiling; its lower bound
    above it narrows the agent's scope."""
    require_sentinel: StrictBool = True
    """(c) With no sentinel run on the paired tasks, the evidence is insufficient to widen."""
    min_paired_tasks: StrictInt = Field(10, ge=1)
    """(e) At least this many tasks scored by both the agent and the baseline."""
    max_lost_share: StrictFloat = Field(0.1, ge=0.0, le=1.0)
    """(e) At most this share of the baseline's scored tasks without a scored attempt of the
    agent (its errors, or not run)."""


class GatePolicy(FrozenModel):
    """When a gate may be said to add information about later (sentinel) trouble."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    min_failures: StrictInt = Field(5, ge=1)
    """Task-agent units that failed the gate (among the population) before any claim is made."""
    alpha: StrictFloat = Field(0.05, gt=0.0, lt=1.0)
    """Family-wise error rate: a claim needs Holm's adjusted one-sided p-value below it."""


class Policy(FrozenModel):
    """The whole policy file (version 1)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    version: SchemaVersion = 1
    """The policy file's format version; another is refused."""
    autonomy: AutonomyPolicy = AutonomyPolicy()
    """The autonomy rule's thresholds."""
    gates: GatePolicy = GatePolicy()
    """The gate-informativeness claim's thresholds."""

    @property
    def digest(self) -> str:
        """sha256 of the policy's canonical JSON (sorted keys), first 12 hex digits."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def load_policy(path: Path | None) -> tuple[Policy, str]:
    """Read a policy file, or the defaults for None; return the policy and where it came from.

    Raises:
        UserInputError: the file cannot be read, is not TOML, has an unknown key, a value out of
            range or another version (the message names every such key).
    """
    if path is None:
        return Policy(), "defaults"
    fix = "give a TOML policy file (docs/report.md shows one)"
    text = read_text(path, "policy file", UserInputError, fix)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserInputError(f"policy file {path} is not valid TOML: {exc}", fix) from None
    try:
        return Policy.model_validate(data), str(path)
    except ValidationError as exc:
        raise UserInputError(
            f"policy file {path}: {every_problem(exc, Policy)}", f"{what_to_fix(exc)}; {FIX}"
        ) from None


def describe(policy: Policy, source: str) -> str:
    """One line naming the policy, e.g. ``policy v1 (defaults, sha256 1a2b...): margin 0.05, ...``."""
    a, g = policy.autonomy, policy.gates
    return (
        f"policy v{policy.version} ({source}, sha256 {policy.digest}): margin {a.margin:g}, "
        f"acceptance floor {a.acceptance_floor:g}, sentinel ceiling {a.sentinel_ceiling:g}"
        f"{' (sentinel required)' if a.require_sentinel else ''}, at least "
        f"{counted(a.min_paired_tasks, 'paired task')}, at most {a.max_lost_share:g} of the "
        f"baseline's tasks lost; gates: at least {counted(g.min_failures, 'failure')}, Holm at "
        f"alpha {g.alpha:g}"
    )
