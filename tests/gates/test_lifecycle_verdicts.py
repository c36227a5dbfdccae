"""Lifecycle-gate verdicts an adversarial review found wrong; each case is the failing input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogate.cli import ExitCode, main
from repogate.contract import Criterion
from repogate.gates._lockfiles import normalise_name
from repogate.gates.dependency import _upgrades
from repogate.gates.integrity import runner_tampering
from repogate.gates.release import check_release_notes
from repogate.gates.requirements import check_requirements
from repogate.tasks.scenarios import build_scenario

CHANGELOG = b"# Changelog\n\n- Initial release.\n- Second entry.\n"


def _diff(path: str, removed: list[str], added: list[str]) -> bytes:
    body = "".join(f"-{line}\n" for line in removed) + "".join(f"+{line}\n" for line in added)
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -3,{len(removed)} +3,{len(added)} @@\n{body}"
    ).encode()


@pytest.mark.parametrize(
    ("removed", "added"),
    [
        (["- Initial release."], ["- Initial release. "]),  # a trailing space
        (["- Initial release.", "- Second entry."], ["- Second entry.", "- Initial release."]),
    ],
)
def test_reformatting_or_moving_a_changelog_line_is_no_entry(
    removed: list[str], added: list[str]
) -> None:
    seen = check_release_notes(
        _diff("CHANGELOG.md", removed, added), ["CHANGELOG.md"], lambda _p: CHANGELOG
    )
    assert seen.checks[0].status == "failed"


def test_a_new_changelog_line_is_an_entry() -> None:
    seen = check_release_notes(
        _diff("CHANGELOG.md", [], ["- Retries use a timeout."]),
        ["CHANGELOG.md"],
        lambda _p: CHANGELOG,
    )
    assert seen.checks[0].status == "passed"


def test_unknown_generator_or_command_oracle_is_not_borrowed_from_another_check() -> None:
    """A criterion linked to a generator or command the contract never declares is unmet."""
    criteria = (
        Criterion(id="R1", claim="client regenerated", oracles=("generator:no-such",)),
        Criterion(id="R2", claim="lint clean", oracles=("command:no-such",)),
    )
    checks = {"generated_artifacts_fresh": "passed", "regression_tests_passed": "passed"}
    seen = check_requirements(criteria, {}, checks, None)  # type: ignore[arg-type]
    assert seen.checks[0].status == "failed"
    assert "unknown oracle name" in seen.checks[0].detail


def test_dotted_names_in_the_allowlist_are_normalised_as_pep_503_says() -> None:
    assert (
        normalise_name("backports.tarfile")
        == normalise_name("backports-tarfile")
        == "backports-tarfile"
    )
    assert normalise_name("Zope_Interface") == "zope-interface"


def test_a_uv_bump_is_replayed_with_the_versions_it_moved() -> None:
    base = '[[package]]\nname = "pluggy"\nversion = "1.5.0"\n\n[[package]]\nname = "six"\nversion = "1.16.0"\n'
    bumped = base.replace('"1.5.0"', '"1.6.0"')
    assert _upgrades(base, bumped) == ["--upgrade-package", "pluggy==1.6.0"]
    assert _upgrades(base, base) == []


def test_lockfiles_mentioning_pytest_do_not_reach_into_the_runner() -> None:
    patch = _diff("uv.lock", [], ['name = "pytest"'])
    assert runner_tampering(patch) == []
    assert runner_tampering(_diff("pkg/mod.py", [], ["import _pytest"])) != []


@pytest.mark.slow
def test_missing_named_codeowners_and_a_generator_that_changes_the_base_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two faults of the task, never the agent's: a contract naming a CODEOWNERS file the base
    lacks, and a generator that does not reproduce the base (it writes outside its outputs)."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    built = build_scenario("payments", tmp_path / "payments")
    contract = built.contracts[0]
    text = contract.read_text()
    missing = contract.with_name("missing-owners.toml")
    missing.write_text(
        text.replace('codeowners = ".github/CODEOWNERS"', 'codeowners = "OWNERS-NOT-HERE"').replace(
            'id = "payments-retry-timeout"', 'id = "missing-owners"'
        )
    )
    unstable = contract.with_name("unstable-generator.toml")
    unstable.write_text(
        text.replace(
            'command = "python tools/generate_client.py"',
            "command = \"sh -c 'python tools/generate_client.py && date +%s%N > stamp.txt'\"",
        ).replace('id = "payments-retry-timeout"', 'id = "unstable-generator"')
    )
    assert missing.read_text() != text and unstable.read_text() != text
    code = main(
        [
            "run",
            str(missing),
            str(unstable),
            "--agent",
            "gold",
            "--out",
            str(tmp_path / "run"),
            "--json",
        ]
    )
    rows = json.loads(capsys.readouterr().out)
    assert code == ExitCode.OK
    by_contract = {r["contract"]: r for r in rows}
    owners, generator = by_contract["missing-owners"], by_contract["unstable-generator"]
    assert owners["outcome"] == "error", owners
    assert "code_owner_approved" in owners["errored"]
    assert generator["outcome"] == "error", generator
    assert "generated_artifacts_fresh" in generator["errored"]
