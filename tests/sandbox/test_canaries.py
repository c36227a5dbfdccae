"""Canaries: nothing of the user's secrets or files is visible to untrusted code (issue 8).

Thirteen canaries are planted where a hostile agent or a hostile patch would look: four in the
harness's environment (readable through ``/proc/<pid>/environ`` when the PID namespace is shared),
eight in the usual credential files of the user's home, and one in a sibling folder of the run
directory (another run). A ``cmd:`` agent and code run by pytest then search for all of them.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

from conftest import requires_bwrap, run_json
from repogate.oracles.pytest_runner import run_tests
from repogate.sandbox import SandboxPolicy
from repogate.tasks.scenarios import BuiltScenario

ENV_NAMES = ("GITHUB_TOKEN", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "REPOGATE_CANARY")
HOME_FILES = (
    ".pgpass", ".cache/huggingface/token", ".bash_history", ".ssh/id_ed25519",
    ".aws/credentials", ".netrc", ".config/gh/hosts.yml", ".docker/config.json",
)  # fmt: skip

# Searches its environment, every process's environ and command line, and the places named
# (the probe is told where to look, never the values): prints each canary token it finds.
PROBE = """
import json, os, pathlib, re, sys
places = json.loads(os.environ.get("PROBE_PLACES") or sys.argv[1])
seen = [" ".join(f"{k}={v}" for k, v in os.environ.items())]
for proc in pathlib.Path("/proc").glob("[0-9]*"):
    for name in ("environ", "cmdline"):
        try:
            seen.append((proc / name).read_bytes().decode("utf-8", "replace"))
        except OSError:
            pass
for place in places:
    root = pathlib.Path(place)
    for path in [root, *(root.rglob("*") if root.is_dir() else [])]:
        try:
            seen.append(path.read_text(errors="replace"))
        except OSError:
            pass
found = sorted(set(re.findall("canary-[0-9a-f]{32}", "\\n".join(seen))))
print("REACHED", json.dumps(found))
"""


def _reached(canaries: dict[str, str], line: str) -> list[str]:
    """Names of the canaries whose values a probe's ``REACHED [...]`` line lists."""
    found = set(json.loads(line.split("REACHED ", 1)[1]))
    return sorted(name for name, value in canaries.items() if value in found)


def _plant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, str], list[str]]:
    """Plant the 13 canaries; return them by name, and the places a probe should search."""
    canaries = {name: f"canary-{uuid.uuid4().hex}" for name in ENV_NAMES}
    for name, value in canaries.items():
        monkeypatch.setenv(name, value)
    home = tmp_path / "home"
    for name in HOME_FILES:
        canaries[name] = f"canary-{uuid.uuid4().hex}"
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"secret {canaries[name]}\n")
    monkeypatch.setenv("HOME", str(home))  # the harness's own HOME: the user's, here fake
    sibling = tmp_path / "other-run"
    sibling.mkdir()
    canaries["sibling-run"] = f"canary-{uuid.uuid4().hex}"
    (sibling / "decision.json").write_text(canaries["sibling-run"])
    assert len(canaries) == 13
    return canaries, [str(home), *(str(home / n) for n in HOME_FILES), str(sibling)]


@requires_bwrap
def test_no_canary_reaches_a_cmd_agent(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Threat: an agent reads the user's tokens (environment, ``~/.pgpass``, the Hugging Face
    token, shell history) or another run's results, and leaks them through its patch."""
    canaries, places = _plant(tmp_path, monkeypatch)
    agent = tmp_path / "agent.sh"
    agent.write_text(  # the environment's python, given the probe on stdin
        f"#!/bin/sh\npython - '{json.dumps(places)}' > confparse/reached.txt 2>&1 <<'PY'\n"
        f"{PROBE}\nPY\n"
    )
    agent.chmod(0o755)
    code, rows = run_json(
        capsys, str(parser.contracts[0]), "--agent", f"cmd:{agent}", "--out", str(tmp_path / "run")
    )
    assert code == 0, rows
    patch = next((tmp_path / "run" / "attempts").glob("*/patch.diff")).read_text()
    line = next(line for line in patch.splitlines() if line.startswith("+REACHED"))
    assert _reached(canaries, line) == []  # 0 of 13


@requires_bwrap
def test_no_canary_reaches_code_run_by_the_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threat: the candidate's code, imported by the tests, reads the user's secrets (the test
    run has the same policy as the pipeline's: writes only in the attempt's scratch folder)."""
    canaries, places = _plant(tmp_path, monkeypatch)
    work = tmp_path / "run" / "work"
    tree = work / "candidate"
    tree.mkdir(parents=True)
    (tree / "probe_module.py").write_text(PROBE)
    (tree / "test_probe.py").write_text(
        "def test_imports_the_candidate():\n    import probe_module\n"
    )
    policy = SandboxPolicy(
        timeout_s=120, writable=(work,), env={"PROBE_PLACES": json.dumps(places)}
    )
    ran = run_tests(
        Path(sys.executable),
        tree,
        "python -m pytest -s -q",
        None,
        tmp_path / "run" / "evidence" / "tests",
        policy,
    )
    assert ran.status == "ok", ran.reason
    line = next(line for line in ran.execution.stdout_tail.splitlines() if "REACHED" in line)
    assert _reached(canaries, line) == []  # 0 of 13
