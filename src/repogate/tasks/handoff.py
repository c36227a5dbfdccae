"""Hand task validation's runs to gate E, so the gold attempt does not run the same tests again.

Task validation runs the base (with the hidden tests) and the reference N times each, in the
environment and sandbox gate E uses. Gate E's base-state result is a function of the run
conditions, the base commit, the hidden test and reference patches, the graded ids, the repeat
count and the graded text inside editable files (:func:`repogate.phases.base_state_key`).
When validation has observed everything gate E observes, it writes the result under that key and
the gold attempt's gate E reads it (its receipt says ``observed_by``) instead of computing it:

- the environment is the one gate E builds (same recipe and resolution bound, so same digest);
- the test runs loaded the harness's pytest plugin as gate E's do (an XPASS under a mark the
  hidden tests do not declare reads ``xpassed``), in the same sandbox (:func:`repogate.pipeline.oracle_policy`'s: no network, the
  harness's repository hidden, writes only in the tree);
- at least ``oracles.repeat`` runs of each state (validation's N of N is the stronger rule);
- no graded id lives in a file the agent may edit (validation's trees do not carry such text);
- the import probe (:func:`repogate.oracles.imports.foreign_imports`) finds the tests importing
  the project only from the checkout;
- the base-state verdict (:func:`repogate.oracles.grading.base_state_check`, ids of files that
  did not collect confirmed in the reference) is valid on validation's last base run;
- the reference graded by :func:`repogate.gates.verification.check_tests` on validation's
  reference runs passes both checks.

Any condition unmet: nothing is written, and gate E computes the result itself as for any agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from repogate import git
from repogate._counted import counted
from repogate.contract import TransitionContract
from repogate.environments import Environment
from repogate.gates.base_state import reproduced
from repogate.gates.verification import check_tests
from repogate.oracles.embedded import load_embedded
from repogate.oracles.grading import base_state_check, confirm_in_reference
from repogate.oracles.imports import foreign_imports
from repogate.oracles.pytest_runner import TestRun
from repogate.phases import base_state_key, probe_files, remember_base_state
from repogate.sandbox import SandboxPolicy


@dataclass(frozen=True)
class Prepared:
    """The states validation prepares before running them, as gate E would prepare them.

    Attributes:
        env: the environment the runs use.
        base: the base commit's SHA.
        hidden: the hidden test patch; hidden_paths: the files it touches.
        reference: the reference patch.
        base_tree: the base with the hidden tests (on disk).
        policy: the sandbox the test runs have.
    """

    env: Environment
    base: str
    hidden: bytes
    hidden_paths: tuple[str, ...]
    reference: bytes
    base_tree: Path
    policy: SandboxPolicy


@dataclass(frozen=True)
class Observed:
    """What validation ran, as gate E needs it.

    Attributes:
        prepared: the states it ran (their trees still on disk).
        runs: (base runs, reference runs), N each.
        flips: ids that flipped between runs of one state.
    """

    prepared: Prepared
    runs: tuple[Sequence[TestRun], Sequence[TestRun]]
    flips: frozenset[str]


def hand_over(contract: TransitionContract, source: Path, seen: Observed, env_cache: Path) -> str:
    """Write gate E's base-state result for ``contract`` from validation's runs, when sound.

    Args:
        contract: the contract as it will be written (its graded ids final).
        source: the full-history repository (to read graded text in editable files).
        seen: validation's runs and trees.
        env_cache: the environment cache folder (``$REPOGATE_CACHE/envs``).

    Returns:
        "" when the result was written, else why not (kept in the validation record).
    """
    oracles = contract.oracles
    base_runs, ref_runs = seen.runs
    if min(len(base_runs), len(ref_runs)) < oracles.repeat:
        return f"validation ran fewer than the contract's {oracles.repeat} repeats"
    embedded = load_embedded(
        contract,
        seen.prepared.hidden_paths,
        lambda rev, path: git.show_file(source, rev, path),
        seen.prepared.base,
    )
    if embedded:
        return "graded ids live in files the agent may edit"
    ids = [*oracles.fail_to_pass, *oracles.pass_to_pass]
    files = probe_files(seen.prepared.base_tree, seen.prepared.hidden_paths, ids)
    if foreign_imports(
        seen.prepared.env,
        seen.prepared.base_tree,
        files,
        oracles.test_command,
        seen.prepared.policy,
    ):
        return "the tests import the project from outside the checkout"
    flips = set(seen.flips)
    verdict = base_state_check(
        base_runs[-1].outcomes,
        [t for t in oracles.fail_to_pass if t not in flips],
        [t for t in oracles.pass_to_pass if t not in flips],
    )
    if verdict.valid and verdict.uncollected:
        verdict = confirm_in_reference(verdict, ref_runs[-1].outcomes)
    if not verdict.valid:
        return "the base-state check fails on validation's runs"
    graded = check_tests(
        ref_runs,
        flips,
        oracles.fail_to_pass,
        oracles.pass_to_pass,
        flips,
        base_xfailed=set(verdict.xfailed),
        base_xpassed=set(verdict.xpassed),
    )
    if not all(c.passed for c in graded.checks):
        return "the reference does not pass gate E's checks on validation's runs"
    observation = reproduced(
        {
            "flaky_excluded": sorted(flips),
            "reference": {c.name: c.status for c in graded.checks},
            "base_state": verdict.model_dump(),
            "observed_by": f"task validation ({counted(len(base_runs), 'run')} of each state)",
        },
        flips,
        verdict.xfailed,
        seen.prepared.env,
        verdict.xpassed,
    )
    key = base_state_key(
        seen.prepared.env,
        oracles,
        seen.prepared.base,
        seen.prepared.hidden,
        seen.prepared.reference,
        embedded,
    )
    remember_base_state(env_cache, key, observation)
    return ""
