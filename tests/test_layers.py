"""Layers go one way: no module reaches into another package's privates, no top-level loop.

Read from ``src/`` with :mod:`ast`; each rule is also run on a small tree that breaks it, so the
checks are seen to fail.
"""

from __future__ import annotations

from pathlib import Path

from _src_imports import cycles, private_reach_ins, top_level_graph


def test_no_module_imports_a_private_module_of_another_package() -> None:
    assert private_reach_ins() == []


def test_no_import_cycle_between_top_level_modules_and_packages() -> None:
    graph = top_level_graph()
    loops = cycles(graph)
    edges = [
        f"{a} -> {b} ({graph[a][b]})" for loop in loops for a in loop for b in graph[a] if b in loop
    ]
    assert loops == [], edges


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_rules_find_reach_ins_and_loops(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/_root.py": "",
            "pkg/low/__init__.py": "from pkg.low import _own\n",
            "pkg/low/_own.py": "from pkg import _root\n",
            "pkg/low/_deep/__init__.py": "",
            "pkg/low/_deep/leaf.py": "",
            "pkg/high/__init__.py": "",
            "pkg/high/user.py": (
                "from pkg.low._own import x\n"
                "from pkg.low import _own\n"
                "import pkg.low._deep.leaf\n"
                "from ..low import _own as again\n"
                "from pkg.low import public\n"
            ),
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "def f():\n    from pkg.c import g\n",
            "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n",
        },
    )
    assert private_reach_ins(src, "pkg") == [
        "pkg/high/user.py:1: pkg.high.user -> pkg.low._own",
        "pkg/high/user.py:2: pkg.high.user -> pkg.low._own",
        "pkg/high/user.py:3: pkg.high.user -> pkg.low._deep.leaf",
        "pkg/high/user.py:4: pkg.high.user -> pkg.low._own",
    ]
    graph = top_level_graph(src, "pkg")
    assert graph["high"] == {"low": "pkg/high/user.py:1"}
    assert cycles(graph) == [["a", "b", "c"]]
