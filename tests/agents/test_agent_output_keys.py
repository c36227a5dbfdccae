"""The keys of an agent's output files: every documented key is read, a misspelt one is named.

``requirements.json`` claims are repogate's own record (``docs/agents.md``): ``test_implication``
and ``criterion`` were documented but dropped, and a misspelt key (``confidance``) was dropped too,
so the claim read with the default confidence 1.0. ``agent.json`` is documented as open (other keys
ignored).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repogate.agents.command import read_agent_output


def _output(tmp_path: Path, name: str, value: Any) -> dict[str, Any]:
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text(json.dumps(value))
    return read_agent_output(out)


def test_every_documented_claim_key_is_kept(tmp_path: Path) -> None:
    claim = {
        "claim": "free above 50",
        "source": "issue",
        "confidence": 0.5,
        "test_implication": "cost('d', 50.0) == 0.0",
        "criterion": "R1",
    }
    (read,) = _output(tmp_path, "requirements.json", [claim])["requirements"]
    assert read.model_dump() == claim


def test_a_misspelt_claim_key_makes_the_file_ignored_with_its_name(tmp_path: Path) -> None:
    found = _output(tmp_path, "requirements.json", [{"claim": "c", "confidance": 0.1}])
    assert "requirements" not in found
    assert found["detail"].startswith("requirements.json ignored: ")
    assert "confidance" in found["detail"]


def test_agent_json_ignores_keys_it_does_not_name(tmp_path: Path) -> None:
    found = _output(tmp_path, "agent.json", {"model": "m", "scaffold": "s", "version": "1"})
    assert (found["model"], found["scaffold"], found.get("detail")) == ("m", "s", None)
