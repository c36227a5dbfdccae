"""Services the tests need: started on loopback inside each test run's sandbox, stopped after it.

Five of six requests instances were lost to ``needs_network`` because their tests call
httpbin.org; a contract that declares a local service reaches them without any network. A service
that does not start is the environment's fault: it must never be scored as the agent's failure.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _task import make_task
from conftest import gold_and_null, run_json
from repogate.cli import ExitCode
from repogate.contract import Service
from repogate.oracles import services
from repogate.store import Store

pytestmark = pytest.mark.slow

PORT = 8765
_CLIENT = """import os
import urllib.request


def fetch(path):
    with urllib.request.urlopen(os.environ["SVC_URL"] + path, timeout=5) as answer:
        return answer.read().decode().strip()
"""
_TEST = "import client\n\n\ndef test_hello():\n    assert client.fetch('/hello') == 'hi'\n"
_SHOUT = "\n\ndef shout(path):\n    return fetch(path).upper()\n"
_TEST_SHOUT = "\n\ndef test_shout():\n    assert client.shout('/hello') == 'HI'\n"
_SERVER = f"""
import http.server


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hi" if self.path == "/hello" else b"?")


http.server.HTTPServer(("127.0.0.1", {PORT}), Hello).serve_forever()
"""
_READY = f"python -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{PORT}/hello', timeout=1)\""


def _services(start: str) -> str:
    return (
        "[[environment.services]]\n"
        'name = "files"\n'
        f"start = {json.dumps(start)}\n"
        f"ready = {json.dumps(_READY)}\n"
        "ready_timeout_s = 20\n"
        f'env = {{ SVC_URL = "http://127.0.0.1:{PORT}" }}\n'
    )


def _task(root: Path, start: str) -> Path:
    path, _base, _fix = make_task(
        root,
        {"client.py": _CLIENT, "tests/test_client.py": _TEST},
        {"client.py": _CLIENT + _SHOUT, "tests/test_client.py": _TEST + _TEST_SHOUT},
        install=["uv pip install pytest"],
        fail_to_pass=["tests/test_client.py::test_shout"],
        pass_to_pass=["tests/test_client.py::test_hello"],
        editable=["client.py"],
        environment=_services(start),
    )
    return path


def test_a_loopback_service_lets_tests_that_need_it_grade_the_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tests reach the service at 127.0.0.1 inside the sandbox: gold is accepted, null is
    rejected for its own failure, and the service is in the environment's digest and receipt."""
    start = f"python -c {shlex.quote(_SERVER)}"
    contract = _task(tmp_path / "ok", start)
    out = tmp_path / "run"
    by_agent = gold_and_null(capsys, contract, out)
    assert by_agent["null"]["errored"] == []
    with Store.open(out) as store:
        receipts = {r.gate: r for r in store.receipts(str(by_agent["gold"]["attempt_id"]))}
    environment = receipts["E"].details["environment"]
    assert [s["name"] for s in environment["services"]] == ["files"]
    (graded,) = receipts["V"].details["runs"]
    assert graded["services"][0].startswith("files ready after ")


def test_a_service_that_does_not_start_is_an_environment_error_never_the_agents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = _task(tmp_path / "broken", "python -c 'raise SystemExit(4)'")
    code, rows = run_json(capsys, str(contract), "--agent", "gold", "--out", str(tmp_path / "run"))
    assert code == ExitCode.OK
    (row,) = rows
    assert row["outcome"] == "error" and row["failed"] == []
    assert "environment_reproduced" in row["errored"]  # type: ignore[operator]
    checks = row["checks"]
    assert isinstance(checks, list)
    detail = next(c["detail"] for c in checks if c["name"] == "environment_reproduced")
    assert "service 'files' did not start: exited with code 4 before it was ready" in detail


def test_the_launcher_stops_every_service_after_the_tests_and_keeps_their_exit_code(
    tmp_path: Path,
) -> None:
    """A service must not outlive the run it served (the next run, another attempt's, would
    otherwise talk to it)."""
    pid_file = tmp_path / "svc.pid"
    service = Service(
        name="sleeper",
        start=f"echo $$ > {pid_file}; exec sleep 600",
        ready=f"test -s {pid_file}",
        env={"SVC": "1"},
    )
    (tmp_path / "report").mkdir()
    folder = services.prepare(tmp_path / "report")
    with services.status_pipe([service]) as (fd, said):
        argv = services.wrapped(
            [sys.executable, "-c", "import os, sys; sys.exit(7 if os.environ['SVC'] else 0)"],
            [service],
            folder,
            fd,
            -1,
        )
        env = {**os.environ, **services.variables([service])}
        done = subprocess.run(argv, pass_fds=(fd,), env=env, check=False, timeout=60)
    assert done.returncode == 7  # the tests' own exit code
    assert said[0].failure == "" and said[0].started[0].startswith("sleeper ready after ")
    pid = int(pid_file.read_text())
    for _ in range(50):
        if not Path(f"/proc/{pid}").exists() or "Z" in _state(pid):
            break
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return "Z"


def test_a_service_is_part_of_the_environment_digest() -> None:
    """Two environments whose tests talk to different services must not share cached results."""
    from repogate.environments import Toolchain
    from repogate.environments.uv import environment_digest

    chain = Toolchain(python="3.11.7", implementation="CPython", platform="linux", uv="uv 0.1")
    conditions = {"tz": "UTC", "locale": "C.UTF-8", "exclude_newer": None}
    one = Service(name="files", start="a", ready="b")
    bare = environment_digest(chain, ("pytest==8",), conditions)
    assert bare == environment_digest(chain, ("pytest==8",), conditions, ())
    with_one = environment_digest(chain, ("pytest==8",), conditions, (one,))
    other = environment_digest(
        chain, ("pytest==8",), conditions, (one.model_copy(update={"start": "c"}),)
    )
    assert len({bare, with_one, other}) == 3


def test_a_module_the_patch_plants_cannot_make_a_service_fail(tmp_path: Path) -> None:
    """A service that does not start is an environment error, not the agent's failure: a patch
    must not be able to break a service (its ``json.py`` in the checkout, on the tests'
    PYTHONPATH) to turn its own rejection into an error. Services and the launcher load nothing
    of the checkout."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "json.py").write_text("raise SystemExit(5)\n")
    service = Service(
        name="uses-json",
        start="python -c \"import json, pathlib, time; pathlib.Path('up').write_text(json.dumps(1)); time.sleep(600)\"",
        ready="test -e up",
        ready_timeout_s=20,
    )
    (tmp_path / "report").mkdir()
    folder = services.prepare(tmp_path / "report")
    tests = ["python", "-c", "import sys; sys.exit(0)"]
    env = {**os.environ, "PYTHONPATH": str(checkout), "TMPDIR": str(tmp_path)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    with services.status_pipe([service]) as (fd, said):
        argv = services.wrapped(tests, [service], folder, fd, -1)
        done = subprocess.run(argv, cwd=checkout, pass_fds=(fd,), env=env, check=False, timeout=60)
    assert said[0].failure == ""
    assert done.returncode == 0
