"""A service that answers TLS on the same loopback port as plain HTTP, trusted through a harness CA.

Issue 21: psf__requests-1963 and psf__requests-2674 were rejected ``reference_fails`` because
``test_mixed_case_scheme_acceptable`` sends ``HttPs://`` requests to the local httpbin's host and
port, and the service answered plain HTTP only. The harness now makes a throwaway CA per run, a
front on the declared port ends TLS (or passes plain bytes through), and the tests trust the CA;
verification stays on (a client without the CA is refused), the CA's key is never written, and
the certificate verifies under a clock ten years ahead or years back (the date check's faketime).
Everything here is real: sockets on loopback, the ``ssl`` module, the launcher as a process, a
uv environment and pytest for the whole-pipeline case.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from _task import make_task
from conftest import gold_and_null, requires_bwrap
from repogate import sandbox
from repogate.contract import Service
from repogate.oracles import service_tls, services
from repogate.sandbox import SandboxPolicy
from repogate.store import Store
from repogate.tasks import dates

# A plain HTTP server on the port the launcher gives it (REPOGATE_SERVICE_PORT), or on argv[1].
_SERVER = """
import http.server, os, sys


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hi" if self.path == "/hello" else b"?"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


port = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ["REPOGATE_SERVICE_PORT"])
http.server.HTTPServer(("127.0.0.1", port), Hello).serve_forever()
"""

# What the tests do: fetch over each scheme spelling with urllib's default context (which reads
# SSL_CERT_FILE), print one line per URL: "<url> <body>" or "<url> ERROR <reason>".
_CLIENT = """
import ssl, sys, urllib.request
for url in sys.argv[1:]:
    cafile = None
    if url.startswith("cafile="):
        cafile, url = url.split(" ", 1)
        cafile = cafile.split("=", 1)[1]
    context = ssl.create_default_context(cafile=cafile) if cafile else None
    try:
        with urllib.request.urlopen(url, timeout=10, context=context) as answer:
            print(url, answer.read().decode())
    except Exception as exc:
        print(url, "ERROR", getattr(exc, "reason", exc))
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _service(at: int, **extra: object) -> Service:
    return Service.model_validate(
        {
            "name": "hello",
            "start": f"{shlex.quote(sys.executable)} -c {shlex.quote(_SERVER)}",
            "ready": f'{shlex.quote(sys.executable)} -c "import urllib.request as u; '
            f"u.urlopen('http://127.0.0.1:{at}/hello', timeout=1)\"",
            "ready_timeout_s": 20,
            "env": {"SVC": f"http://127.0.0.1:{at}"},
            **extra,
        }
    )


def _launch(
    tmp_path: Path, service: Service, urls: list[str], client_env: tuple[str, ...] = ()
) -> tuple[list[str], services.ServiceStatus]:
    """Run the client through the real launcher (outside the sandbox: its own free port).

    ``client_env`` (``NAME=value`` words) is set for the client only, through ``env``.
    """
    report = tmp_path / "report"
    report.mkdir(exist_ok=True)
    folder = services.prepare(report)
    tls = services.prepare_tls(report, [service], tmp_path)
    env = {**os.environ, **services.variables([service], tls), "TMPDIR": str(tmp_path)}
    with services.status_pipe([service], tls) as (fd, said):
        argv = services.wrapped(
            ["env", *client_env, sys.executable, "-c", _CLIENT, *urls],
            [service],
            folder,
            fd,
            -1,
            tls,
        )
        done = subprocess.run(
            argv, pass_fds=(fd,), env=env, capture_output=True, text=True, timeout=120
        )
    assert done.returncode in (0, 3), done.stderr
    return done.stdout.splitlines(), said[0]


def test_an_https_request_to_a_tls_service_port_succeeds_in_any_letter_case(
    tmp_path: Path,
) -> None:
    """The failing shape of requests-1963/2674: ``HtTpS://`` to the service's host and port."""
    port = _free_port()
    url = f"HtTpS://127.0.0.1:{port}/hello"
    lines, status = _launch(tmp_path, _service(port, tls=True, port=port), [url])
    assert status.failure == "", status.failure
    assert lines == [f"{url} hi"]
    assert "TLS on 127.0.0.1:" in status.started[0] and "harness CA sha256:" in status.started[0]


def test_plain_http_on_the_same_port_still_works(tmp_path: Path) -> None:
    """The tests reuse HTTPBIN_URL's host:port with either scheme: both answer on one port."""
    port = _free_port()
    urls = [f"http://127.0.0.1:{port}/hello", f"HTTP://127.0.0.1:{port}/hello"]
    urls += [f"https://localhost:{port}/hello"]  # the DNS name the certificate carries too
    lines, status = _launch(tmp_path, _service(port, tls=True, port=port), urls)
    assert status.failure == ""
    assert lines == [f"{u} hi" for u in urls]


def test_a_client_without_the_harness_ca_is_refused(tmp_path: Path) -> None:
    """Verification is really on: a client trusting another CA (here a second throwaway one, and
    the system's store with SSL_CERT_FILE unset) does not get through."""
    port = _free_port()
    other = tmp_path / "other"
    other.mkdir()
    stranger = service_tls.make(other)
    url = f"https://127.0.0.1:{port}/hello"
    lines, status = _launch(
        tmp_path, _service(port, tls=True, port=port), [f"cafile={stranger.ca} {url}"]
    )
    assert status.failure == ""
    assert len(lines) == 1 and "ERROR" in lines[0], lines
    assert "CERTIFICATE_VERIFY_FAILED" in lines[0]


def test_without_tls_an_https_request_to_the_service_fails(tmp_path: Path) -> None:
    """Before this change (and still for a service without ``tls``): the https request fails,
    which is what rejected requests-1963 and requests-2674."""
    port = _free_port()
    service = _service(port).model_copy(
        update={"start": f"{shlex.quote(sys.executable)} -c {shlex.quote(_SERVER)} {port}"}
    )
    url = f"HtTpS://127.0.0.1:{port}/hello"
    lines, status = _launch(tmp_path, service, [url])
    assert status.failure == ""
    assert len(lines) == 1 and "ERROR" in lines[0], lines


@pytest.mark.skipif(
    dates.libfaketime() is None, reason="needs libfaketime (apt-get install faketime)"
)
@pytest.mark.parametrize("shift", [f"+{dates.SHIFT_DAYS}d", "-5000d"])
def test_the_certificate_verifies_under_a_faked_clock(tmp_path: Path, shift: str) -> None:
    """The date check runs the reference ten years ahead; a base date may be years back: the
    certificate must verify at both (the client's clock is faked; the harness's is not).

    Only the client runs under libfaketime here: Python 3.11's ``time.sleep`` fails with EINVAL
    under libfaketime with ``FAKETIME_DONT_FAKE_MONOTONIC=1`` (seen here; the launcher sleeps
    while it polls), which the date check's own runs would meet on Python 3.11 projects."""
    library = dates.libfaketime()
    assert library is not None
    port = _free_port()
    url = f"HttPs://127.0.0.1:{port}/hello"
    faked = (f"LD_PRELOAD={library}", f"FAKETIME={shift}", "FAKETIME_DONT_FAKE_MONOTONIC=1")
    year = subprocess.run(
        ["env", *faked, sys.executable, "-c", "import time; print(time.gmtime().tm_year)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert not 2020 < int(year.stdout) < 2030  # the clock really moved
    lines, status = _launch(tmp_path, _service(port, tls=True, port=port), [url], faked)
    assert status.failure == ""
    assert lines == [f"{url} hi"]


# Red team rt31: the front listens on the declared port before the service starts, so a
# readiness check that only connects there (a port probe, or a TLS handshake, which the front
# itself ends) passed while nothing served behind it; the tests then ran against no service and
# its absence read as the candidate's failure. Each shape: a service that never listens.
_PORT_PROBE = "import socket, sys; socket.create_connection(('127.0.0.1', {port}), timeout=1)"
_TLS_PROBE = (
    "import os, socket, ssl; c = ssl.create_default_context(cafile=os.environ['SSL_CERT_FILE']); "
    "c.wrap_socket(socket.create_connection(('127.0.0.1', {port}), timeout=1), "
    "server_hostname='127.0.0.1').close()"
)


@pytest.mark.parametrize(
    ("probe", "start"),
    [
        (_PORT_PROBE, "sleep 60"),  # never listens
        (_TLS_PROBE, "sleep 60"),  # the front's own handshake
        (_PORT_PROBE, "{server} {other}"),  # listens, but not on REPOGATE_SERVICE_PORT
    ],
    ids=["port-probe", "tls-handshake", "wrong-inner-port"],
)
def test_a_service_behind_the_front_is_ready_only_when_it_listens(
    tmp_path: Path, probe: str, start: str
) -> None:
    """Ready means the service answers behind the front, not that the front took the port."""
    port = _free_port()
    ready = f"{shlex.quote(sys.executable)} -c {shlex.quote(probe.format(port=port))}"
    server = f"{shlex.quote(sys.executable)} -c {shlex.quote(_SERVER)}"
    start = start.format(server=server, other=_free_port())
    service = _service(port, tls=True, port=port).model_copy(
        update={"start": start, "ready": ready, "ready_timeout_s": 3.0}
    )
    lines, status = _launch(tmp_path, service, [f"http://127.0.0.1:{port}/hello"])
    assert lines == []  # the tests never ran
    assert status.started == []
    assert "did not start" in status.failure
    assert "nothing listens behind its TLS front" in status.failure


def test_the_ca_key_is_never_written_and_the_server_certificate_names_loopback(
    tmp_path: Path,
) -> None:
    """Nothing a test can read may sign a certificate the tests trust: the only private key
    written is the server's, and it is not the CA's (RFC 5280: the server certificate's issuer
    is the CA, its SAN holds IP 127.0.0.1 and DNS localhost)."""
    files = service_tls.make(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ca.pem", "server.key", "server.pem"]
    ca = x509.load_pem_x509_certificate(files.ca.read_bytes())
    server = x509.load_pem_x509_certificate(files.cert.read_bytes())
    key = serialization.load_pem_private_key(files.key.read_bytes(), password=None)
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    der = serialization.Encoding.DER
    assert key.public_key().public_bytes(der, public) == server.public_key().public_bytes(
        der, public
    )
    assert key.public_key().public_bytes(der, public) != ca.public_key().public_bytes(der, public)
    server.verify_directly_issued_by(ca)
    san = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert ca.not_valid_before_utc.year == 1970 and ca.not_valid_after_utc.year == 9999
    assert b"PRIVATE KEY" not in files.ca.read_bytes() + files.cert.read_bytes()


def test_tls_fields_are_checked_together() -> None:
    """A TLS service needs the port its front takes; ``port`` or ``ca_bundles`` without ``tls``
    would be ignored silently, and a bundle path must stay inside the checkout."""
    with pytest.raises(ValueError, match="needs port"):
        _service(8765, tls=True)
    with pytest.raises(ValueError, match="with tls = true only"):
        _service(8765, port=8765)
    with pytest.raises(ValueError, match="inside the checkout"):
        _service(8765, tls=True, port=8765, ca_bundles=["../etc/ssl/cert.pem"])
    plain = _service(8765)
    assert "tls" not in plain.model_dump() and "port" not in plain.model_dump()


# The whole pipeline: a contract whose tests reach the service over https in mixed case, through
# urllib and SSL_CERT_FILE, and through a CA bundle file of the checkout read directly (as old
# requests' Session.send reads requests/cacert.pem whatever the variables say).
_PORT = 8765
_APP_CLIENT = """import os
import ssl
import urllib.request


def fetch(url, cafile=None):
    context = ssl.create_default_context(cafile=cafile) if cafile else None
    with urllib.request.urlopen(url, timeout=5, context=context) as answer:
        return answer.read().decode().strip()


def secure(path):
    return fetch(os.environ["SVC_URL"].replace("http://", "HtTpS://") + path)
"""
_APP_SHOUT = """

def shout(path):
    return secure(path).upper()
"""
_APP_TEST = f"""import os

import client


def test_plain():
    assert client.fetch(os.environ["SVC_URL"] + "/hello") == "hi"


def test_bundle_of_the_checkout():
    url = "https://127.0.0.1:{_PORT}/hello"
    assert client.fetch(url, cafile="certs/cacert.pem") == "hi"
"""
_APP_TEST_SHOUT = "\n\ndef test_shout():\n    assert client.shout('/hello') == 'HI'\n"
_NOT_A_CA = "# the project's own bundle: no CA of the harness in it\n"


def _pipeline_task(root: Path) -> Path:
    start = f"python -c {shlex.quote(_SERVER)}"
    ready = f"python -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{_PORT}/hello', timeout=1)\""
    environment = textwrap.dedent(
        f"""\
        [[environment.services]]
        name = "hello"
        start = {json.dumps(start)}
        ready = {json.dumps(ready)}
        ready_timeout_s = 30
        tls = true
        port = {_PORT}
        ca_bundles = ["certs/cacert.pem", "certs/absent.pem"]
        env = {{ SVC_URL = "http://127.0.0.1:{_PORT}" }}
        """
    )
    base = {"client.py": _APP_CLIENT, "tests/test_client.py": _APP_TEST}
    base["certs/cacert.pem"] = _NOT_A_CA
    path, _base, _fix = make_task(
        root,
        base,
        {
            "client.py": _APP_CLIENT + _APP_SHOUT,
            "tests/test_client.py": _APP_TEST + _APP_TEST_SHOUT,
        },
        install=["uv pip install pytest"],
        fail_to_pass=["tests/test_client.py::test_shout"],
        pass_to_pass=[
            "tests/test_client.py::test_plain",
            "tests/test_client.py::test_bundle_of_the_checkout",
        ],
        editable=["client.py"],
        environment=environment,
    )
    return path


@pytest.mark.slow
@requires_bwrap
def test_a_tls_service_grades_tests_that_swap_the_scheme_and_records_its_ca(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gold passes https in mixed case and the checkout's own bundle (shown with the CA added,
    the file in the tree unchanged); null fails on its own fix test only; the contract and the
    receipts say the service ran with TLS and a harness CA."""
    contract = _pipeline_task(tmp_path / "task")
    out = tmp_path / "run"
    by_agent = gold_and_null(capsys, contract, out)
    assert by_agent["null"]["errored"] == []
    assert "regression_tests_passed" not in by_agent["null"]["failed"]  # type: ignore[operator]
    with Store.open(out) as store:
        receipts = {r.gate: r for r in store.receipts(str(by_agent["gold"]["attempt_id"]))}
    (declared,) = receipts["E"].details["environment"]["services"]
    assert declared["tls"] is True and declared["port"] == _PORT
    (graded,) = receipts["V"].details["runs"]
    line = graded["services"][0]
    assert line.startswith("hello ready after ") and "harness CA sha256:" in line
    assert "certs/cacert.pem" in line and "absent.pem" not in line
    assert (tmp_path / "task" / "repo" / "certs" / "cacert.pem").read_text() == _NOT_A_CA


@requires_bwrap
def test_a_bundle_shown_over_a_checkout_file_is_read_only_and_the_tree_keeps_its_own(
    tmp_path: Path,
) -> None:
    """The CA reaches a bundle the client reads whatever the variables say, without the harness
    writing into the tree the tests run in: the file is shown in place (read-only, a write fails),
    the tree's file keeps its bytes, and a path the tree lacks is not made in it."""
    tree = tmp_path / "tree"
    (tree / "certs").mkdir(parents=True)
    (tree / "certs" / "cacert.pem").write_text(_NOT_A_CA)
    shown = tmp_path / "shown.pem"
    shown.write_text("harness bundle\n")
    script = (
        "import pathlib\n"
        "print(pathlib.Path('certs/cacert.pem').read_text().strip())\n"
        "try:\n    pathlib.Path('certs/cacert.pem').write_text('x')\n"
        "except OSError as exc:\n    print('refused', exc.errno)\n"
        "print(pathlib.Path('certs/absent.pem').exists())\n"
    )
    policy = SandboxPolicy(
        timeout_s=30,
        writable_cwd=True,
        shown={tree / "certs" / "cacert.pem": shown, tree / "certs" / "absent.pem": shown},
    )
    done = sandbox.run([sys.executable, "-c", script], tree, policy)
    assert done.stdout.splitlines() == ["harness bundle", "refused 30", "False"], done.stderr
    assert (tree / "certs" / "cacert.pem").read_text() == _NOT_A_CA
    assert not (tree / "certs" / "absent.pem").exists()


@pytest.mark.parametrize("shape", ["file-link", "folder-link", "fifo"])
def test_a_bundle_the_tree_planted_is_never_read_nor_shown(tmp_path: Path, shape: str) -> None:
    """``ca_bundles`` names a file of the candidate's tree: the harness reads it to append its CA,
    so a link (the file's own, or a folder's on the way) could hand it a file of the user's, and
    a FIFO would hold it: none is read, none is shown, and the bundle is simply not trusted."""
    secret = tmp_path / "user" / "certs" / "cacert.pem"
    secret.parent.mkdir(parents=True)
    secret.write_text("the user's secret\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    if shape == "file-link":
        (tree / "certs").mkdir()
        (tree / "certs" / "cacert.pem").symlink_to(secret)
    elif shape == "folder-link":
        (tree / "certs").symlink_to(secret.parent)
    else:
        (tree / "certs").mkdir()
        os.mkfifo(tree / "certs" / "cacert.pem")
    service = _service(8765, tls=True, port=8765, ca_bundles=["certs/cacert.pem"])
    plan = services.prepare_tls(tmp_path / "report", [service], tree)
    assert plan is not None and plan.shown == {}
    assert "certs/cacert.pem" not in plan.notes[service.name]
    written = [p.read_bytes() for p in (tmp_path / "report").rglob("*") if p.is_file()]
    assert written and not any(b"the user's secret" in b for b in written)


@pytest.mark.parametrize("mechanism", ["unshare", "none"])
def test_without_bubblewrap_no_bundle_is_said_to_be_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mechanism: str
) -> None:
    """A bundle is shown over the checkout's file by a bubblewrap bind; under weak isolation
    (``unshare``, or none) there is no bind, the tests read the tree's own file, and the services
    line must not name the bundle as trusted: it says why it is not."""
    monkeypatch.setenv("REPOGATE_SANDBOX", mechanism)
    tree = tmp_path / "tree"
    (tree / "certs").mkdir(parents=True)
    (tree / "certs" / "cacert.pem").write_text(_NOT_A_CA)
    service = _service(8765, tls=True, port=8765, ca_bundles=["certs/cacert.pem"])
    plan = services.prepare_tls(tmp_path / "report", [service], tree)
    assert plan is not None and plan.shown == {}
    note = plan.notes[service.name]
    assert "trusted through REQUESTS_CA_BUNDLE, SSL_CERT_FILE, CURL_CA_BUNDLE)" in note
    assert note.endswith(
        "; ca_bundles not shown (certs/cacert.pem): without bubblewrap the tests read the "
        "checkout's own file"
    )


@requires_bwrap
def test_under_bubblewrap_a_regular_bundle_is_shown_and_named(tmp_path: Path) -> None:
    """The same tree under bubblewrap: the bundle is shown with the CA appended and named."""
    tree = tmp_path / "tree"
    (tree / "certs").mkdir(parents=True)
    (tree / "certs" / "cacert.pem").write_text(_NOT_A_CA)
    service = _service(8765, tls=True, port=8765, ca_bundles=["certs/cacert.pem"])
    plan = services.prepare_tls(tmp_path / "report", [service], tree)
    assert plan is not None and list(plan.shown) == [tree / "certs" / "cacert.pem"]
    shown = plan.shown[tree / "certs" / "cacert.pem"].read_text()
    assert shown.startswith(_NOT_A_CA) and "BEGIN CERTIFICATE" in shown
    assert plan.notes[service.name].endswith(
        "(trusted through REQUESTS_CA_BUNDLE, SSL_CERT_FILE, CURL_CA_BUNDLE, certs/cacert.pem)"
    )
