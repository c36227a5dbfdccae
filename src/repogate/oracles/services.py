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

A service with ``tls = true`` gets a new CA and server certificate per run
(:mod:`repogate.oracles.service_tls`, :func:`prepare_tls`) in ``<report_dir>/services/tls/``; the
CA's key is never written. The tests are pointed at the CA (:data:`service_tls.CA_VARIABLES`), and
each of the service's ``ca_bundles`` is shown to them with the CA appended (a read-only bind over
the checkout's file). The run's services line says so: ``httpbin ready after 0.41 s; TLS on
127.0.0.1:8765, harness CA sha256:...``.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repogate import sandbox
from repogate._files import read_bytes_nofollow, write_bytes_nofollow
from repogate.contract import Service
from repogate.oracles import service_tls

BUNDLE_CAP = 16 * 1024 * 1024
"""Bytes of a ``ca_bundles`` file read at most (a CA bundle is about 0.3 MB); a larger one is not
shown."""

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


@dataclass(frozen=True)
class TlsPlan:
    """What a run's TLS services need from the harness (:func:`prepare_tls`).

    Attributes:
        files: the run's CA, server certificate and key.
        shown: checkout file -> harness file with the CA appended, to bind read-only over it.
        notes: service name -> what its services line adds (``TLS on 127.0.0.1:8765, ...``).
    """

    files: service_tls.TlsFiles
    shown: dict[Path, Path]
    notes: dict[str, str]


def prepare_tls(report_dir: Path, services: Sequence[Service], workdir: Path) -> TlsPlan | None:
    """Make this run's TLS material when a service asks for TLS, else return None.

    Args:
        report_dir: the run's harness-owned folder (``services/tls/`` is written in it).
        services: the environment's services.
        workdir: the checkout the tests run in (``ca_bundles`` are read from it, never through
            a link, a FIFO or past :data:`BUNDLE_CAP`; such a bundle is left out).

    A bundle is shown by a bubblewrap bind; under weak isolation (``unshare`` or none) nothing is
    shown, the tests read the checkout's own file, and the note names the bundles not shown.

    Raises:
        OSError: the files cannot be written.
    """
    tls = [s for s in services if s.tls]
    if not tls:
        return None
    folder = report_dir / "services" / "tls"
    folder.mkdir(parents=True, exist_ok=True)
    files = service_tls.make(folder)
    shown: dict[Path, Path] = {}
    notes: dict[str, str] = {}
    binds = sandbox.isolation(network=False).kind == "bwrap"
    for service in tls:
        trusted = list(service_tls.CA_VARIABLES)
        unshown = "" if binds else _not_shown(service.ca_bundles)
        for n, relative in enumerate(service.ca_bundles if binds else ()):
            try:  # the candidate's tree: no link on the way, no FIFO, no giant file is read
                bundle = read_bytes_nofollow(workdir, relative, cap=BUNDLE_CAP)
            except (OSError, ValueError):  # PlantedLinkError is an OSError
                bundle = None
            if bundle is None:
                continue  # the tree lacks it (or planted something there): nothing to show over
            label = f"bundle-{service.name}-{n}.pem"
            shown[workdir / relative] = service_tls.bundle_with_ca(bundle, files, folder, label)
            trusted.append(relative)
        notes[service.name] = (
            f"TLS on 127.0.0.1:{service.port}, harness CA sha256:{files.ca_sha256} "
            f"(trusted through {', '.join(trusted)}){unshown}"
        )
    return TlsPlan(files=files, shown=shown, notes=notes)


def _not_shown(bundles: Sequence[str]) -> str:
    """The services line's words for ``bundles`` no bind shows (weak isolation), or ""."""
    if not bundles:
        return ""
    return (
        f"; ca_bundles not shown ({', '.join(bundles)}): without bubblewrap the tests read the "
        "checkout's own file"
    )


def variables(services: Sequence[Service], tls: TlsPlan | None = None) -> dict[str, str]:
    """Return the variables that point the tests at ``services`` (later services win).

    With ``tls``, :data:`service_tls.CA_VARIABLES` name its CA file too.
    """
    found: dict[str, str] = {}
    for service in services:
        found.update(service.env)
    if tls is not None:
        found.update(dict.fromkeys(service_tls.CA_VARIABLES, str(tls.files.ca)))
    return found


def wrapped(
    argv: Sequence[str],
    services: Sequence[Service],
    folder: Path,
    status_fd: int,
    keep_fd: int,
    tls: TlsPlan | None = None,
) -> list[str]:
    """Return ``argv`` run through the launcher in ``folder`` with the environment's python.

    Args:
        argv: the test command as the harness built it.
        services: the services to start first.
        folder: the launcher's folder (:func:`prepare`).
        status_fd: the write end of the status pipe (:func:`status_pipe`).
        keep_fd: the one descriptor the tests inherit (the guard's key pipe), or -1.
        tls: the run's TLS material (:func:`prepare_tls`), needed when a service has ``tls``.

    Raises:
        ValueError: a service has ``tls`` and no material was given.
    """
    entries = []
    for service in services:
        entry = service.model_dump(mode="json")
        if service.tls:
            if tls is None:
                raise ValueError(f"service {service.name!r} has tls and the run has no TLS files")
            paths = {"tls_ca": tls.files.ca, "tls_cert": tls.files.cert, "tls_key": tls.files.key}
            entry.update({k: str(v) for k, v in paths.items()})
        entries.append(entry)
    spec = json.dumps(entries)
    python = argv[0] if Path(argv[0]).name.startswith("python") else "python"
    launcher = [python, "-I", str(folder / LAUNCHER)]  # isolated: nothing of the checkout loads
    return [*launcher, spec, str(status_fd), str(keep_fd), "--", *argv]


def _parse(data: bytes, services: Sequence[Service], notes: dict[str, str]) -> ServiceStatus:
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
            note = f"; {notes[service.name]}" if service.name in notes else ""
            status.started.append(f"{service.name} ready after {detail} s{note}")
            continue
        why = detail or "the launcher reported nothing (it could not run, or was stopped)"
        status.failure = f"service {service.name!r} did not start: {why}"
        break
    return status


@contextlib.contextmanager
def status_pipe(
    services: Sequence[Service], tls: TlsPlan | None = None
) -> Iterator[tuple[int, list[ServiceStatus]]]:
    """Yield (write end, holder) of a pipe for the launcher's status lines; fill it on exit.

    The harness's copy of the write end is closed when the block ends, then the pipe is read to
    its end; ``holder[0]`` is the parsed status (a TLS service's line carries ``tls``'s note).
    Without services no pipe is made (-1).
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
    holder.append(_parse(bytes(chunks), services, tls.notes if tls is not None else {}))
