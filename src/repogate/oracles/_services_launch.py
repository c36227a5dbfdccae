"""Run inside the sandbox, around one test run: start the services, run the tests, stop the services.

Invoked by the harness (:mod:`repogate.oracles.services`) with the environment's interpreter as::

    python _services_launch.py SPEC_JSON STATUS_FD KEEP_FD -- TEST_ARGV...

``SPEC_JSON`` is the list of services (name, start, ready, stop, env, ready_timeout_s; with
``tls``: port, tls_ca, tls_cert, tls_key). Each
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

A service with ``tls`` gets a front (:class:`_Front`) on its declared ``port`` before it starts:
the service itself listens on a free loopback port this launcher picks and passes in
``REPOGATE_SERVICE_PORT``; the front peeks at each connection's first byte, ends TLS with the
harness's server certificate when it is 0x16 (a handshake record, RFC 8446 5.1; RFC 5246 6.2.1)
and passes the bytes through unchanged otherwise, so one address answers ``http://`` and
``https://`` (in any letter case) alike. The front holds the declared port from the start, so a
``ready`` command that only connects there (a port probe, a TLS handshake the front itself ends)
would pass with nothing behind it: such a service is ready only when its ``ready`` command exits
0 *and* something accepts connections on ``REPOGATE_SERVICE_PORT`` (:func:`_listens`; red team
rt31). Once the service is ready the launcher makes one TLS handshake through the front,
verifying against the harness CA (``tls_ca``), before it says ``ready``.

It runs under the project's own interpreter, which may be old: Python 3.7 syntax (as the guard's
bootstrap), standard library only, and nothing of repogate is imported.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, SupportsIndex

NOT_STARTED = 3
_POLL_S = 0.2
_STOP_GRACE_S = 5.0
_HANDSHAKE_S = 30.0
_CHUNK = 65536
_TLS_RECORD_HANDSHAKE = 0x16


def _free_port() -> int:
    """A loopback port free now (the sandbox's network namespace is the launcher's own)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _pump(client: socket.socket, upstream: socket.socket) -> None:
    """Copy bytes both ways until either side closes; a TLS client gets close_notify then."""
    peer = {client: upstream, upstream: client}
    while True:
        pending = isinstance(client, ssl.SSLSocket) and client.pending() > 0
        ready: list[socket.socket] = [client] if pending else []
        if not ready:
            ready, _, _ = select.select([client, upstream], [], [])
        for sock in ready:
            data = sock.recv(_CHUNK)
            if not data:
                if sock is upstream and isinstance(client, ssl.SSLSocket):
                    client.settimeout(_STOP_GRACE_S)
                    with contextlib.suppress(OSError, ValueError):
                        client.unwrap()
                return
            peer[sock].sendall(data)


class _Front:
    """Listen on ``127.0.0.1:port``; serve each connection, TLS or plain, to ``127.0.0.1:inner``."""

    def __init__(self, port: int, inner: int, cert: str, key: str) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.inner = inner
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # closed at the end of the run
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        upstream = None
        try:
            first = conn.recv(1, socket.MSG_PEEK)
            if not first:
                return
            if first[0] == _TLS_RECORD_HANDSHAKE:
                conn.settimeout(_HANDSHAKE_S)
                conn = self.context.wrap_socket(conn, server_side=True)
                conn.settimeout(None)
            upstream = socket.create_connection(("127.0.0.1", self.inner))
            _pump(conn, upstream)
        except (OSError, ValueError):  # ssl.SSLError is an OSError: a refused handshake
            pass
        finally:
            conn.close()
            if upstream is not None:
                upstream.close()

    def close(self) -> None:
        self.listener.close()


def _check_tls(port: int, ca: str) -> str:
    """One handshake through the front, verified against the harness CA; "" or why it failed."""
    context = ssl.create_default_context(cafile=ca)
    raw = None
    try:  # no parenthesized "with" here: this file keeps to Python 3.7's syntax
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        context.wrap_socket(raw, server_hostname="127.0.0.1").close()
    except (OSError, ValueError) as exc:
        return f"the TLS front on 127.0.0.1:{port} failed a verified handshake: {exc}"
    finally:
        if raw is not None:
            raw.close()
    return ""


def _listens(port: int) -> bool:
    """True when something accepts a connection on ``127.0.0.1:port`` (the service behind a front)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


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
    service: dict[str, Any],
    proc: subprocess.Popen[bytes],
    log: Path,
    env: dict[str, str],
    inner: int | None = None,
) -> tuple[bool, str]:
    """Return (True, seconds) once ``ready`` exits 0, or (False, why).

    With ``inner`` (a service behind a TLS front), ``ready`` exiting 0 counts only once the
    service accepts connections on that port too (:func:`_listens`).
    """
    started = time.monotonic()
    deadline = started + float(service["ready_timeout_s"])
    behind = ""
    while True:
        code = proc.poll()
        if code is not None:
            cause = _tail(log)
            return (
                False,
                f"exited with code {code} before it was ready{': ' + cause if cause else ''}",
            )
        if _sh(service["ready"], env, max(1.0, min(10.0, deadline - time.monotonic()))) == 0:
            if inner is None or _listens(inner):
                return True, f"{time.monotonic() - started:.2f}"
            behind = (
                f"its ready check passed, but nothing listens behind its TLS front "
                f"(REPOGATE_SERVICE_PORT={inner})"
            )
        if time.monotonic() >= deadline:
            cause = behind or _tail(log)
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


def _wait(secs: float | SupportsIndex) -> None:
    """Wait ``secs`` in ``select``: ``time.sleep`` under the date check's shifted clock.

    libfaketime breaks Python 3.11+'s own sleep there (``repogate.tasks.dates``); a relative
    ``select`` is resumed after a signal with the time left (PEP 475).
    """
    seconds = float(secs)
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    select.select([], [], [], seconds)


def main(argv: list[str]) -> int:
    """Start the services, run the tests, stop the services; return the exit code."""
    if os.environ.get("REPOGATE_SHIFTED_CLOCK") == "1":  # its polls and subprocess timeouts
        time.sleep = _wait
    spec, status_fd, keep_fd = json.loads(argv[1]), int(argv[2]), int(argv[3])
    tests = argv[argv.index("--") + 1 :]
    log_dir = Path(tempfile.gettempdir())  # the sandbox's private TMPDIR
    running: list[tuple[dict[str, Any], subprocess.Popen[bytes], dict[str, str]]] = []
    status = os.fdopen(status_fd, "w")
    failed = False
    fronts: list[_Front] = []
    for service in spec:
        env = _service_env(service)
        inner = None
        if service.get("tls"):
            inner = _free_port()
            env["REPOGATE_SERVICE_PORT"] = str(inner)
            try:
                fronts.append(
                    _Front(service["port"], inner, service["tls_cert"], service["tls_key"])
                )
            except (OSError, ValueError) as exc:
                why = f"its TLS front could not listen on 127.0.0.1:{service['port']}: {exc}"
                status.write(f"failed\t{service['name']}\t{why}\n")
                failed = True
                break
        proc, log = _start(service, log_dir, env)
        running.append((service, proc, env))
        ok, said = _wait_ready(service, proc, log, env, inner)
        if ok and service.get("tls"):
            why = _check_tls(service["port"], service["tls_ca"])
            ok, said = (False, why) if why else (ok, said)
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
        for front in fronts:
            front.close()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
