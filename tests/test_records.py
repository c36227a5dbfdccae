"""Every record is a ``repogate._model.FrozenModel`` (or its one variant, ``ForeignModel``).

Read from ``src/`` with :mod:`ast`: only ``_model.py`` derives from pydantic's ``BaseModel``
directly, and no record sets its own ``frozen`` or ``extra`` (the two bases decide both).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

from _src_imports import SRC, modules
from repogate._model import ForeignModel, FrozenModel


def _records(src: Path = SRC) -> tuple[list[str], list[str]]:
    """(classes deriving from BaseModel directly, records setting frozen/extra themselves)."""
    direct: list[str] = []
    configured: list[str] = []
    for name, path in modules(src).items():
        if name == "repogate._model":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {ast.unparse(b) for b in node.bases}
            if bases & {"BaseModel", "pydantic.BaseModel"}:
                direct.append(f"{name}.{node.name}")
            for item in node.body:
                if (
                    isinstance(item, ast.Assign)
                    and [ast.unparse(t) for t in item.targets] == ["model_config"]
                    and isinstance(item.value, ast.Call)
                    and {k.arg for k in item.value.keywords} & {"frozen", "extra"}
                ):
                    configured.append(f"{name}.{node.name}")
    return direct, configured


def test_every_record_derives_from_the_one_base() -> None:
    direct, configured = _records()
    assert direct == []
    assert configured == []


def test_the_bases_freeze_and_treat_unknown_keys_as_documented() -> None:
    class Strict(FrozenModel):
        x: int

    class Foreign(ForeignModel):
        x: int

    assert Foreign.model_validate({"x": 1, "new_in_v2": True}) == Foreign(x=1)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Strict.model_validate({"x": 1, "new_in_v2": True})
    for record in (Strict(x=1), Foreign(x=1)):
        with pytest.raises(ValidationError, match="frozen"):
            record.x = 2  # type: ignore[misc]


def test_the_records_reading_third_party_shapes_are_foreign() -> None:
    from repogate.agents.predictions import Prediction
    from repogate.reviews import GitHubPull, GitHubReview
    from repogate.tasks.swebench import Instance

    for record in (Prediction, GitHubPull, GitHubReview, Instance):
        assert issubclass(record, ForeignModel), record
        assert record.model_config["frozen"] is True


def test_the_scan_finds_a_plain_record_and_a_local_config(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "m.py").write_text(
        "class Plain(BaseModel):\n    x: int\n\n\n"
        "class Loose(FrozenModel):\n    model_config = ConfigDict(extra='allow')\n\n\n"
        "class Fine(FrozenModel):\n    model_config = ConfigDict(use_attribute_docstrings=True)\n"
    )
    assert _records(tmp_path) == (["pkg.m.Plain"], ["pkg.m.Loose"])
