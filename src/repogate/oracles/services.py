"""Services the tests need (``[[environment.services]]``), started around every test run in its sandbox.

A service (a local httpbin, a database) is started by a small launcher
(:mod:`repogate.oracles._services_launch`) that runs *inside* the test run's sandbox, in front of
the test command: the service and the tests then share that sandbox's network namespace, whose
only interface is loopback, so the tests reach the service at ``127.0.0.1`` and nothing beyond
the machine. The launcher starts each service, waits for its readiness check, runs the tests, and
stops every service before it exits; the sandbox kills whatever is left when the run ends.

Whether each service became ready comes back on a pipe only the launcher holds (closed before the
tests start), never from a file or output the tests could write: a service that did not start is
an environment error (the evaluator's), and the tests' code cannot claim one to turn its own
failure into an error.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repogate._files import write_bytes_nofollow
from repogate.contract import Service

LAUNCHER = "launch.py"
"""The launcher's file name in ``<report_dir>/services/``."""
_SOURCE = Path(__file__).with_name("_services_launch.py")
_MAX_STATUS_BYTES = 64 * 1024


@dataclass
class ServiceStatus:
    """What the launcher said about the services of one run.

    Attributes:
        started: ``"<name> ready after <seconds> s"`` for each service that became ready.
        failure: why a service did not start (``service 'x' did not start: ...``), or "".
    """

    started: list[str] = field(default_factory=list)
    failure: str = ""


def prepare(report_dir: Path) -> Path:
    """Write the launcher into ``report_dir/services/`` (harness-owned) and return its folder."""
    write_bytes_nofollow(
        report_dir, f"services/{LAUNCHER}", _SOURCE.read_bytes(), make_parents=True
    )
    return report_dir / "services"


def variables(services: Sequence[Service]) -> dict[str, str]:
    """Return the variables that point the tests at ``services`` (later services win)."""
    found: dict[str, str] = {}
    for service in services:
        found.update(service.env)
    return found


def wrapped(
    argv: Sequence[str], services: Sequence[Service], folder: Path, status_fd: int, keep_fd: int
) -> list[str]:
    """Return ``argv`` run through the launcher in ``folder`` with the environment's python.

    Args:
        argv: the test command as the harness built it.
        services: the services to start first.
        folder: the launcher's folder (:func:`prepare`).
        status_fd: the write end of the status pipe (:func:`status_pipe`).
        keep_fd: the one descriptor the tests inherit (the guard's key pipe), or -1.
    """
    spec = json.dumps([s.model_dump(mode="json") for s in services])
    python = argv[0] if Path(argv[0]).name.startswith("python") else "python"
    launcher = [python, "-I", str(folder / LAUNCHER)]  # isolated: nothing of the checkout loads
    return [*launcher, spec, str(status_fd), str(keep_fd), "--", *argv]


def _parse(data: bytes, services: Sequence[Service]) -> ServiceStatus:
    status = ServiceStatus()
    said: dict[str, tuple[str, str]] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        kind, _, rest = line.partition("\t")
        name, _, detail = rest.partition("\t")
        if kind in ("ready", "failed") and name:
            said[name] = (kind, detail)
    for service in services:
        kind, detail = said.get(service.name, ("", ""))
        if kind == "ready":
            status.started.append(f"{service.name} ready after {detail} s")
            continue
        why = detail or "the launcher reported nothing (it could not run, or was stopped)"
        status.failure = f"service {service.name!r} did not start: {why}"
        break
    return status


@contextlib.contextmanager
def status_pipe(services: Sequence[Service]) -> Iterator[tuple[int, list[ServiceStatus]]]:
    """Yield (write end, holder) of a pipe for the launcher's status lines; fill it on exit.

    The harness's copy of the write end is closed when the block ends, then the pipe is read to
    its end; ``holder[0]`` is the parsed status. Without services no pipe is made (-1).
    """
    holder: list[ServiceStatus] = []
    if not services:
        yield -1, holder
        holder.append(ServiceStatus())
        return
    read_fd, write_fd = os.pipe()
    try:
        yield write_fd, holder
    finally:
        os.close(write_fd)
        chunks = bytearray()
        with contextlib.suppress(OSError):
            while len(chunks) < _MAX_STATUS_BYTES:
                chunk = os.read(read_fd, 4096)
                if not chunk:
                    break
                chunks += chunk
        os.close(read_fd)
    holder.append(_parse(bytes(chunks), services))
