"""The README's scripts (scripts/setup, scripts/demo, scripts/check) on a new user's machine.

New user: `UV_CACHE_DIR=` exported empty stopped the first command at once (uv reads an empty
setting as the option given no value: ``error: a value is required for '--cache-dir
<CACHE_DIR>'``), and so do some forty other empty uv settings. Setup as root installed bubblewrap
with apt-get and never checked that it runs; where it cannot make namespaces (a container without
CAP_SYS_ADMIN, a user whose user namespaces are limited) the user learnt of it only from the run's
weak-isolation warning.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
UV_ENV = SCRIPTS / "uv-env.sh"
BROKEN_UV = re.compile(r"a value is required|Failed to parse environment variable|invalid value")
NOT_RUNNING = "setup: bubblewrap (bwrap) is installed but does not run here"


def _env(**changes: str) -> dict[str, str]:
    """This process's environment with ``changes``, offline (nothing here needs the network)."""
    return {**os.environ, "UV_OFFLINE": "1", **changes}


EMPTY_SETTINGS = {"UV_CACHE_DIR": "", "UV_FROZEN": "", "UV_LINK_MODE": ""}
"""One empty uv setting of each kind: a path, a boolean, a choice (each alone stops uv)."""


def test_the_first_command_takes_empty_uv_settings_as_unset(tmp_path: Path) -> None:
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    done = subprocess.run(
        [str(SCRIPTS / "demo"), str(a_file)],
        env=_env(**EMPTY_SETTINGS),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    # uv started repogate, which refused the --out given: its own one line, exit 2
    assert BROKEN_UV.search(done.stderr) is None, done.stderr
    # (setup's own lines may come first, as where bubblewrap cannot run)
    assert done.stderr.splitlines()[-1] == f"error: --out {a_file} is a file; give a folder"
    assert done.returncode == 2


def test_uv_env_unsets_the_empty_uv_settings_only(tmp_path: Path) -> None:
    env = _env(
        UV_CACHE_DIR="",
        UV_NO_CACHE="",
        UV_PREVIEW_FEATURES="",
        UV_HTTP_TIMEOUT="120",
        NOT_UV_SETTING="",
        TRICKY="first line\nUV_CONCURRENT_DOWNLOADS=",
        UV_CONCURRENT_DOWNLOADS="4",
    )
    script = f'. "{UV_ENV}" && env && "$UV_BIN" lock --check --offline'
    done = subprocess.run(
        ["sh", "-c", script],
        env={**env, "UV_BIN": shutil.which("uv") or "uv"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    names = {line.split("=", 1)[0] for line in done.stdout.splitlines() if "=" in line}
    assert {"UV_CACHE_DIR", "UV_NO_CACHE", "UV_PREVIEW_FEATURES"} & names == set()
    assert "UV_HTTP_TIMEOUT=120" in done.stdout
    assert "UV_CONCURRENT_DOWNLOADS=4" in done.stdout.splitlines()
    assert "NOT_UV_SETTING" in names
    assert "_uv_name" not in names and "_uv_value" not in names


@pytest.mark.parametrize("script", ["setup", "demo", "check"])
def test_each_readme_script_clears_empty_uv_settings_before_it_runs_uv(script: str) -> None:
    lines = (SCRIPTS / script).read_text().splitlines()
    sourced = [i for i, line in enumerate(lines) if re.match(r"\. .*uv-env\.sh", line)]
    uses_uv = [i for i, line in enumerate(lines) if re.search(r'"\$(uv|candidate|venv/bin)', line)]
    assert sourced, f"scripts/{script} does not source uv-env.sh"
    assert uses_uv and sourced[0] < uses_uv[0], f"scripts/{script} runs uv before uv-env.sh"


def _setup(prefix: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run scripts/setup under ``prefix`` with uv on PATH; bubblewrap is already installed."""
    tools = tmp_path / "bin"
    tools.mkdir()
    uv = shutil.which("uv")
    assert uv is not None
    (tools / "uv").symlink_to(uv)
    path = f"{tools}:/usr/local/bin:/usr/bin:/bin"
    return subprocess.run(
        [*prefix, str(SCRIPTS / "setup")],
        env={"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def _root_with(*tools: str) -> bool:
    return os.geteuid() == 0 and all(shutil.which(t) for t in ("bwrap", *tools))


@pytest.mark.skipif(not _root_with("setpriv"), reason="needs root, bwrap and setpriv")
def test_setup_says_when_bubblewrap_does_not_run_as_root(tmp_path: Path) -> None:
    # root in a container without CAP_SYS_ADMIN (Docker's default): bwrap cannot make namespaces
    done = _setup(["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("/uv")
    assert NOT_RUNNING in done.stderr, done.stderr
    assert "Creating new namespace failed: Operation not permitted" in done.stderr
    assert "CAP_SYS_ADMIN" in done.stderr  # how to fix it, for root


def _nested_userns_works() -> bool:
    probe = ["unshare", "--user", "--map-root-user", "unshare", "--user", "true"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(
    not (_root_with("unshare") and _nested_userns_works()),
    reason="needs root, bwrap and nested user namespaces (unshare --user)",
)
def test_setup_says_when_bubblewrap_does_not_run_for_a_user(tmp_path: Path) -> None:
    # a user whose user namespaces are limited: the outer namespace allows one, which the user's
    # own takes, so bwrap's is refused (ENOSPC), as under kernel.unprivileged_userns_clone=0
    limit = 'echo 1 > /proc/sys/user/max_user_namespaces && exec "$@"'
    prefix = ["unshare", "--user", "--map-root-user", "sh", "-c", limit, "sh"]
    prefix += ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
    done = _setup(prefix, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("/uv")
    assert NOT_RUNNING in done.stderr, done.stderr
    assert "max_*_namespaces exceeded" in done.stderr
    assert "user namespaces" in done.stderr  # how to fix it, for a user


@pytest.mark.skipif(not _root_with(), reason="needs root and a bwrap")
def test_setup_says_nothing_of_a_bubblewrap_that_runs(tmp_path: Path) -> None:
    assert subprocess.run(["bwrap", "--ro-bind", "/", "/", "true"], check=False).returncode == 0
    done = _setup([], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "bubblewrap" not in done.stderr and "bwrap" not in done.stderr, done.stderr


def _setup_with_bwrap(
    tmp_path: Path, make: str, uv_at: str = "bin/uv"
) -> subprocess.CompletedProcess[str]:
    """Run scripts/setup where the only ``bwrap`` on PATH is the one ``make`` (shell) writes at
    ``$BWRAP``: every other program of /usr/bin stays reachable, apt-get and uv not (nothing is
    installed), and the only uv is at ``uv_at`` below ``tmp_path``, the home folder (``bin/``
    is on PATH)."""
    shadow = tmp_path / "usr-bin"
    shadow.mkdir()
    for program in Path("/usr/bin").iterdir():
        if program.name not in ("bwrap", "apt-get", "uv"):
            (shadow / program.name).symlink_to(program)
    tools = tmp_path / "bin"
    tools.mkdir()
    uv = shutil.which("uv")
    assert uv is not None
    (tmp_path / uv_at).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / uv_at).symlink_to(uv)
    env = {"PATH": f"{tools}:{shadow}", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    subprocess.run(["sh", "-c", make], env={**env, "BWRAP": str(shadow / "bwrap")}, check=True)
    return subprocess.run(
        [str(SCRIPTS / "setup")], env=env, capture_output=True, text=True, check=False, timeout=300
    )


def test_setup_says_a_bubblewrap_that_is_not_executable_cannot_run(tmp_path: Path) -> None:
    """New user: with /usr/bin/bwrap not executable (chmod -x), setup said bubblewrap was
    missing (as a user) or ran apt-get and said it put no bwrap on PATH (as root)."""
    done = _setup_with_bwrap(
        tmp_path, 'printf "#!/bin/sh\\nexit 0\\n" > "$BWRAP"; chmod 644 "$BWRAP"'
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("/uv")
    bwrap = tmp_path / "usr-bin" / "bwrap"
    said = f"setup: bubblewrap (bwrap) is present at {bwrap} but cannot run: it is not executable"
    assert said in done.stderr, done.stderr
    assert "(-rw-r--r--)" in done.stderr and f"chmod 755 {bwrap}" in done.stderr
    assert "missing" not in done.stderr and "apt-get installed" not in done.stderr


@pytest.mark.parametrize(
    ("make", "mode"),
    [('ln -s /dev/null "$BWRAP"', "(crw-rw-rw-)"), ('mkfifo -m 644 "$BWRAP"', "(prw-r--r--)")],
    ids=["dev-null", "fifo"],
)
def test_setup_says_a_bubblewrap_that_is_no_file_is_no_program(
    tmp_path: Path, make: str, mode: str
) -> None:
    """New user: /dev/null bound over /usr/bin/bwrap was said to be "not executable", with the
    advice to chmod 755 it (which would change /dev/null)."""
    done = _setup_with_bwrap(tmp_path, make)
    assert done.returncode == 0, done.stderr
    said = "but cannot run: it is not a program but a device, pipe or socket " + mode
    assert said in done.stderr, done.stderr
    assert "chmod" not in done.stderr
    assert "apt-get install --reinstall bubblewrap" in done.stderr


def test_setup_says_a_bubblewrap_link_to_nothing_cannot_run(tmp_path: Path) -> None:
    done = _setup_with_bwrap(tmp_path, 'ln -s /nonexistent/bwrap "$BWRAP"')
    assert done.returncode == 0, done.stderr
    bwrap = tmp_path / "usr-bin" / "bwrap"
    said = f"is present at {bwrap} but cannot run: it is a link to /nonexistent/bwrap, which"
    assert said in done.stderr and "does not exist" in done.stderr, done.stderr
    assert "apt-get install --reinstall bubblewrap" in done.stderr
    assert "missing" not in done.stderr


def test_setup_says_a_bubblewrap_that_fails_with_its_status_and_words(tmp_path: Path) -> None:
    make = 'printf "#!/bin/sh\\necho \\"bwrap: setting up uid map: Permission denied\\" >&2\\nexit 1\\n" > "$BWRAP"; chmod 755 "$BWRAP"'
    done = _setup_with_bwrap(tmp_path, make)
    assert done.returncode == 0, done.stderr
    assert NOT_RUNNING in done.stderr, done.stderr
    assert "exit 1: bwrap: setting up uid map: Permission denied" in done.stderr


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["--help"], 0, "usage: scripts/demo [OUT_DIR]"),
        (["-h"], 0, "usage: scripts/demo [OUT_DIR]"),
        (["--out", "x"], 2, "error: unknown option --out; run scripts/demo [OUT_DIR]"),
    ],
    ids=["help", "h", "unknown-option"],
)
def test_demo_answers_help_and_refuses_options(
    tmp_path: Path, args: list[str], code: int, said: str
) -> None:
    """New user: `scripts/demo --help` started the 29-attempt run into a folder named `--help`."""
    done = subprocess.run(
        [str(SCRIPTS / "demo"), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == code, done.stderr
    assert said in done.stdout + done.stderr
    assert not (SCRIPTS.parent / args[0]).exists()  # no run into a folder named like the option


RUNS = 'printf "#!/bin/sh\\nexit 0\\n" > "$BWRAP"; chmod 755 "$BWRAP"'
"""A ``bwrap`` that runs (``make`` for :func:`_setup_with_bwrap`)."""


@pytest.mark.parametrize(
    "uv_at",
    ["bin/uv", ".local/share/repogate/uv/bin/uv", ".local/bin/uv"],
    ids=["on-path", "setup-venv", "user-site"],
)
def test_setup_names_the_uv_it_reuses(tmp_path: Path, uv_at: str) -> None:
    """New user: setup said `setup: uv: PATH` of a uv it installed, and nothing of one it found
    (on PATH, in its own venv from an earlier run, or in ~/.local/bin) and reused."""
    done = _setup_with_bwrap(tmp_path, RUNS, uv_at)
    assert done.returncode == 0, done.stderr
    uv = tmp_path / uv_at
    assert done.stdout == f"{uv}\n"
    assert done.stderr.splitlines() == [f"setup: uv: {uv} (found here; reused, nothing installed)"]
