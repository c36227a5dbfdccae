"""A sandboxed command talked to line by line: answers, and every way of not answering."""

from __future__ import annotations

import sys
from pathlib import Path

from repogate.sandbox import SandboxPolicy
from repogate.sandbox._session import LINE_CAP, Session

POLICY = SandboxPolicy(timeout_s=60, writable=(), writable_cwd=True)


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_each_line_sent_gets_its_answer(tmp_path: Path) -> None:
    code = "import sys\nfor line in sys.stdin:\n    print(line.strip()[::-1], flush=True)\n"
    with Session(_python(code), tmp_path, POLICY) as session:
        assert session.ask("abc", 10) == "cba"
        assert session.ask("xy", 10) == "yx"
        assert session.alive and session.isolation is not None


def test_a_command_that_cannot_start_answers_nothing(tmp_path: Path) -> None:
    with Session([str(tmp_path / "no-such-program")], tmp_path, POLICY) as session:
        assert not session.alive
        assert session.ask("x", 1) is None
        assert "command not found" in session.failure


def test_a_hang_is_killed_at_its_budget(tmp_path: Path) -> None:
    with Session(_python("import time\ntime.sleep(600)\n"), tmp_path, POLICY) as session:
        assert session.ask("x", 1) is None
        assert session.failure == "timed out after 1 s" and not session.alive


def test_an_answer_past_the_cap_ends_the_session(tmp_path: Path) -> None:
    code = f"import sys\nsys.stdout.write('a' * {LINE_CAP * 2})\nsys.stdout.flush()\nimport time\ntime.sleep(60)\n"
    with Session(_python(code), tmp_path, POLICY) as session:
        assert session.ask("x", 30) is None
        assert session.failure == f"an answer longer than {LINE_CAP} bytes"


def test_a_command_that_exits_is_said_so(tmp_path: Path) -> None:
    with Session(_python("import sys\nsys.stdin.readline()\n"), tmp_path, POLICY) as session:
        assert session.ask("x", 10) is None
        assert session.failure == "the process ended without answering"
