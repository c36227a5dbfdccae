"""An environment that drifted since the base commit makes the task invalid, never the agent wrong.

Threat: the base's ``requirements.txt`` says just ``dep``; today that resolves to ``dep`` 2.0,
which renamed the function the fix uses, so the reference (gold) patch fails and every agent is
charged with the environment's fault (turn-2 case ``environment-drift``; SWE-bench issues #274,
#328). The reference is validated in the built environment as part of the base-state check, and
a recipe may resolve as of the base commit's date (uv's ``--exclude-newer``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from _task import check_detail, make_task, verdicts
from conftest import run_json
from repogate.store import Store

RELEASES = {  # version -> (module body, upload time on the index)
    "1.0": ("def combine(a, b):\n    return a + b\n", "2024-01-01T00:00:00Z"),
    "2.0": ("def join(a, b):\n    return a + b\n", "2025-01-01T00:00:00Z"),
}
BUGGY = "def add(a, b):\n    return a - b\n\n\ndef neg(a):\n    return -a\n"
FIXED = (
    "def add(a, b):\n    from dep import combine\n\n    return combine(a, b)\n\n\n"
    "def neg(a):\n    return -a\n"
)


def _wheel(folder: Path, version: str, body: str) -> Path:
    files = {
        "dep/__init__.py": body,
        f"dep-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: dep\nVersion: {version}\n",
        f"dep-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    rows = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},{len(text.encode())}"
        for path, text in files.items()
    ]
    files[f"dep-{version}.dist-info/RECORD"] = "\n".join(
        [*rows, f"dep-{version}.dist-info/RECORD,,"]
    )
    path = folder / f"dep-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), text)
    return path


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    for version, (body, _) in RELEASES.items():
        _wheel(folder, version, body)
    return folder


@pytest.fixture
def index(wheels: Path) -> Iterator[str]:
    """A PEP 691 (JSON) simple index on loopback serving ``dep`` with upload times."""

    class Handler(BaseHTTPRequestHandler):
        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/simple/dep":
                entries = [
                    {
                        "filename": f"dep-{v}-py3-none-any.whl",
                        "url": f"/files/dep-{v}-py3-none-any.whl",
                        "hashes": {
                            "sha256": hashlib.sha256(
                                (wheels / f"dep-{v}-py3-none-any.whl").read_bytes()
                            ).hexdigest()
                        },
                        "upload-time": uploaded,
                    }
                    for v, (_, uploaded) in RELEASES.items()
                ]
                page = {"meta": {"api-version": "1.1"}, "name": "dep", "files": entries}
                self._send(json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json")
            elif self.path.startswith("/files/"):
                self._send((wheels / Path(self.path).name).read_bytes(), "application/octet-stream")
            else:
                self.send_error(404)

        do_HEAD = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()


def _task(tmp_path: Path, install: str, environment: str = "", wheels: Path | None = None) -> Path:
    shipped = {f"wheels/{w.name}": w.read_bytes() for w in (wheels.iterdir() if wheels else ())}
    contract, _, _ = make_task(
        tmp_path,
        {
            **shipped,
            "pyproject.toml": '[project]\nname = "calc"\nversion = "1.0.0"\n',
            "requirements.txt": "dep\n",
            "calc/__init__.py": BUGGY,
            "tests/test_neg.py": "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n",
        },
        {
            "calc/__init__.py": FIXED,
            "tests/test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
        install=["uv pip install pytest", install],
        fail_to_pass=["tests/test_add.py::test_add"],
        pass_to_pass=["tests/test_neg.py::test_neg"],
        editable=["calc/**"],
        environment=f'lock_inputs = ["requirements.txt"]\n{environment}',
    )
    return contract


@pytest.mark.slow
def test_a_reference_that_fails_in_the_built_environment_makes_the_task_invalid(
    tmp_path: Path,
    wheels: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Gold and null are both evaluator errors naming the failing test and ``dep==2.0``."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    # The wheels ship in the repository: the install sandbox sees the checkout, not the caller's files.
    contract = _task(
        tmp_path, "uv pip install -r requirements.txt --find-links wheels", wheels=wheels
    )
    out = tmp_path / "run"
    _code, rows = run_json(
        capsys, str(contract), "--agent", "gold", "--agent", "null", "--out", str(out)
    )
    assert verdicts(rows) == {"gold": "error", "null": "error"}
    assert all(r["failed"] == [] for r in rows)
    detail = check_detail(out, "environment_reproduced")
    assert "reference (gold) patch fails in the built environment" in detail
    assert "'tests/test_add.py::test_add' (failed)" in detail
    assert "dep==2.0" in detail


@pytest.mark.slow
def test_resolution_as_of_the_base_commit_date_is_used_and_recorded(
    tmp_path: Path, index: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``resolve_as_of = "base_commit"`` resolves ``dep`` 1.0 (uploaded before the base's date)."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    install = f"uv pip install -r requirements.txt --index-url {index}"
    contract = _task(tmp_path, install, 'resolve_as_of = "base_commit"')
    out = tmp_path / "run"
    _code, rows = run_json(capsys, str(contract), "--agent", "gold", "--out", str(out))
    assert verdicts(rows) == {"gold": "accepted"}
    with Store.open(out) as store:
        receipt = next(r for r in store.receipts(store.attempts()[0].attempt_id) if r.gate == "E")
    environment = receipt.details["environment"]
    assert environment["exclude_newer"] == "2024-06-01T00:00:00Z"
    assert "dep==1.0" in environment["packages"]
