"""Run inside the sandbox, around one test run: start the services, run the tests, stop the services.

Invoked by the harness (:mod:`repogate.oracles.services`) with the environment's interpreter as::

    python _services_launch.py SPEC_JSON STATUS_FD KEEP_FD -- TEST_ARGV...

``SPEC_JSON`` is the list of services (name, start, ready, stop, env, ready_timeout_s). Each
service's ``start`` runs with ``sh -c`` in the background, in this process's group (so the
sandbox's end-of-run kill reaches it whatever happens here); ``ready`` is polled until it exits 0.
A service is the environment's, never the candidate's code: its commands run in the sandbox's
private temporary folder, not the checkout, without the checkout's import roots on
``PYTHONPATH`` (so ``python -m httpbin.core`` cannot load a module the patch planted), and this
launcher itself runs isolated (``python -I``: no ``PYTHONPATH``, no script folder first).
One line per service goes to the harness's status pipe (``STATUS_FD``): ``ready<TAB>name<TAB>
seconds`` or ``failed<TAB>name<TAB>why``. The pipe is closed before the tests start, so nothing the
tests run can write to it. The tests then run with ``KEEP_FD`` (the guard's key pipe, or -1) as
their only inherited descriptor, and every service is stopped (its ``stop`` command, then SIGTERM,
then SIGKILL) before this process exits with the tests' exit code. When a service fails to start
the tests do not run, and the exit code is 3.

It runs under the project's own interpreter, which may be old: Python 3.7 syntax (as the guard's
bootstrap), standard library only, and nothing of repogate is imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NOT_STARTED = 3
_POLL_S = 0.2
_STOP_GRACE_S = 5.0


def _tail(path: Path) -> str:
    try:
        data = path.read_bytes()[-2000:]
    except OSError:
        return ""
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""


def _service_env(service: dict[str, Any]) -> dict[str, str]:
    """The service's variables: the run's, without the checkout's import roots, plus its own."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(service.get("env", {}))
    return env


def _start(
    service: dict[str, Any], log_dir: Path, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], Path]:
    log = log_dir / f"service-{service['name']}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["sh", "-c", service["start"]],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=log_dir,
        )
    return proc, log


def _sh(command: str, env: dict[str, str], timeout: float) -> int | None:
    """Run ``sh -c command`` in the private temporary folder; its exit code, None past ``timeout``."""
    try:
        done = subprocess.run(
            ["sh", "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=tempfile.gettempdir(),
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    return done.returncode


def _wait_ready(
    service: dict[str, Any], proc: subprocess.Popen[bytes], log: Path, env: dict[str, str]
) -> tuple[bool, str]:
    """Return (True, seconds) once ``ready`` exits 0, or (False, why)."""
    started = time.monotonic()
    deadline = started + float(service["ready_timeout_s"])
    while True:
        code = proc.poll()
        if code is not None:
            cause = _tail(log)
            return (
                False,
                f"exited with code {code} before it was ready{': ' + cause if cause else ''}",
            )
        if _sh(service["ready"], env, max(1.0, min(10.0, deadline - time.monotonic()))) == 0:
            return True, f"{time.monotonic() - started:.2f}"
        if time.monotonic() >= deadline:
            cause = _tail(log)
            limit = service["ready_timeout_s"]
            return False, f"not ready after {limit} s{': ' + cause if cause else ''}"
        time.sleep(_POLL_S)


def _stop(service: dict[str, Any], proc: subprocess.Popen[bytes], env: dict[str, str]) -> None:
    if service.get("stop"):
        _sh(service["stop"], env, _STOP_GRACE_S)
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=_STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str]) -> int:
    """Start the services, run the tests, stop the services; return the exit code."""
    spec, status_fd, keep_fd = json.loads(argv[1]), int(argv[2]), int(argv[3])
    tests = argv[argv.index("--") + 1 :]
    log_dir = Path(tempfile.gettempdir())  # the sandbox's private TMPDIR
    running: list[tuple[dict[str, Any], subprocess.Popen[bytes], dict[str, str]]] = []
    status = os.fdopen(status_fd, "w")
    failed = False
    for service in spec:
        env = _service_env(service)
        proc, log = _start(service, log_dir, env)
        running.append((service, proc, env))
        ok, said = _wait_ready(service, proc, log, env)
        status.write(f"{'ready' if ok else 'failed'}\t{service['name']}\t{said}\n")
        status.flush()
        if not ok:
            failed = True
            break
    status.close()
    code = NOT_STARTED
    try:
        if not failed:
            keep = (keep_fd,) if keep_fd >= 0 else ()
            code = subprocess.call(tests, pass_fds=keep)
    finally:
        for service, proc, env in reversed(running):
            _stop(service, proc, env)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
