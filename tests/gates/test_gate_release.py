from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from _lifecycle_git import commit, diff, new_repo
from repogate import git as rgit
from repogate.gates.release import added_lines, check_release_notes
from repogate.globs import matches

BASE = {"CHANGELOG.md": "# Changelog\n\n## 1.0\n- first\n", "src/a.py": "x = 1\n"}


def _patch(tmp_path: Path, files: dict[str, str | None]) -> bytes:
    repo, base = new_repo(tmp_path / "r", BASE)
    return diff(repo, base, commit(repo, files))


def test_changelog_entry_added_passes(tmp_path: Path) -> None:
    patch = _patch(tmp_path, {"CHANGELOG.md": BASE["CHANGELOG.md"] + "- retries: timeout\n"})
    seen = check_release_notes(patch, ["CHANGELOG.md"])
    assert seen.checks[0].status == "passed"
    assert seen.details["entries"] == {"CHANGELOG.md": 1}


def test_only_removed_lines_is_not_an_entry(tmp_path: Path) -> None:
    patch = _patch(tmp_path, {"CHANGELOG.md": "# Changelog\n"})
    check = check_release_notes(patch, ["CHANGELOG.md"]).checks[0]
    assert check.status == "failed"
    assert "CHANGELOG.md changed but gained no line" in check.detail


def test_blank_lines_only_is_not_an_entry(tmp_path: Path) -> None:
    patch = _patch(tmp_path, {"CHANGELOG.md": BASE["CHANGELOG.md"] + "\n   \n"})
    assert check_release_notes(patch, ["CHANGELOG.md"]).checks[0].status == "failed"


def test_towncrier_fragment_with_unusual_name_counts(tmp_path: Path) -> None:
    patch = _patch(tmp_path, {"changelog.d/42.fix café.md": "Retries honour the timeout.\n"})
    seen = check_release_notes(patch, ["CHANGELOG.md", "changelog.d/"])
    assert seen.checks[0].status == "passed"
    assert seen.details["entries"] == {"changelog.d/42.fix café.md": 1}


def test_empty_fragment_fails(tmp_path: Path) -> None:
    patch = _patch(tmp_path, {"changelog.d/42.fix.md": ""})
    assert check_release_notes(patch, ["changelog.d/**"]).checks[0].status == "failed"


def test_no_release_file_touched_fails_naming_paths(tmp_path: Path) -> None:
    patch = _patch(tmp_path, {"src/a.py": "x = 2\n"})
    check = check_release_notes(patch, ["CHANGELOG.md", "docs/migration/*.md"]).checks[0]
    assert check.status == "failed"
    assert check.detail == "no entry added under CHANGELOG.md, docs/migration/*.md"


def test_contract_without_release_paths_fails_with_reason(tmp_path: Path) -> None:
    patch = _patch(tmp_path, {"CHANGELOG.md": BASE["CHANGELOG.md"] + "- x\n"})
    check = check_release_notes(patch, []).checks[0]
    assert check.status == "failed"
    assert "contract names no release-notes paths" in check.detail


def test_added_lines_binary_and_deleted_files(tmp_path: Path) -> None:
    repo, base = new_repo(tmp_path / "r", BASE)
    (repo / "logo.bin").write_bytes(b"\x00\x01\x02")
    head = commit(repo, {"src/a.py": None})
    # a binary file gains no text lines (it cannot be a release note); a deletion gains none
    assert added_lines(diff(repo, base, head)) == {"src/a.py": 0}


def test_globs() -> None:
    assert matches("changelog.d/1.md", "changelog.d")
    assert matches("changelog.d/sub/1.md", "changelog.d/**")
    assert matches("docs/a/b.md", "docs/**/*.md")
    assert matches("docs/b.md", "docs/**/*.md")
    assert not matches("src/CHANGELOG.md", "CHANGELOG.md")
    assert not matches("docs/a/b.md", "docs/*.md")
    assert matches("spec/retry.json", "/spec/*.json")


def _reader(
    tmp_path: Path, files: dict[str, str | None]
) -> tuple[bytes, Callable[[str], bytes | None]]:
    repo, base = new_repo(tmp_path / "r", {**BASE, "changelog.d/41.fix.md": "Old fix.\n"})
    patch = diff(repo, base, commit(repo, files))

    def read(path: str) -> bytes | None:
        return rgit.show_file(repo, base, path)

    return patch, read


def test_a_project_keeping_no_release_notes_is_not_required_whatever_the_patch(
    tmp_path: Path,
) -> None:
    """A project without per-change notes (openapi-python-client's practice) must not see every
    change fail ``release_receipt_present``; with or without paths declared, it passes so."""
    patch = _patch(tmp_path, {"src/a.py": "x = 2\n"})
    for globs in ([], ["CHANGELOG.md"]):
        check = check_release_notes(patch, globs, policy="none").checks[0]
        assert check.status == "passed"
        assert check.detail.startswith("not required: the project keeps no per-change")


def test_a_fragments_project_needs_a_new_fragment_not_an_edited_one(tmp_path: Path) -> None:
    patch, read = _reader(tmp_path, {"changelog.d/41.fix.md": "Old fix.\nAnd this one.\n"})
    check = check_release_notes(patch, ["changelog.d/"], read, policy="fragments").checks[0]
    assert check.status == "failed"
    assert "changelog.d/41.fix.md edited, but the project's entries are new fragment files" in (
        check.detail
    )
    same = check_release_notes(patch, ["changelog.d/"], read, policy="file").checks[0]
    assert same.status == "passed"  # a changelog-file project counts the new line


def test_a_fragments_project_accepts_a_new_fragment(tmp_path: Path) -> None:
    patch, read = _reader(tmp_path, {"changelog.d/42.feature.md": "Retries honour the timeout.\n"})
    seen = check_release_notes(patch, ["changelog.d/"], read, policy="fragments")
    assert seen.checks[0].status == "passed"
    assert seen.details["entries"] == {"changelog.d/42.feature.md": 1}
