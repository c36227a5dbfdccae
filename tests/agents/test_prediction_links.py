"""A prediction that asks GNU patch for a link to the harness's files gets no byte of them.

Threat (red team, 2026-12-02): a SWE-bench prediction is model output. One whose first hunk only
GNU patch applies (stale context: the ladder's last step) and which makes ``leak.txt`` a link to
a file of the harness's machine had that file's bytes copied into the candidate: into the patch
the run stores, and into the tree the tests read. Now the link stays a link, gate I refuses it,
and the file's bytes are nowhere in the run folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _task import make_task, run_rows

LINES = "".join(f"X{n} = {n}\n" for n in range(1, 21))


pytestmark = pytest.mark.usefixtures("own_cache")  # its own cache: nothing reused


@pytest.mark.slow
def test_a_prediction_linking_to_a_harness_file_is_refused_and_leaks_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("canary-secret-4711\n")
    contract, _, _ = make_task(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "consts"\nversion = "1.0.0"\n',
            "consts/__init__.py": LINES,
            "tests/test_none.py": "def test_nothing():\n    assert True\n",
        },
        {
            "consts/__init__.py": LINES.replace("X11 = 11", "X11 = 111"),
            "tests/test_consts.py": "from consts import X11\n\n\ndef test_x():\n"
            "    assert X11 == 111\n",
        },
        install=["uv pip install pytest"],
        fail_to_pass=["tests/test_consts.py::test_x"],
        pass_to_pass=["tests/test_none.py::test_nothing"],
    )
    stale = (  # context lines 9, 10, 12 and 13 misremembered: only fuzz applies it
        "diff --git a/consts/__init__.py b/consts/__init__.py\n--- a/consts/__init__.py\n"
        "+++ b/consts/__init__.py\n@@ -9,5 +9,5 @@\n X9 = nine\n X10 = ten\n-X11 = 11\n"
        "+X11 = 111\n X12 = twelve\n X13 = thirteen\n"
    )
    link = (
        "diff --git a/leak.txt b/leak.txt\nnew file mode 120000\n--- /dev/null\n"
        f"+++ b/leak.txt\n@@ -0,0 +1 @@\n+{secret}\n\\ No newline at end of file\n"
    )
    row = {"instance_id": "contract", "model_name_or_path": "m", "model_patch": stale + link}
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps(row) + "\n")
    out = tmp_path / "run"
    rows, _ = run_rows(contract, [f"predictions:{preds}"], out, capsys)
    assert [(r["outcome"], r["failed"][:1]) for r in rows] == [("rejected", ["edits_permitted"])]
    for path in out.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert b"canary-secret-4711" not in path.read_bytes(), path
