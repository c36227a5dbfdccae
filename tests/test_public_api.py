"""The public surface is what `__all__` names, and every name there resolves."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    "module", ["repogate", "repogate.git", "repogate.phases", "repogate.gates.authority"]
)
def test_every_exported_name_resolves(module: str) -> None:
    loaded = importlib.import_module(module)
    assert loaded.__all__, module
    missing = [name for name in loaded.__all__ if not hasattr(loaded, name)]
    assert missing == []


def test_the_top_level_api() -> None:
    import repogate

    assert sorted(repogate.__all__) == [
        "CandidateState",
        "Check",
        "Decision",
        "Evidence",
        "Profile",
        "Receipt",
        "TransitionContract",
        "__version__",
        "decide",
        "load_contract",
        "patch_digest",
    ]
