"""A rejection that names the truth: a FAIL_TO_PASS test that fails on a declared service is
``needs_service``, not ``reference_fails``.

psf__requests-1963 and psf__requests-2674 were rejected ``reference_fails`` although the reference
was right: ``test_mixed_case_scheme_acceptable`` asked the local httpbin for ``https://`` and the
service answered plain HTTP. Calling that the reference's failure blames the data for the
environment's gap; the reason now says the environment's service does not offer what the test
asks. The shapes: https to a plain service (the requests case); a connection refused at an address
the service declares; and, kept apart, a name outside the machine stays ``needs_network``.
Real git, a real uv environment, the real service launcher and pytest in the sandbox.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from repogate import git
from repogate.cli import main
from repogate.tasks.taskset import TaskSet

pytestmark = pytest.mark.slow

_PORT = 8765
_SERVER = f"""
import http.server


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hi")


http.server.HTTPServer(("127.0.0.1", {_PORT}), Hello).serve_forever()
"""
_READY = (
    f"python -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{_PORT}/', timeout=1)\""
)
_ENV_MAP = f"""
[[recipe]]
repo = "acme/web"
python = "3.11"
install = ["uv pip install pytest"]

[[recipe.services]]
name = "hello"
start = {json.dumps("python -c " + shlex.quote(_SERVER))}
ready = {json.dumps(_READY)}
ready_timeout_s = 30
env = {{ SVC_URL = "http://127.0.0.1:{_PORT}/", SVC_ADMIN = "http://127.0.0.1:8766/" }}
"""
# A client that names the address it failed to reach, as urllib3 (under requests) does.
_CODE = """import urllib.error
import urllib.parse
import urllib.request


def fetch(url):
    parts = urllib.parse.urlsplit(url)
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.read().decode()
    except urllib.error.URLError as exc:
        pool = f"HTTPConnectionPool(host={parts.hostname!r}, port={parts.port or 80})"
        raise ConnectionError(f"{pool}: Max retries exceeded (Caused by {exc.reason!r})")
"""
_SHOUT = "\n\ndef shout(url):\n    return fetch(url).upper()\n"
_TEST = "import os\n\nimport web\n\nURL = os.environ['SVC_URL']\n\n\ndef test_plain():\n    assert web.fetch(URL) == 'hi'\n"
_FIX_TESTS = {
    # the requests case: the test swaps the scheme; the service answers plain HTTP only
    "https": "\n\ndef test_shout():\n    assert web.shout(URL.replace('http://', 'HtTpS://')) == 'HI'\n",
    # an address the service declares (SVC_ADMIN) that nothing answers
    "refused": "\n\ndef test_shout():\n    assert web.shout('http://127.0.0.1:8766/') == 'HI'\n",
    # a host outside the machine: the network, not a service
    "outside": "\n\ndef test_shout():\n    assert web.shout('http://repogate-test.invalid/') == 'HI'\n",
}


def _instances(mirror: Path) -> list[dict[str, object]]:
    git.init_repo(mirror)
    (mirror / "tests").mkdir(parents=True)
    (mirror / "web.py").write_text(_CODE)
    (mirror / "tests" / "test_web.py").write_text(_TEST)
    base = git.commit_all(mirror, "base")
    rows: list[dict[str, object]] = []
    for name, test in _FIX_TESTS.items():
        (mirror / "web.py").write_text(_CODE + _SHOUT)
        (mirror / "tests" / "test_web.py").write_text(_TEST + test)
        fix = git.commit_all(mirror, name)
        rows.append(
            {
                "instance_id": f"acme__web-{name}",
                "repo": "acme/web",
                "base_commit": base,
                "patch": git.diff_binary(mirror, base, fix, (), ("tests/",)).decode(),
                "test_patch": git.diff_binary(mirror, base, fix, ("tests/",)).decode(),
                "FAIL_TO_PASS": ["tests/test_web.py::test_shout"],
                "PASS_TO_PASS": ["tests/test_web.py::test_plain"],
                "version": "1.0",
            }
        )
        git.run_git(["branch", f"fix-{name}"], mirror)  # keeps the fix reachable
        git.run_git(["reset", "-q", "--hard", base], mirror)
    return rows


def test_a_fail_to_pass_test_failing_on_a_declared_service_is_needs_service(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _instances(tmp_path / "mirrors" / "acme+web")
    instances = tmp_path / "i.jsonl"
    instances.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "env.toml").write_text(_ENV_MAP)
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    out = tmp_path / "set"
    args = ["tasks", "import", str(instances), "--out", str(out)]
    args += ["--env-map", str(tmp_path / "env.toml"), "--repo-cache", str(tmp_path / "mirrors")]
    assert main(args) == 0
    rejected = {r.id: r for r in TaskSet.open(out).rejected()}
    reasons = {k: v.reason for k, v in rejected.items()}
    assert reasons == {
        "acme__web-https": "needs_service",
        "acme__web-refused": "needs_service",
        "acme__web-outside": "needs_network",
    }, {k: (v.reason, v.detail) for k, v in rejected.items()}
    assert "declared service" in rejected["acme__web-https"].detail


_MIXED_TESTS = (
    "\n\ndef test_shout():\n    assert web.shout(URL.replace('http://', 'HtTpS://')) == 'HI'\n"
    "\n\ndef test_outside():\n    assert web.shout('http://repogate-test.invalid/') == 'HI'\n"
    "\n\ndef test_wrong():\n    assert web.shout(URL) == 'NOT WHAT IT SAYS'\n"
)


def test_every_fail_to_pass_test_the_reference_fails_is_named_with_its_cause(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rejection named the first failing id only, plus "(and 2 more)": the other ids, and
    why each failed (a network error, a plain failure), were not said, so fixing the first left
    the user to import again to learn the next. Each id is named, grouped by cause, the
    rejection's reason still the first id's."""
    mirror = tmp_path / "mirrors" / "acme+web"
    git.init_repo(mirror)
    (mirror / "tests").mkdir(parents=True)
    (mirror / "web.py").write_text(_CODE)
    (mirror / "tests" / "test_web.py").write_text(_TEST)
    base = git.commit_all(mirror, "base")
    (mirror / "web.py").write_text(_CODE + _SHOUT)
    (mirror / "tests" / "test_web.py").write_text(_TEST + _MIXED_TESTS)
    fix = git.commit_all(mirror, "mixed")
    ids = [f"tests/test_web.py::test_{n}" for n in ("shout", "outside", "wrong")]
    row = {
        "instance_id": "acme__web-mixed",
        "repo": "acme/web",
        "base_commit": base,
        "patch": git.diff_binary(mirror, base, fix, (), ("tests/",)).decode(),
        "test_patch": git.diff_binary(mirror, base, fix, ("tests/",)).decode(),
        "FAIL_TO_PASS": ids,
        "PASS_TO_PASS": ["tests/test_web.py::test_plain"],
        "version": "1.0",
    }
    (tmp_path / "i.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "env.toml").write_text(_ENV_MAP)
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    out = tmp_path / "set"
    args = ["tasks", "import", str(tmp_path / "i.jsonl"), "--out", str(out)]
    args += ["--env-map", str(tmp_path / "env.toml"), "--repo-cache", str(tmp_path / "mirrors")]
    assert main(args) == 0
    (rejected,) = TaskSet.open(out).rejected()
    assert rejected.reason == "needs_service", rejected.detail
    assert rejected.detail == (
        f"{ids[0]} fails with the reference on a TLS or connection error to a declared "
        "service's address (the service does not offer what the test asks); "
        f"{ids[1]} fails with the reference on a network error (no network here); "
        f"{ids[2]} does not pass with the reference"
    )
