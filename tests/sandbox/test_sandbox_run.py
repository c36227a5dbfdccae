from __future__ import annotations

import os
import resource
import socket
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import requires_bwrap
from repogate import sandbox
from repogate.errors import IsolationError
from repogate.sandbox import SandboxPolicy

PY = sys.executable
QUICK = SandboxPolicy(timeout_s=20)


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP port listening on the host's loopback, in the test's own network namespace."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


def _connect(port: int) -> list[str]:
    code = (
        "import socket,sys\n"
        f"s=socket.create_connection(('127.0.0.1',{port}),timeout=3)\n"
        "print('connected')"
    )
    return [PY, "-c", code]


def _mechanisms() -> list[str]:
    return [m for m in ("bwrap", "unshare") if _kind_with(m) == m]


def _kind_with(choice: str) -> str:
    old = os.environ.get(sandbox.SANDBOX_ENV)
    os.environ[sandbox.SANDBOX_ENV] = choice
    try:
        return sandbox.isolation(False).kind
    finally:
        if old is None:
            del os.environ[sandbox.SANDBOX_ENV]
        else:
            os.environ[sandbox.SANDBOX_ENV] = old


@pytest.mark.parametrize("mechanism", _mechanisms())
def test_network_is_off_unless_granted(
    listener: int, tmp_path: Path, mechanism: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threat: a command without a network grant reaches a server (here the host loopback)."""
    monkeypatch.setenv(sandbox.SANDBOX_ENV, mechanism)
    if mechanism != "bwrap":
        monkeypatch.setenv(sandbox.WEAK_ENV, "1")
    off = sandbox.run(_connect(listener), tmp_path, QUICK)
    assert off.isolation.kind == mechanism
    assert off.isolation.network_off
    assert off.returncode != 0
    assert "connected" not in off.stdout
    granted = sandbox.run(_connect(listener), tmp_path, QUICK.model_copy(update={"network": True}))
    assert not granted.isolation.network_off
    assert granted.ok, granted.stderr
    assert granted.stdout == "connected\n"


@pytest.mark.parametrize("choice", ["none", "unshare"])
def test_weak_isolation_is_refused_unless_allowed_and_then_said_loudly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, choice: str
) -> None:
    """Threat: without bubblewrap, untrusted code silently runs with the user's files (and, with
    ``REPOGATE_SANDBOX=none``, the network) open to it."""
    monkeypatch.setenv(sandbox.SANDBOX_ENV, choice)
    monkeypatch.delenv(sandbox.WEAK_ENV, raising=False)
    marker = tmp_path / "ran"
    with pytest.raises(IsolationError, match="install bubblewrap") as refused:
        sandbox.run(["touch", str(marker)], tmp_path, QUICK)
    assert f"{sandbox.SANDBOX_ENV}={choice}" in refused.value.what
    assert sandbox.WEAK_FLAG in refused.value.fix
    assert not marker.exists()  # refused before anything ran
    with sandbox.allowing_weak_isolation("the test's own command"):
        ran = sandbox.run(["touch", str(marker)], tmp_path, QUICK).isolation
    assert marker.exists()
    assert ran.kind == sandbox.isolation(False).kind
    assert ran.kind in ("none", "unshare")
    assert "WEAK ISOLATION" in ran.detail
    assert "allowed by the test's own command" in ran.detail
    if ran.kind == "none":
        assert not ran.network_off
        assert ran.detail.startswith("NETWORK NOT ISOLATED")


@requires_bwrap
def test_read_only_filesystem_except_writable_folders(tmp_path: Path) -> None:
    """Threat: an agent writes outside its workspace (the environment cache, other attempts)."""
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    policy = QUICK.model_copy(update={"writable": (inside,)})
    script = (
        "import pathlib, sys\n"
        "pathlib.Path(sys.argv[1], 'ok.txt').write_text('x')\n"
        "try:\n    pathlib.Path(sys.argv[2], 'bad.txt').write_text('x')\n"
        "except OSError as e:\n    print('refused', e.errno)\n"
    )
    result = sandbox.run([sys.executable, "-c", script, str(inside), str(outside)], inside, policy)
    assert result.ok, result.stderr
    assert "refused" in result.stdout
    assert (inside / "ok.txt").exists()
    assert not (outside / "bad.txt").exists()
    assert "writable: inside, private HOME and TMPDIR" in result.isolation.detail


@requires_bwrap
def test_hidden_folders_look_empty(tmp_path: Path) -> None:
    """Threat: an agent reads the harness's full-history repository or the hidden tests on disk."""
    secret = tmp_path / "history"
    secret.mkdir()
    (secret / "fix.patch").write_text("the real fix")
    work = tmp_path / "work"
    work.mkdir()
    policy = QUICK.model_copy(update={"writable": (work,), "hidden": (secret,)})
    absent = sandbox.run(["ls", "-A", str(secret)], work, policy)
    assert absent.returncode == 2  # not granted: it does not exist for the command
    assert "No such file or directory" in absent.stderr
    granted = policy.model_copy(update={"readable": (tmp_path,)})
    result = sandbox.run(["ls", "-A", str(secret)], work, granted)
    assert result.ok, result.stderr
    assert result.stdout == ""  # inside a granted folder, a hidden one is shown empty
    assert (secret / "fix.patch").read_text() == "the real fix"


def test_environment_is_scrubbed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Threat: an untrusted command reads the caller's tokens and keys from its environment."""
    secrets = {
        "GITHUB_TOKEN": "ghp_fake",
        "AWS_SECRET_ACCESS_KEY": "fake",
        "OPENAI_API_KEY": "sk-fake",
        "SSH_AUTH_SOCK": "/tmp/fake.sock",
        "MY_PASSWORD": "hunter2",
    }
    for key, value in secrets.items():
        monkeypatch.setenv(key, value)
    policy = QUICK.model_copy(update={"env": {"GRANTED": "yes"}})
    result = sandbox.run(["env"], tmp_path, policy)
    env = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert not set(secrets) & set(env)
    assert not any(value in result.stdout for value in secrets.values())
    assert env["GRANTED"] == "yes"
    assert set(env) <= {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "HOME", "TMPDIR"} | {
        "TMP",
        "TEMP",
        "GRANTED",
        "PWD",
        "SHLVL",
        "_",
    }


def test_home_and_tmpdir_are_private(tmp_path: Path) -> None:
    """Threat: a command reads the user's ~/.gitconfig, ~/.netrc or cloud credentials."""
    script = 'echo "$HOME"; echo "$TMPDIR"; ls -A "$HOME" | wc -l; touch "$HOME/mark" "$TMPDIR/t"'
    result = sandbox.run(["sh", "-c", script], tmp_path, QUICK)
    home, tmp, count = result.stdout.split()
    assert home != os.environ.get("HOME")
    assert count == "0"
    assert not Path(home).exists()
    assert not Path(tmp).exists()
    given = tmp_path / "home"
    given.mkdir()
    kept = sandbox.run(["sh", "-c", script], tmp_path, QUICK.model_copy(update={"home": given}))
    assert kept.stdout.split()[0] == str(given)
    assert (given / "mark").exists()


def _processes_with(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(proc.name)
    return found


def _unique_sleep() -> str:
    return f"100.{uuid.uuid4().int % 10**9:09d}"


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    """Threat: a hung agent or test leaves grandchildren running after its budget."""
    marker = _unique_sleep()  # unique, so a concurrent run of this suite is not mistaken for ours
    script = f"sleep {marker} & sleep {marker} & wait"
    policy = SandboxPolicy(timeout_s=1)
    result = sandbox.run(["sh", "-c", script], tmp_path, policy)
    assert result.timed_out
    assert result.returncode == -9
    assert not result.ok
    assert 1 <= result.duration_s < 5
    assert _processes_with(marker) == []


@pytest.mark.parametrize("mechanism", _mechanisms())
def test_timeout_kills_descendants_that_left_the_group(
    tmp_path: Path, mechanism: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threat: a command daemonises (``setsid``) and its child outlives the run."""
    monkeypatch.setenv(sandbox.SANDBOX_ENV, mechanism)
    monkeypatch.setenv(sandbox.WEAK_ENV, "1")
    marker = _unique_sleep()
    script = f"setsid sleep {marker} & sleep {marker}"
    result = sandbox.run(["sh", "-c", script], tmp_path, SandboxPolicy(timeout_s=1))
    assert result.timed_out
    assert _processes_with(marker) == []


def test_huge_output_is_capped_and_memory_stays_small(tmp_path: Path) -> None:
    """Threat: a command printing hundreds of megabytes exhausts the evaluator's memory."""
    total_mb = 300
    code = (
        "import sys\nb=b'x'*(1<<20)\n"
        f"for _ in range({total_mb}): sys.stdout.buffer.write(b)\n"
        "sys.stderr.write('done')"
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cap = 64 * 1024
    result = sandbox.run(
        [PY, "-c", code], tmp_path, SandboxPolicy(timeout_s=60, output_cap_bytes=cap)
    )
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert result.ok
    assert len(result.stdout) == cap
    assert result.stderr == "done"
    assert result.truncated_bytes == total_mb * (1 << 20) - cap
    assert grown_kib < 50 * 1024


def test_command_not_found_is_a_value(tmp_path: Path) -> None:
    result = sandbox.run(["no-such-command-xyz", "--flag"], tmp_path, QUICK)
    assert result.returncode == 127
    assert "no-such-command-xyz" in result.stderr
    assert not result.ok
    (tmp_path / "plain.txt").write_text("not a program")
    assert sandbox.run(["./plain.txt"], tmp_path, QUICK).returncode == 126


def test_exit_code_and_streams_are_kept(tmp_path: Path) -> None:
    result = sandbox.run(["sh", "-c", "echo out; echo err >&2; exit 3"], tmp_path, QUICK)
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.argv == ("sh", "-c", "echo out; echo err >&2; exit 3")
    assert not result.timed_out


def test_escaped_descendant_holding_the_pipe_does_not_hang_the_harness(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Threat: a command daemonises a child holding stdout open; the evaluator waits forever."""
    monkeypatch.setenv(sandbox.SANDBOX_ENV, "none")
    monkeypatch.setenv(sandbox.WEAK_ENV, "1")
    result = sandbox.run(["sh", "-c", "setsid sleep 4 & echo started"], tmp_path, QUICK)
    assert result.ok
    assert result.stdout == "started\n"
    assert result.duration_s < 3.5


@requires_bwrap
@pytest.mark.parametrize("form", ["word", "option=value", "file-url"])
def test_a_folder_the_command_line_names_is_readable_inside(tmp_path: Path, form: str) -> None:
    """``uv pip install --find-links /abs/wheels`` (a contract's install command) must see the
    folder it names: only files named on the command line were mounted, so a local wheel folder
    did not exist in the sandbox and the environment could not be built (shared case
    environment-drift). Read-only: the command cannot write it."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "dep-2.0-py3-none-any.whl").write_text("x")
    arg = {"word": str(wheels), "option=value": f"--find-links={wheels}"}.get(form, wheels.as_uri())
    code = (
        "import os, sys; p = sys.argv[1].split('=', 1)[-1].removeprefix('file://');"
        " print(os.listdir(p)); open(os.path.join(p, 'new'), 'w')"
    )
    work = tmp_path / "work"
    work.mkdir()
    result = sandbox.run(["/usr/bin/python3", "-c", code, arg], work, SandboxPolicy(timeout_s=60))
    assert "['dep-2.0-py3-none-any.whl']" in result.stdout, result.stderr
    assert "Read-only file system" in result.stderr
    assert sorted(p.name for p in wheels.iterdir()) == ["dep-2.0-py3-none-any.whl"]
