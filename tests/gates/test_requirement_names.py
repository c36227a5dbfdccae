"""Dependency names are read as pip reads requirements (``packaging``), never split by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from repogate.gates._lockfiles import declared_names, requirement_name


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("requests>=2", "requests"),
        ("Zope_Interface[extra]==5; python_version>'3'", "zope-interface"),
        ("backports.tarfile", "backports-tarfile"),
        ("pkg @ git+https://example.invalid/pkg.git", "pkg"),
        ("git+https://example.invalid/org/thing.git#egg=Real_Name", "real-name"),
        ("-e git+https://example.invalid/org/thing.git@v1#egg=edited", "edited"),
        ("https://example.invalid/wheels/My_Pkg-1.0-py3-none-any.whl", "my-pkg"),
        ("https://example.invalid/sdists/other-pkg-2.1.tar.gz", "other-pkg"),
    ],
)
def test_a_requirement_line_names_its_distribution(line: str, name: str) -> None:
    """A URL requirement must not be taken for a package named after its scheme ("git", "https")."""
    assert requirement_name(line) == name


@pytest.mark.parametrize("line", ["", "   ", "-r other.txt", "--index-url https://x.invalid", "."])
def test_options_and_local_paths_name_nothing(line: str) -> None:
    assert requirement_name(line) is None


def test_requirements_in_with_urls_declares_the_real_names(tmp_path: Path) -> None:
    (tmp_path / "requirements.in").write_text(
        "requests  # http\n"
        "git+https://example.invalid/org/lib.git#egg=lib\n"
        "https://example.invalid/w/Wheel_Dist-1.0-py3-none-any.whl\n"
        "-c constraints.txt\n"
    )
    assert declared_names(tmp_path, "requirements.in") == {"requests", "lib", "wheel-dist"}
