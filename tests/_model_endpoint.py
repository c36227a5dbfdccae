"""A scripted OpenAI-compatible endpoint on loopback: the HTTP path is real, the model is a script.

It answers ``POST /v1/chat/completions`` with the next scripted reply (the last one again once
the script is spent) and ``GET /v1/models/{id}`` with the model's card, and records every request
(its JSON body and its Authorization header) for tests to assert on.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from repogate.cli import main
from repogate.models.trajectory import Trajectory
from repogate.tasks.scenarios import BuiltScenario

TEST_KEY = "sk-test-never-written-4711"
"""The API key the model-agent tests set; no file of a run may hold it."""
REPORTED_MODEL = "fake-coder-2026-01-05"
"""The model name (with its version) the endpoint reports in every answer."""


@dataclass
class Endpoint:
    """The running endpoint: its base URL, the script, and what it was asked."""

    base_url: str
    replies: list[str]
    tokens_per_call: int = 100
    cost_per_call: float | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)

    def chat_calls(self) -> list[dict[str, Any]]:
        """The chat-completion requests' bodies, in order."""
        return [r for r in self.requests if "messages" in r]


def _handler(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            endpoint.authorizations.append(self.headers.get("Authorization", ""))
            name = self.path.rsplit("/", 1)[-1]
            endpoint.requests.append({"get": self.path})
            self._send(
                {"id": REPORTED_MODEL, "object": "model", "created": 1767571200, "owned_by": name}
            )

        def do_POST(self) -> None:
            endpoint.authorizations.append(self.headers.get("Authorization", ""))
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            endpoint.requests.append(body)
            index = min(len(endpoint.chat_calls()), len(endpoint.replies)) - 1
            half = endpoint.tokens_per_call // 2
            self._send(
                {
                    "id": f"call-{len(endpoint.requests)}",
                    "object": "chat.completion",
                    "created": 1767571200,
                    "model": REPORTED_MODEL,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": endpoint.replies[index]},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": endpoint.tokens_per_call - half,
                        "completion_tokens": half,
                        "total_tokens": endpoint.tokens_per_call,
                        **(
                            {}
                            if endpoint.cost_per_call is None
                            else {"cost": endpoint.cost_per_call}
                        ),
                    },
                }
            )

    return Handler


@contextmanager
def scripted_endpoint(
    replies: Sequence[str], tokens_per_call: int = 100, cost_per_call: float | None = None
) -> Iterator[Endpoint]:
    """Serve ``replies`` on 127.0.0.1 (a free port) until the block ends.

    ``cost_per_call`` is sent as ``usage.cost`` (as OpenRouter does) when given.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    endpoint = Endpoint(
        f"http://127.0.0.1:{server.server_address[1]}/v1",
        list(replies),
        tokens_per_call,
        cost_per_call,
    )
    server.RequestHandlerClass = _handler(endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@dataclass
class ModelRuns:
    """``repogate run --json`` of one model-driven agent on a scenario, against a scripted endpoint.

    Attributes:
        scenario: the built scenario (its first contract is run).
        out: the run folder of the last run.
    """

    scenario: BuiltScenario
    tmp_path: Path
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch
    out: Path = Path()

    def contract(self, permissions: str) -> Path:
        """A copy of the scenario's contract with ``permissions`` lines added (budgets)."""
        text = self.scenario.contracts[0].read_text()
        path = self.scenario.contracts[0].parent / "budgeted.toml"
        path.write_text(text.replace("[permissions]\n", f"[permissions]\n{permissions}\n", 1))
        return path

    def run(self, agent: str, contract: Path | None = None) -> dict[str, object]:
        """Run ``agent`` (against whatever ``OPENAI_BASE_URL`` names); return its one row."""
        self.out = self.tmp_path / f"run{len(list(self.tmp_path.glob('run*')))}"
        chosen = contract or self.scenario.contracts[0]
        argv = ["run", str(chosen), "--agent", agent, "--out", str(self.out), "--json"]
        assert main(argv) == 0
        (row,) = json.loads(self.capsys.readouterr().out)
        assert isinstance(row, dict)
        return row

    def served(
        self, agent: str, replies: Sequence[str], tokens: int = 100, contract: Path | None = None
    ) -> tuple[dict[str, object], Endpoint]:
        """Run ``agent`` against ``replies`` served on loopback."""
        with scripted_endpoint(replies, tokens) as endpoint:
            self.monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
            return self.run(agent, contract), endpoint

    def unreachable(self, agent: str) -> dict[str, object]:
        """Run ``agent`` against a loopback port nothing listens on."""
        with scripted_endpoint([]) as gone:
            url = gone.base_url
        self.monkeypatch.setenv("OPENAI_BASE_URL", url)
        return self.run(agent)

    def trajectory(self) -> Trajectory:
        """The last run's one attempt's trajectory."""
        return Trajectory.model_validate_json(
            self.attempt().joinpath("agent", "trajectory.json").read_bytes()
        )

    def attempt(self) -> Path:
        """The last run's one attempt folder."""
        (folder,) = (self.out / "attempts").iterdir()
        return folder

    def no_key_anywhere(self, key: str) -> None:
        """Assert that no file of the last run holds ``key``."""
        for path in self.out.rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert key.encode() not in path.read_bytes(), path
