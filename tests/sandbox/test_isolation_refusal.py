"""No silent loss of isolation: without bubblewrap, untrusted code runs only when the user says so.

``REPOGATE_SANDBOX=unshare`` and ``=none`` stand for a machine without bubblewrap: the mechanism
is chosen by that documented switch, so these tests run the same with or without bwrap installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import HAS_BWRAP, run_json, stored_attempts
from repogate import sandbox
from repogate.cli import ExitCode, main
from repogate.cli.run import EMBEDDED_WEAK
from repogate.runner import RunOptions, check_isolation
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process chooses weaker isolation than bubblewrap, and nothing allows it yet."""
    monkeypatch.setenv(sandbox.SANDBOX_ENV, "unshare")
    monkeypatch.delenv(sandbox.WEAK_ENV, raising=False)


@pytest.mark.usefixtures("no_bwrap")
@pytest.mark.parametrize("default", [False, True])
def test_untrusted_code_without_bubblewrap_is_refused_before_anything_is_written(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    default: bool,
) -> None:
    """Threat: without bubblewrap a ``cmd:`` agent silently runs with the user's files open
    (it wrote into ``store.sqlite`` and flipped a verdict). A user's agent on the embedded default
    is not the embedded default's own agents: refused too."""
    marker = tmp_path / "agent-ran"
    out = tmp_path / "run"
    contract = [] if default else [str(parser.contracts[0])]
    code = main(["run", *contract, "--agent", f"cmd:touch {marker}", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == ExitCode.USAGE
    assert len(err.splitlines()) == 1
    assert err.startswith("error: REPOGATE_SANDBOX=unshare chooses weaker isolation")
    assert "install bubblewrap" in err
    assert "--allow-weak-isolation" in err
    assert not marker.exists()
    assert not out.exists()


def test_network_is_never_opened_silently(parser: BuiltScenario, tmp_path: Path) -> None:
    """Threat: ``REPOGATE_SANDBOX=none`` gave untrusted code the network, printing nothing."""
    env = {k: v for k, v in os.environ.items() if k != sandbox.WEAK_ENV}
    env[sandbox.SANDBOX_ENV] = "none"
    command = [sys.executable, "-m", "repogate.cli", "run", str(parser.contracts[0])]
    command += ["--agent", "null", "--out", str(tmp_path / "run")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == ExitCode.USAGE
    assert done.stderr.startswith("error: REPOGATE_SANDBOX=none chooses weaker isolation")
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "run").exists()


@pytest.mark.usefixtures("no_bwrap")
def test_the_flag_runs_with_weak_isolation_warned_and_recorded_everywhere(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Isolation never weakens silently: warned once at the start, naming why bubblewrap is not
    used, recorded in the manifest and in every decision. (New user: the same line twice on
    standard error, saying "(no bubblewrap)" though setup had said bwrap is present.)"""
    out = tmp_path / "run"
    code = main(
        [
            "run",
            str(parser.contracts[0]),
            *("--agent", "gold", "--agent", "null"),
            *("--out", str(out), "--allow-weak-isolation"),
        ]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.OK
    warnings = [line for line in err.splitlines() if line.startswith("warning: WEAK ISOLATION")]
    assert len(warnings) == 1, err  # once, at the start
    assert warnings[0].startswith(
        "warning: WEAK ISOLATION: filesystem not restricted "
        "(REPOGATE_SANDBOX=unshare leaves bubblewrap out), so untrusted code"
    ), warnings
    assert "allowed by --allow-weak-isolation" in warnings[0]
    assert "unshare: own PID namespace, no network" in warnings[0]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["weak_isolation_allowed_by"] == "--allow-weak-isolation"
    assert manifest["warnings"][0].startswith("WEAK ISOLATION")
    with Store.open(out) as store:
        decisions = [a.decision for a in store.attempts()]
        assert len(decisions) == 2
        for decision in decisions:
            assert decision is not None
            assert decision.isolation.startswith("WEAK ISOLATION")
            assert "allowed by --allow-weak-isolation" in decision.isolation
        assert [a.decision.outcome for a in store.attempts() if a.decision] == [
            "accepted",
            "rejected",
        ]


def test_under_bubblewrap_nothing_is_weak_and_decisions_say_so(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if sandbox.isolation(False).kind != "bwrap":
        pytest.skip("needs bubblewrap (bwrap) working here")
    out = tmp_path / "run"
    code, _rows = run_json(capsys, str(parser.contracts[0]), "--agent", "null", "--out", str(out))
    assert code == ExitCode.OK
    assert "warning" not in capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["weak_isolation_allowed_by"] is None
    assert manifest["warnings"] == []
    decision = stored_attempts(out)[0].decision
    assert decision is not None
    assert decision.isolation.startswith("bwrap: filesystem allowlist, own PID namespace")


@pytest.mark.usefixtures("no_bwrap")
def test_the_embedded_default_may_run_weaker_saying_so(tmp_path: Path) -> None:
    """The embedded default's own scripted agents may run without bubblewrap, said the same way."""
    warning = check_isolation(RunOptions(out=tmp_path, weak_isolation=EMBEDDED_WEAK))
    assert warning is not None
    assert warning.startswith("WEAK ISOLATION")
    assert warning.endswith(f"allowed by {EMBEDDED_WEAK}")
    with pytest.raises(sandbox.IsolationError):
        check_isolation(RunOptions(out=tmp_path))


@pytest.mark.parametrize("weak_first", [True, False])
def test_a_rerun_never_records_stronger_isolation_than_its_attempts_had(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    weak_first: bool,
) -> None:
    """New user: a run made without bubblewrap, rerun where it is (nothing left to run), reported
    ``bwrap`` and no WEAK warning, the manifest rewritten with the second machine's isolation.
    The manifest holds the weakest isolation any attempt of the run had, and the warning that
    came with it: a resume that runs nothing changes neither way, and an extension with a new
    agent under the other isolation records the weaker of the two."""
    out = tmp_path / "run"
    base = ["run", str(parser.contracts[0]), "--agent", "null", "--out", str(out)]

    def run(weak: bool, *extra: str) -> None:
        if weak:
            monkeypatch.setenv(sandbox.SANDBOX_ENV, "unshare")
        else:
            monkeypatch.delenv(sandbox.SANDBOX_ENV, raising=False)
        flag = ["--allow-weak-isolation"] if weak else []
        assert main([*base, *extra, *flag]) == ExitCode.OK
        capsys.readouterr()

    run(weak_first)
    made = (out / "manifest.json").read_text()
    run(not weak_first)  # a resume: the attempt is reused, nothing runs
    assert (out / "manifest.json").read_text() == made
    run(not weak_first, "--agent", "gold")  # an extension: the gold attempt runs
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["isolation_tests"]["kind"] == "unshare", manifest["isolation_tests"]
    assert manifest["isolation_agent"]["kind"] == "unshare"
    assert manifest["weak_isolation_allowed_by"] == "--allow-weak-isolation"
    assert any(w.startswith("WEAK ISOLATION") for w in manifest["warnings"]), manifest
    assert main(["report", str(out)]) == ExitCode.OK
    assert "tests: unshare" in capsys.readouterr().out


@pytest.mark.skipif(not HAS_BWRAP, reason="needs bubblewrap (bwrap) working here")
@pytest.mark.parametrize(
    ("variables", "flags"),
    [
        ({sandbox.SANDBOX_ENV: "unshare"}, ["--allow-weak-isolation"]),  # a machine without bwrap
        ({sandbox.SANDBOX_ENV: "none"}, ["--allow-weak-isolation"]),  # nor unshare: network ON
        ({}, ["--workers", "2"]),  # the same machine, another executor
    ],
)
def test_a_finished_run_done_again_keeps_its_manifest(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variables: dict[str, str],
    flags: list[str],
) -> None:
    """Issue 21: ``repogate run`` again on a finished run (every attempt done, none runs)
    rewrote the manifest with this command's isolation, as if untrusted code had run weakly
    (``isolation_tests`` none, network ON, a WEAK warning) or on another executor: a record of
    how attempts ran that no attempt had. A rerun that runs nothing leaves it as it was."""
    out = tmp_path / "run"
    args = ["run", str(parser.contracts[0]), "--agent", "null", "--out", str(out)]
    assert main(args) == ExitCode.OK
    made = (out / "manifest.json").read_text()
    assert json.loads(made)["isolation_tests"]["kind"] == "bwrap"
    capsys.readouterr()
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert main([*args, *flags]) == ExitCode.OK
    capsys.readouterr()
    assert (out / "manifest.json").read_text() == made
    (record,) = stored_attempts(out)
    assert record.decision is not None
    assert record.decision.isolation.startswith("bwrap: filesystem allowlist")
    assert main(["report", str(out), "--json"]) == ExitCode.OK
    (shown,) = json.loads(capsys.readouterr().out)["runs"]
    assert shown["isolation"] == "agents: bwrap, network off; tests: bwrap, network off"
    assert shown["warnings"] == []
    assert "WEAK" not in shown


@pytest.fixture
def probed_again() -> Iterator[None]:
    """The isolation probe runs again in the test, and again after it (its answer is cached)."""
    probe = sandbox._isolation._available  # the process-wide probe's cache
    probe.cache_clear()
    yield
    probe.cache_clear()


NO_NAMESPACE = (
    "bwrap: No permissions to create new namespace, likely because the kernel does not allow "
    "non-privileged user namespaces."
)


@pytest.mark.usefixtures("probed_again")
@pytest.mark.parametrize(
    ("bwrap", "why"),
    [
        (None, "bubblewrap (bwrap) is not installed"),
        (
            f"#!/bin/sh\necho '{NO_NAMESPACE}' >&2\nexit 1\n",
            f"bubblewrap (bwrap) is present but cannot run here: exit 1: {NO_NAMESPACE}",
        ),
        (
            "\x7fELF garbage",
            "bubblewrap (bwrap) is present but cannot run here: [Errno 8] Exec format error: "
            "'bwrap'",
        ),
        (
            "link",
            "bubblewrap (bwrap) is present at {bin}/bwrap but cannot run here: not an "
            "executable file",
        ),
    ],
    ids=["missing", "no-namespaces", "not-a-program", "a-device"],
)
def test_the_weak_isolation_warning_says_why_bubblewrap_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bwrap: str | None, why: str
) -> None:
    """New user: setup said bwrap is present but cannot run; the run said "(no bubblewrap)"."""
    folder = tmp_path / "bin"
    folder.mkdir()
    if bwrap == "link":
        (folder / "bwrap").symlink_to("/dev/null")  # a device: no program to run
    elif bwrap is not None:
        (folder / "bwrap").write_text(bwrap)
        (folder / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))  # no unshare either
    monkeypatch.setenv(sandbox.SANDBOX_ENV, "auto")
    said = sandbox.isolation(False).detail
    assert said == (
        "NETWORK NOT ISOLATED: neither bubblewrap nor unshare could make a network namespace on "
        "this machine, so the command could reach the network; install bubblewrap or allow user "
        f"namespaces; WEAK ISOLATION: filesystem not restricted ({why.format(bin=folder)}), so "
        "untrusted code can read and write the user's files"
    )
    monkeypatch.delenv(sandbox.WEAK_ENV, raising=False)
    with pytest.raises(sandbox.IsolationError, match=r"^bubblewrap \(bwrap\) is "):
        sandbox.require_isolation(False)
