"""A state's result does not depend on who runs it, and no cache outlives what it depends on.

Threat: the caller's ``TZ`` and ``LANG`` reached the tests while the cached base-state result was
keyed without them, so one contract gave different verdicts for different users, and a base
result made under one timezone was reused under another (turn-2 case ``timezone-and-base-cache``).
Tests run under a fixed, recorded timezone and locale (the contract may set them), and every
cached result is keyed by everything that can change it (:mod:`repogate.validity`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _task import check_detail, make_task, verdicts
from conftest import run_json
from repogate.store import Store

TEST_CLOCK = (
    "import os\nimport time\n\n\ndef test_epoch_hour():\n    assert time.localtime(0).tm_hour == 0\n"
    "\n\ndef test_locale():\n    assert os.environ['LC_ALL'] == os.environ['LANG'] == 'C.UTF-8'\n"
)
PASS_TO_PASS = ["tests/test_clock.py::test_epoch_hour", "tests/test_clock.py::test_locale"]


def _task(tmp_path: Path, environment: str = "") -> Path:
    contract, _, _ = make_task(
        tmp_path,
        {
            "calc/__init__.py": "def add(a, b):\n    return a - b\n",
            "tests/test_clock.py": TEST_CLOCK,
        },
        {
            "calc/__init__.py": "def add(a, b):\n    return a + b\n",
            "tests/test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
        install=["uv pip install pytest"],
        fail_to_pass=["tests/test_add.py::test_add"],
        pass_to_pass=PASS_TO_PASS,
        editable=["calc/**"],
        environment=environment,
        name=f"tz{len(environment)}.toml",
    )
    return contract


def _gate_e(out: Path) -> dict[str, object]:
    with Store.open(out) as store:
        receipts = store.receipts(store.attempts()[0].attempt_id)
    return dict(next(r for r in receipts if r.gate == "E").details)


@pytest.mark.slow
def test_the_callers_timezone_and_locale_never_reach_the_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under any caller's TZ/LANG gold is accepted; the contract's own timezone keys its cache."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    contract = _task(tmp_path)
    for n, (tz, lang) in enumerate([("JST-9", "de_DE.ISO-8859-1"), ("UTC", "C.UTF-8")]):
        monkeypatch.setenv("TZ", tz)
        monkeypatch.setenv("LANG", lang)
        monkeypatch.setenv("LC_ALL", lang)
        out = tmp_path / f"run{n}"
        _code, rows = run_json(capsys, str(contract), "--agent", "gold", "--out", str(out))
        assert verdicts(rows) == {"gold": "accepted"}
        seen = _gate_e(out)
        recorded = seen["environment"]
        assert isinstance(recorded, dict)
        assert (recorded["timezone"], recorded["locale"]) == ("UTC", "C.UTF-8")
        assert seen["base_state_cached"] is (n == 1)  # the caller's settings change nothing
    # The same task under a timezone the contract sets: the UTC base result is not reused.
    tokyo = _task(tmp_path / "tokyo", 'timezone = "Asia/Tokyo"')
    out = tmp_path / "run-tokyo"
    _code, rows = run_json(capsys, str(tokyo), "--agent", "gold", "--out", str(out))
    assert verdicts(rows) == {"gold": "error"}
    assert "1 PASS_TO_PASS test(s) do not pass" in check_detail(out, "environment_reproduced")
    seen = _gate_e(out)
    assert seen["environment"]["timezone"] == "Asia/Tokyo"  # type: ignore[index]
    assert "'tests/test_clock.py::test_epoch_hour'" in str(seen["base_state"])
