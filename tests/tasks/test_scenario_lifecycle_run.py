"""End to end: ``repogate run`` on the built-in scenarios gives the verdicts the seed describes,
and the README's verdict table says what these runs give."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest

from conftest import ROOT
from repogate.cli import main
from repogate.tasks.scenarios import build_scenario
from repogate.vocabulary import CheckName

# (scenario, rendered contract, agent) -> the hard checks that fail; empty means accepted.
EXPECTED = {
    ("parser", "contract", "null"): [
        "patch_is_a_new_state",
        "requirements_recovered",
        "focused_tests_passed",
    ],
    ("parser", "contract", "edits-tests"): [
        "edits_permitted",
        "oracle_untouched",
        "regression_tests_passed",
    ],
    ("payments", "contract", "constant-only"): [
        "generated_artifacts_fresh",
        "code_owner_approved",
        "post_merge_sentinel_passed",  # the sentinel's regeneration drops the hand edit too
        "release_receipt_present",
    ],
    ("payments", "contract", "full"): [],
    ("payments", "compat", "full"): [  # it predates the compatibility criterion R3
        "requirements_recovered",
        "focused_tests_passed",
        "post_merge_sentinel_passed",  # the follow-up's test of R3 fails on the merged state
    ],
    ("payments", "compat", "compat-stale"): ["code_owner_approved"],
    ("payments", "compat", "compat"): [],
    ("identical-diff", "contract", "same-diff"): [],
    ("identical-diff", "derived", "same-diff"): [
        "generated_artifacts_fresh",
        "post_merge_sentinel_passed",
    ],
    ("weak-oracle", "contract", "null"): [
        "patch_is_a_new_state",
        "requirements_recovered",
        "focused_tests_passed",
    ],
    ("weak-oracle", "contract", "upper-only"): [],  # the tests check one side of the clamp only
}


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["parser", "payments", "identical-diff", "weak-oracle"])
def test_run_gives_the_seed_verdicts(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = build_scenario(scenario, tmp_path / "built")
    cases = {k: v for k, v in EXPECTED.items() if k[0] == scenario}
    for _, contract, agent in cases:
        args = ["run", str(tmp_path / "built" / f"{contract}.toml"), "--json"]
        spec = f"scripted:{tmp_path / 'built' / 'agents' / f'{agent}.toml'}"
        args += ["--agent", agent if agent in ("gold", "null") else spec]
        assert main([*args, "--out", str(tmp_path / f"run-{contract}-{agent}")]) == 0
        (decision,) = json.loads(capsys.readouterr().out)
        assert decision["errored"] == [], decision
        assert decision["failed"] == cases[(scenario, contract, agent)], decision
        assert decision["accepted"] is (not cases[(scenario, contract, agent)])
    assert built.repo.is_dir()


@pytest.mark.slow
def test_decision_keeps_the_review_soft_metrics_gate_a_observed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The decision's review minutes and rounds are those gate A observed, not zero.

    They used to be read from a key of gate A's details that the gate never wrote, so every
    decision reported 0 minutes and 0 rounds of review.
    """
    build_scenario("identical-diff", tmp_path / "built")
    agent = f"scripted:{tmp_path / 'built' / 'agents' / 'same-diff.toml'}"
    out = tmp_path / "run"
    args = ["run", str(tmp_path / "built" / "contract.toml"), "--agent", agent, "--out", str(out)]
    assert main([*args, "--json"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)
    assert shown["decision"]["accepted"] is True
    soft = shown["decision"]["soft"]
    assert (soft["review_minutes"], soft["review_rounds"]) == (4.0, 1)


# The README table's contract ids (each row's first cell begins with one) and the scenario and
# rendered contract each ran from; None for the rows this module does not run (the injected
# variants': tests/tasks/test_scenario_injections_run.py).
README_ROWS: dict[str, tuple[str, str] | None] = {
    "parser-bounded-config": ("parser", "contract"),
    "payments-retry-timeout": ("payments", "contract"),
    "payments-retry-timeout-compat": ("payments", "compat"),
    "identical-diff-authoritative": ("identical-diff", "contract"),
    "identical-diff-derived": ("identical-diff", "derived"),
    "frozen-free-shipping": ("frozen", "contract"),
    "gauge-clamp-percent": ("weak-oracle", "contract"),
    "payments-retry-timeout+stale-lockfile": None,
    "payments-retry-timeout+irrelevant-failing-test": None,
    "payments-retry-timeout+misleading-comment": None,
    "payments-retry-timeout+generated-file-trap": None,
}


def _readme_verdicts() -> list[tuple[str, str, str, str, list[str]]]:
    """(scenario, contract, agent, verdict, checks named in its why cell, in order) per README
    table row of a contract this module runs."""
    readme = (ROOT / "README.md").read_text()
    header = "| contract (scenario) | agent | verdict | why |"
    assert header in readme, f"README's verdict table lost its header {header!r}"
    table = readme.split(header, 1)[1].split("\n\n", 1)[0]
    names = set(get_args(CheckName))
    rows: list[tuple[str, str, str, str, list[str]]] = []
    where: tuple[str, str] | None = None
    for line in table.splitlines()[2:]:
        first, agents, verdict, why = (cell.strip() for cell in line.strip("|").split("|"))
        if first:
            contract_id = re.match(r"`([^`]+)`", first)
            assert contract_id, f"README row {first!r} does not begin with a contract id"
            assert contract_id[1] in README_ROWS, f"{contract_id[1]!r}: add it to README_ROWS"
            where = README_ROWS[contract_id[1]]
        named = [n for n in re.findall(r"`(\w+)`", why) if n in names]
        if where is not None:
            rows += [(*where, agent, verdict, named) for agent in agents.split(", ")]
    return rows


def test_the_readme_verdict_table_says_what_the_runs_give() -> None:
    """Every rejected row of the README's table names exactly the checks that fail in the run
    above, in the order ``repogate show`` prints them, and every row this module runs says its
    verdict.

    New-user findings: two why cells left out ``post_merge_sentinel_passed``; then the table's
    header became "contract (scenario)" and this test broke on it, three why cells named their
    checks in another order than ``show``, and the weak-oracle row named no contract id."""
    rows = _readme_verdicts()
    assert len(rows) >= 12, rows
    for scenario, contract, agent, verdict, named in rows:
        expected = EXPECTED.get((scenario, contract, agent))
        if verdict.startswith("rejected"):
            assert expected, f"README row {scenario}/{contract}/{agent} is not run in this module"
        if expected is not None:
            assert named == expected, (scenario, contract, agent, named)
            assert verdict.startswith("rejected" if expected else "accepted"), (contract, agent)
    covered = {(s, c, a) for s, c, a, _, _ in rows}
    assert set(EXPECTED) <= covered, set(EXPECTED) - covered
