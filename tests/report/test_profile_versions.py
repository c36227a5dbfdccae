"""A report over attempts decided under different versions of a profile says so, in the terminal
and in HTML: their "accepted" was judged against different check lists."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from repogate.agent_spec import GoldSpec
from repogate.cli import load_evidence
from repogate.contract import load_contract
from repogate.decision import decide
from repogate.report.aggregate import build_report
from repogate.report.html import render_html
from repogate.report.load import load_runs
from repogate.report.model import Report
from repogate.report.text import print_report
from repogate.sandbox import Isolation
from repogate.store import ContractEntry, RunManifest, Store, contract_entry
from repogate.vocabulary import PROFILE_VERSIONS


def _report(root: Path, run_dir: Path, versions: list[int | None]) -> Report:
    decision = decide(load_evidence(root / "examples" / "evidence" / "pure-parser-function.json"))
    iso = Isolation(kind="bwrap", network_off=True)
    with Store.create(run_dir) as store:
        store.write_manifest(
            RunManifest(
                agents=({"spec": "gold"},),
                contracts=(),
                selection="test",
                planned_attempts=len(versions),
                isolation_agent=iso,
                isolation_tests=iso,
            )
        )
        for i, version in enumerate(versions):
            record = store.begin_attempt(f"t{i}", GoldSpec(), 0)
            decided = decision.model_copy(update={"task_id": f"t{i}", "profile_version": version})
            store.finish_attempt(record.attempt_id, decided)
    return build_report(load_runs([run_dir]))


def _printed(report: Report) -> str:
    console = Console(width=160, record=True)
    print_report(report, console)
    return console.export_text()


def test_decisions_of_different_profile_versions_are_said_to_be_mixed(
    root: Path, tmp_path: Path
) -> None:
    report = _report(root, tmp_path / "run", [1, 2, 2, None])
    assert report.profile_note == (
        "hermetic: not recorded in 1 attempt, v1 in 1 attempt, v2 in 2 attempts"
    )
    assert "profile versions mixed: hermetic: not recorded in 1 attempt" in _printed(report)
    page = render_html(report, tmp_path)
    assert '<p class="partial" id="profile-versions">Profile versions mixed: hermetic:' in page


def test_one_version_says_nothing(root: Path, tmp_path: Path) -> None:
    report = _report(root, tmp_path / "run", [1, 1])
    assert report.profile_note == ""
    assert "profile versions mixed" not in _printed(report)
    assert "profile-versions" not in render_html(report, tmp_path)


def test_a_decision_stored_before_versions_mixed_with_a_versioned_one_is_said(
    root: Path, tmp_path: Path
) -> None:
    report = _report(root, tmp_path / "run", [None, 1])
    assert report.profile_note == "hermetic: not recorded in 1 attempt, v1 in 1 attempt"


def test_the_manifest_records_each_contracts_profile_version(tmp_path: Path) -> None:
    """Each contract entry names its profile's version; an entry written before versions loads
    with None ("not recorded")."""
    for profile in ("hermetic", "lifecycle"):
        path = tmp_path / f"{profile}.toml"
        path.write_text(
            f'id = "t1"\nrepo = "repo"\nbase_commit = "{"a" * 40}"\nprofile = "{profile}"\n'
            '[requirement]\nstatement = "parse bounded config strings"\n'
        )
        entry = contract_entry(load_contract(path), str(path))
        assert (entry.profile, entry.profile_version) == (profile, PROFILE_VERSIONS[profile])
        stored = entry.model_dump(mode="json")
        del stored["profile_version"]
        assert ContractEntry.model_validate(stored).profile_version is None
