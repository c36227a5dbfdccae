"""Redirecting a cached venv's editable installs to each run's checkout (``repogate.environments._editable``)."""

from __future__ import annotations

from pathlib import Path

from repogate.environments._editable import detach


def _venv_with_finder(tmp_path: Path, mapping: dict[str, str]) -> tuple[Path, Path]:
    checkout = tmp_path / "checkout"
    site = tmp_path / "venv" / "lib" / "python3.9" / "site-packages"
    site.mkdir(parents=True)
    checkout.mkdir()
    text = f"MAPPING = {mapping!r}\nNAMESPACES = {{}}\n"
    (site / "__editable___pkg_1_0_finder.py").write_text(text)
    (site / "__editable__.pkg-1.0.pth").write_text(
        "import __editable___pkg_1_0_finder; __editable___pkg_1_0_finder.install()\n"
    )
    return tmp_path / "venv", checkout


def test_a_finder_mapping_subpackages_puts_only_the_top_folder_on_the_path(tmp_path: Path) -> None:
    """A subpackage's folder on PYTHONPATH shadows the standard library.

    setuptools maps every package a setup.py lists but whose parent it cannot see (old sympy
    lists ``sympy.codegen``): putting ``sympy/`` or ``sympy/codegen``'s parent on the path made
    ``sympy/codegen/ast.py`` the ``ast`` module, and pytest could not even start.
    """
    venv, checkout = _venv_with_finder(
        tmp_path,
        {
            "sympy": str(tmp_path / "checkout" / "sympy"),
            "sympy.codegen": str(tmp_path / "checkout" / "sympy" / "codegen"),
            "sympy.holonomic.sub": str(tmp_path / "checkout" / "sympy" / "holonomic" / "sub"),
        },
    )
    assert detach(venv, checkout) == (".",)


def test_a_src_layout_mapping_gives_src(tmp_path: Path) -> None:
    venv, checkout = _venv_with_finder(
        tmp_path, {"pkg": str(tmp_path / "checkout" / "src" / "pkg")}
    )
    assert detach(venv, checkout) == ("src",)
