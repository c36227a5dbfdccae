"""`repogate run` end to end on the built-in parser scenario: real git, real uv venvs, real pytest."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from _scenario_variant import contract_with
from conftest import HAS_BWRAP, requires_bwrap, run_json, stored_attempts
from repogate import git
from repogate.cli import ExitCode, main
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario, build_scenario

pytestmark = pytest.mark.slow


def test_gold_null_and_test_editing_agent(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cheat = next(p for p in parser.agents if p.stem == "edits-tests")
    out = tmp_path / "run"
    code, rows = run_json(
        capsys,
        str(parser.contracts[0]),
        "--agent",
        "gold",
        "--agent",
        "null",
        "--agent",
        f"scripted:{cheat}",
        "--out",
        str(out),
    )
    assert code == ExitCode.OK
    verdicts = {str(r["agent"]).split(":")[0]: r for r in rows}
    assert verdicts["gold"]["accepted"] is True
    assert verdicts["null"]["accepted"] is False
    assert "focused_tests_passed" in verdicts["null"]["failed"]  # type: ignore[operator]
    assert "oracle_untouched" in verdicts["scripted"]["failed"]  # type: ignore[operator]
    # The store holds every attempt and the manifest; a second run resumes without duplicates.
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["isolation_tests"]["network_off"] is True
    assert [c["id"] for c in manifest["contracts"]] == ["parser-bounded-config"]
    again_code, again = run_json(
        capsys,
        str(parser.contracts[0]),
        *("--agent", "gold", "--agent", "null", "--agent", f"scripted:{cheat}"),
        *("--out", str(out)),
    )
    assert again_code == ExitCode.OK
    assert again == rows  # the same command on the same folder: finished attempts kept
    with Store.open(out) as store:
        assert len(store.attempts()) == 3
        gold = store.attempts()[0]
        receipts = store.receipts(gold.attempt_id)
        assert gold.decision is not None
        assert {r.state_id for r in receipts} == {gold.decision.state_id}
        # The base state is checked once per task and environment, then reused from the cache.
        null = store.attempts()[1]
        env_receipt = next(r for r in store.receipts(null.attempt_id) if r.gate == "E")
    assert env_receipt.details["base_state_cached"] is True
    assert "cached result" in env_receipt.checks[0].detail
    statement = json.loads(
        next((out / "attempts" / gold.attempt_id / "receipts").glob("*-I.intoto.json")).read_text()
    )
    assert statement["subject"][0]["digest"]["gitTree"]


@requires_bwrap
def test_agent_sees_no_future_history(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent must not find the real fix in later history (SWE-bench issue #465), neither in
    its workspace nor in the harness's copy of the repository on the same disk."""
    fix = parser.commits["fix"]
    probe = tmp_path / "probe.sh"
    probe.write_text(
        "#!/bin/sh\n"
        f"git cat-file -e {fix} 2>/dev/null && echo LEAK > confparse/leak.txt\n"
        "git log --all --format=%H | wc -l > confparse/commits.txt\n"
        f"git -C {parser.repo} cat-file -e {fix} 2>/dev/null && echo SOURCE > confparse/leak2.txt\n"
        f"cat {parser.contracts[0]} > confparse/contract.txt 2>/dev/null\n"
    )
    probe.chmod(0o755)
    out = tmp_path / "run"
    code, _rows = run_json(
        capsys, str(parser.contracts[0]), "--agent", f"cmd:{probe}", "--out", str(out)
    )
    assert code == ExitCode.OK
    patch = next((out / "attempts").glob("*/patch.diff")).read_text()
    assert "LEAK" not in patch
    assert "SOURCE" not in patch  # the harness's full-history repository is hidden
    assert "fail_to_pass" not in patch  # so are the contract and its oracles
    assert "+1\n" in patch  # exactly one commit (the base) is visible


def test_agent_without_network_and_secrets(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An agent may not download the fixed release nor read the user's tokens."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_value")
    server = socket.socket()  # a "package index" on this machine's loopback
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    script = tmp_path / "agent.py"
    script.write_text(
        "import os, socket\n"
        "s = socket.socket(); s.settimeout(2)\n"
        f"reached = s.connect_ex(('127.0.0.1', {port})) == 0\n"
        "open('confparse/seen.txt', 'w').write(f\"{os.environ.get('GITHUB_TOKEN')} {reached}\\n\")\n"
    )
    out = tmp_path / "run"
    try:
        run_json(
            capsys,
            str(parser.contracts[0]),
            "--agent",
            f"cmd:{sys.executable} {script}",
            "--out",
            str(out),
        )
    finally:
        server.close()
    patch = next((out / "attempts").glob("*/patch.diff")).read_text()
    assert "+None False" in patch  # no token, and the listening server was not reachable
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["isolation_agent"]["network_off"] is True


def test_hanging_agent_is_stopped_at_its_budget(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = parser.contracts[0]
    path.write_text(path.read_text().replace("time_budget_s = 120", "time_budget_s = 2"))
    out = tmp_path / "run"
    code, rows = run_json(capsys, str(path), "--agent", "cmd:sleep 100", "--out", str(out))
    assert code == ExitCode.OK
    assert rows[0]["accepted"] is False
    with Store.open(out) as store:
        propose = next(
            r for r in store.receipts(store.attempts()[0].attempt_id) if r.gate == "propose"
        )
    assert propose.details["proposal"]["status"] == "stopped"
    assert propose.details["returncode"] == -9


def test_hanging_tests_are_an_error_not_a_failure(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = parser.contracts[0]
    text = path.read_text().replace(
        'test_command = "python -m pytest -p no:cacheprovider"',
        'test_command = "python -c \\"import time; time.sleep(60)\\""\ntimeout_s = 2',
    )
    path.write_text(text)
    code, rows = run_json(capsys, str(path), "--agent", "gold", "--out", str(tmp_path / "run"))
    assert code == ExitCode.OK
    assert rows[0]["outcome"] == "error"
    assert "environment_reproduced" in rows[0]["errored"]  # type: ignore[operator]
    assert rows[0]["failed"] == []


def test_failing_install_is_an_environment_error(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A yanked package or dead download is an environment error, never a wrong patch."""
    path = parser.contracts[0]
    path.write_text(
        path.read_text().replace(
            'install = ["uv pip install pytest"]',
            'install = ["uv pip install ./no-such-package-here"]',
        )
    )
    code, rows = run_json(capsys, str(path), "--agent", "gold", "--out", str(tmp_path / "run"))
    assert code == ExitCode.OK
    assert rows[0]["outcome"] == "error"
    assert rows[0]["failed"] == []
    assert "environment_reproduced" in rows[0]["errored"]  # type: ignore[operator]
    decision = stored_attempts(tmp_path / "run")[0].decision
    assert decision is not None
    env_check = next(c for c in decision.checks if c.name == "environment_reproduced")
    assert "environment could not be built" in env_check.detail


def test_nonexistent_expected_test_makes_task_invalid(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An expected id that does not exist is an evaluator error, not the agent's failure."""
    path = parser.contracts[0]
    path.write_text(
        path.read_text().replace(
            '"tests/test_limits.py::test_unknown_key_rejected",\n]',
            '"tests/test_limits.py::test_unknown_key_rejected",\n  "tests/test_limits.py::test_unknown_key_rej",\n]',
        )
    )
    _code, rows = run_json(capsys, str(path), "--agent", "gold", "--out", str(tmp_path / "run"))
    assert rows[0]["outcome"] == "error"
    assert rows[0]["failed"] == []


def _predictions(tmp_path: Path, patch: str, instance: str = "parser-bounded-config") -> Path:
    path = tmp_path / "preds.jsonl"
    path.write_text(
        json.dumps({"instance_id": instance, "model_name_or_path": "m", "model_patch": patch})
        + "\n"
    )
    return path


def test_patch_that_does_not_apply_is_the_agents_failure(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A patch made against another base never applies in reverse; no step of the ladder applies it."""
    bad = (
        "--- a/confparse/parser.py\n+++ b/confparse/parser.py\n@@ -1,1 +1,1 @@\n-no such line\n+x\n"
    )
    code, rows = run_json(
        capsys,
        str(parser.contracts[0]),
        "--agent",
        f"predictions:{_predictions(tmp_path, bad)}",
        "--out",
        str(tmp_path / "run"),
    )
    assert code == ExitCode.OK
    assert rows[0]["outcome"] == "rejected"
    assert "patch_is_a_new_state" in rows[0]["failed"]  # type: ignore[operator]
    with Store.open(tmp_path / "run") as store:
        propose = next(
            r for r in store.receipts(store.attempts()[0].attempt_id) if r.gate == "propose"
        )
    assert "does not apply" in propose.details["proposal"]["detail"]


def test_a_prediction_needing_fuzz_or_its_final_newline_applies_and_says_how(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SWE-bench's harness falls back to GNU patch with fuzz; a prediction it accepts must not be
    'agent crashed' here. The step and the fuzz are in the propose receipt."""
    gold = git.diff_binary(
        parser.repo, parser.commits["base"], parser.commits["fix"], exclude=["tests/"]
    ).decode()
    lines = gold.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith("@@")) + 1
    assert lines[first].startswith(" ")
    lines[first] = " # a context line the model misremembered\n"
    stale = "".join(lines)
    agents: list[str] = []
    for model, patch in (("stale", stale), ("no-newline", gold.rstrip("\n"))):
        preds = tmp_path / f"{model}.jsonl"
        record = {"instance_id": "parser-bounded-config", "model_name_or_path": model}
        preds.write_text(json.dumps({**record, "model_patch": patch}) + "\n")
        agents += ["--agent", f"predictions:{preds}"]
    code, rows = run_json(capsys, str(parser.contracts[0]), *agents, "--out", str(tmp_path / "run"))
    assert code == ExitCode.OK
    assert all(r["accepted"] is True for r in rows), rows
    with Store.open(tmp_path / "run") as store:
        applied = {
            p.details["proposal"]["model"]: p.details["proposal"]["applied"]
            for a in store.attempts()
            for p in store.receipts(a.attempt_id)
            if p.gate == "propose"
        }
    assert applied["stale"]["step"] == "patch --batch --fuzz=5"
    assert applied["stale"]["fuzz"] == 1
    assert applied["no-newline"] == {
        "step": "git apply --verbose",
        "newline_added": True,
        "fuzz": 0,
        "hunks": [],
    }


@pytest.mark.parametrize(
    "target", [".git/hooks/post-commit", "../outside.txt", "/tmp/abs-outside.txt"]
)
def test_patch_escaping_the_workspace_writes_nothing_outside(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    evil = f"diff --git a/{target} b/{target}\nnew file mode 100644\n--- /dev/null\n+++ b/{target}\n@@ -0,0 +1 @@\n+owned\n"
    _code, rows = run_json(
        capsys,
        str(parser.contracts[0]),
        "--agent",
        f"predictions:{_predictions(tmp_path, evil)}",
        "--out",
        str(tmp_path / "run"),
    )
    assert rows[0]["accepted"] is False
    assert not (tmp_path / "run" / "work" / "outside.txt").exists()
    assert not Path("/tmp/abs-outside.txt").exists()


def test_binary_patch_applies(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scratch = tmp_path / "scratch"
    git.prepare_workspace(parser.repo, parser.commits["base"], scratch)
    (scratch / "confparse" / "logo.bin").write_bytes(bytes(range(256)) * 4)
    candidate = git.commit_candidate(scratch, "binary")
    patch = git.diff_binary(scratch, parser.commits["base"], candidate).decode()
    assert "GIT binary patch" in patch
    _code, rows = run_json(
        capsys,
        str(parser.contracts[0]),
        "--agent",
        f"predictions:{_predictions(tmp_path, patch)}",
        "--out",
        str(tmp_path / "run"),
    )
    assert "patch_is_a_new_state" not in rows[0]["failed"]  # type: ignore[operator]
    assert "focused_tests_passed" in rows[0]["failed"]  # type: ignore[operator]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"instance_id": "parser-bounded-config", "model_patch": ""}\n', "model_name_or_path"),
        # a file without a row for the contract is the agent's empty patch, not bad input
        # (tests/agents/test_no_prediction.py; --require-all-predictions refuses it)
        ('{"instance_id": "x", "model_name_or_path": "m", "model_patch": 5}\n', "model_patch"),
    ],
)
def test_bad_predictions_file_is_a_usage_error(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
    message: str,
) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text(content)
    code = main(
        [
            "run",
            str(parser.contracts[0]),
            "--agent",
            f"predictions:{preds}",
            "--out",
            str(tmp_path / "run"),
        ]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert message in err and err.startswith("error:")
    assert not (tmp_path / "run").exists()


def test_missing_base_commit_is_a_usage_error(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = parser.contracts[0]
    path.write_text(path.read_text().replace(parser.commits["base"], "deadbeef" * 5))
    code = main(["run", str(path), "--agent", "null", "--out", str(tmp_path / "run")])
    assert code == ExitCode.USAGE
    assert "deadbeef" in capsys.readouterr().err


def test_unknown_agent_lists_choices(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["run", str(parser.contracts[0]), "--agent", "claude", "--out", str(tmp_path / "run")]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert "gold, null, predictions:FILE" in err


def test_run_as_subprocess(parser: BuiltScenario, tmp_path: Path) -> None:
    """Also: a relative --out works (git is never handed a path relative to another folder)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "repogate.cli",
            "run",
            str(parser.contracts[0]),
            "--agent",
            "gold",
            "--out",
            "run",
            "--json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["accepted"] is True
    shown = subprocess.run(
        [sys.executable, "-m", "repogate.cli", "show", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0
    assert "accepted" in shown.stdout


FLAKY_PATCH = """diff --git a/tests/test_flaky.py b/tests/test_flaky.py
new file mode 100644
--- /dev/null
+++ b/tests/test_flaky.py
@@ -0,0 +1,7 @@
+from pathlib import Path
+
+
+def test_flips_between_runs():
+    # passes in a state's first tree, fails in the fresh trees repeats get ("<tree>-run<n>-...")
+    holder = Path(__file__).resolve().parents[2].name
+    assert "-run" not in holder
"""


def test_flaky_test_is_excluded_with_a_record(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test that flips between runs is reported as flaky and left out of the verdict."""
    path = parser.contracts[0]
    (path.parent / "flaky.patch").write_text(FLAKY_PATCH)
    text = path.read_text()
    text = text.replace("[oracles]\n", "[oracles]\nrepeat = 3\n", 1)
    text = text.replace(
        "pass_to_pass = [\n",
        'pass_to_pass = [\n  "tests/test_flaky.py::test_flips_between_runs",\n',
        1,
    )
    path.write_text(text)
    variant = path.parent / "with-flaky.toml"
    variant.write_text(text)
    # hidden tests: the fix's tests plus the flaky file, as one patch file
    hidden = git.diff_binary(parser.repo, parser.commits["base"], parser.commits["fix"], ["tests/"])
    (path.parent / "hidden.patch").write_bytes(hidden + FLAKY_PATCH.encode())
    variant.write_text(
        text.replace(
            f'hidden_tests = {{ commit = "{parser.commits["fix"]}", paths = ["tests/"] }}',
            'hidden_tests = { file = "hidden.patch" }',
        )
    )
    out = tmp_path / "run"
    code, rows = run_json(capsys, str(variant), "--agent", "gold", "--out", str(out))
    assert code == ExitCode.OK
    assert rows[0]["accepted"] is True, rows
    with Store.open(out) as store:
        verification = next(
            r for r in store.receipts(store.attempts()[0].attempt_id) if r.gate == "V"
        )
    assert verification.details["flaky_excluded"] == [
        "tests/test_flaky.py::test_flips_between_runs"
    ]


def test_extra_oracle_commands_hold_only_new_failures_against_the_patch(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lint failure the base already had is recorded and forgiven; a new one fails the patch."""
    old_lint = tmp_path / "old_lint.py"
    old_lint.write_text("raise SystemExit(1)\n")
    style = tmp_path / "style.py"
    style.write_text(
        "import pathlib\n"
        "text = pathlib.Path('confparse/parser.py').read_text()\n"
        "raise SystemExit('checked elsewhere' in text)\n"
    )
    variant = contract_with(parser, "")
    variant.write_text(
        variant.read_text().replace(
            "[reference]",
            f'[[oracles.commands]]\nname = "old-lint"\nrun = "python {old_lint}"\n\n'
            f'[[oracles.commands]]\nname = "style"\nrun = "python {style}"\n\n[reference]',
        )
    )
    cheat = next(p for p in parser.agents if p.stem == "edits-tests")
    out = tmp_path / "run"
    code, rows = run_json(
        capsys, str(variant), "--agent", "gold", "--agent", f"scripted:{cheat}", "--out", str(out)
    )
    assert code == ExitCode.OK
    gold, cheater = rows
    assert gold["accepted"] is True, gold
    assert "regression_tests_passed" in cheater["failed"]  # type: ignore[operator]
    with Store.open(out) as store:
        receipt = next(
            r for r in store.receipts(store.attempts()[1].attempt_id) if r.gate == "V-commands"
        )
    assert "command:style newly fails" in receipt.checks[0].detail
    assert "old-lint" not in receipt.checks[0].detail


def test_an_oracle_command_that_cannot_run_is_an_error_not_a_pass(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Extra commands that crashed were never observed: ``regression_tests_passed`` is an error.

    A command line that cannot be split (an unclosed quote) crashes the commands gate. Gate R
    used to read the commands' statuses from that receipt's details and crashed the whole attempt
    on the missing key; the decision must instead name the crash, never accept on gate V's pass.
    """
    variant = contract_with(parser, "")
    variant.write_text(
        variant.read_text().replace(
            "[reference]",
            '[[oracles.commands]]\nname = "lint"\nrun = "python \'unclosed"\n\n[reference]',
        )
    )
    code, rows = run_json(capsys, str(variant), "--agent", "gold", "--out", str(tmp_path / "run"))
    assert code == ExitCode.OK
    (row,) = rows
    assert (row["outcome"], row["accepted"]) == ("error", False), row
    assert row["errored"] == ["regression_tests_passed"], row
    checks = row["checks"]
    assert isinstance(checks, list)
    (check,) = [c for c in checks if c["name"] == "regression_tests_passed"]
    assert "V-commands crashed: ValueError" in check["detail"]


@pytest.mark.parametrize(("version", "status"), [("3.12", "passed"), ("3.99", "error")])
def test_sentinel_python_matrix(
    tmp_path: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    version: str,
    status: str,
) -> None:
    """Focused and regression tests also run on each listed Python; a missing one is an error
    naming it, never a pass."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    frozen = build_scenario("frozen", tmp_path / "frozen")
    path = frozen.contracts[0]
    path.write_text(
        path.read_text().replace("[sentinel]\n", f'[sentinel]\npython_matrix = ["{version}"]\n', 1)
    )
    code, rows = run_json(capsys, str(path), "--agent", "gold", "--out", str(tmp_path / "run"))
    assert code == ExitCode.OK
    assert rows[0]["stages"]["sentinel passed"] == status  # type: ignore[index]
    with Store.open(tmp_path / "run") as store:
        sentinel = next(r for r in store.receipts(store.attempts()[0].attempt_id) if r.gate == "S")
    entry = sentinel.details["matrix"][0]
    assert (entry["version"], entry["status"]) == (version, status)
    if status == "error":
        assert version in entry["detail"]


def test_agent_tampering_with_its_git_is_its_own_failure_not_a_crash(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent that writes git configuration meant to run commands in the harness's git (or
    rewrites its refs) must neither crash the evaluator nor reach it: only its files count."""
    agent = tmp_path / "agent.sh"
    owned = tmp_path / "owned-by-agent"  # only a git run by the harness could create it
    agent.write_text(
        "#!/bin/sh\n"
        "git commit -q --allow-empty -m mine\n"  # before the hooks: the agent's own git runs none
        f"git config core.fsmonitor 'touch {owned}'\n"
        f"git config filter.x.clean 'touch {owned}'\n"
        "echo '* filter=x' > .gitattributes.local\n"
        "sed -i 's/return settings/return settings  # edited/' confparse/parser.py\n"
    )
    agent.chmod(0o755)
    out = tmp_path / "run"
    code, rows = run_json(
        capsys, str(parser.contracts[0]), "--agent", f"cmd:{agent}", "--out", str(out)
    )
    assert code == ExitCode.OK
    assert rows[0]["outcome"] == "rejected"  # its edit fixes nothing: the agent's failure
    assert "focused_tests_passed" in rows[0]["failed"]  # type: ignore[operator]
    assert not owned.exists()
    patch = next((out / "attempts").glob("*/patch.diff")).read_text()
    assert "# edited" in patch


def test_resuming_with_changed_inputs_is_refused(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finished attempts must never answer for a contract or an agent that has since changed."""
    preds = tmp_path / "p.json"
    good = git.diff_binary(
        parser.repo, parser.commits["base"], parser.commits["fix"], (), ["tests/"]
    )
    row = {"instance_id": "parser-bounded-config", "model_name_or_path": "m"}
    preds.write_text(json.dumps([{**row, "model_patch": good.decode()}]))
    out = tmp_path / "run"
    code, rows = run_json(
        capsys, str(parser.contracts[0]), "--agent", f"predictions:{preds}", "--out", str(out)
    )
    assert rows[0]["accepted"] is True
    preds.write_text(json.dumps([{**row, "model_patch": ""}]))
    code = main(
        ["run", str(parser.contracts[0]), "--agent", f"predictions:{preds}", "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert "holds a run of other inputs" in err
    assert len(stored_attempts(out)) == 1


@pytest.mark.parametrize(
    ("first", "then", "said"), [(1, 2, "1 epoch, not 2"), (2, 1, "2 epochs, not 1")]
)
def test_resuming_with_other_epochs_is_refused_counting_in_english(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    first: int,
    then: int,
    said: str,
) -> None:
    """The refusal said "it has 1 epochs, not 2"."""
    out = tmp_path / "run"
    args = ["run", str(parser.contracts[0]), "--agent", "null", "--out", str(out)]
    assert main([*args, "--epochs", str(first)]) == ExitCode.OK
    capsys.readouterr()
    assert main([*args, "--epochs", str(then)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert f"holds a run of other inputs: it has {said}; give --epochs {first} to resume" in err
    assert len(stored_attempts(out)) == first


@pytest.mark.parametrize("named", [2, 3])
def test_a_contract_named_more_than_once_is_run_and_counted_once(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str], named: int
) -> None:
    """A contract named twice is planned once, but the progress counted it each time
    (``running [1/2]`` for the run's one attempt, as for ``--agent null --agent null``)."""
    out = tmp_path / "run"
    contracts = [str(parser.contracts[0])] * named
    assert main(["run", *contracts, "--agent", "null", "--epochs", "2", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("running [")] == [
        "running [1/2] parser-bounded-config · null · epoch 0",
        "running [2/2] parser-bounded-config · null · epoch 1",
    ]
    assert len(stored_attempts(out)) == 2


def test_two_runs_into_one_folder_at_once_are_refused(tmp_path: Path) -> None:
    from repogate.errors import RunDirError

    with Store.create(tmp_path) as first:
        try:
            with pytest.raises(RunDirError, match="another repogate run is writing"):
                Store.create(tmp_path)
        finally:
            first.close()
    Store.create(tmp_path).close()  # released: a later run may resume


def test_missing_hidden_test_commit_is_a_usage_error(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = parser.contracts[0]
    text = path.read_text()
    path.write_text(
        text.replace(f'commit = "{parser.commits["fix"]}", paths', 'commit = "abcdef1234", paths')
    )
    code = main(["run", str(path), "--agent", "null", "--out", str(tmp_path / "run")])
    assert code == ExitCode.USAGE
    assert "abcdef1234" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_candidate_that_breaks_the_test_run_is_rejected_not_an_error(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The base ran these tests in this environment; a hang the patch brings in is its failure,
    never a way to turn a rejection into an evaluator error."""
    path = parser.contracts[0]
    path.write_text(path.read_text().replace("[oracles]\n", "[oracles]\ntimeout_s = 8\n", 1))
    hang = tmp_path / "hang.toml"
    hang.write_text(
        '[[edit]]\npath = "confparse/__init__.py"\nwrite = "import time\\ntime.sleep(600)\\n"\n'
    )
    code, rows = run_json(
        capsys, str(path), "--agent", f"scripted:{hang}", "--out", str(tmp_path / "run")
    )
    assert code == ExitCode.OK
    assert rows[0]["outcome"] == "rejected"
    assert "focused_tests_passed" in rows[0]["failed"]  # type: ignore[operator]
    decision = stored_attempts(tmp_path / "run")[0].decision
    assert decision is not None
    focused = next(c for c in decision.checks if c.name == "focused_tests_passed")
    assert "broke on the candidate" in focused.detail


def test_a_test_that_flips_only_on_the_candidate_is_flaky_with_a_record(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test whose outcome flips between runs of the candidate is flaky, stable at the base or
    not: a failure is charged only when it reproduces (issue 9). It is left out with a record in
    the receipt and in the decision, never silently."""
    path = parser.contracts[0]
    path.write_text(path.read_text().replace("[oracles]\n", "[oracles]\nrepeat = 3\n", 1))
    fixed = git.show_file(parser.repo, parser.commits["fix"], "confparse/parser.py")
    assert fixed is not None
    flaky_init = (
        "import pathlib\n"
        "from confparse.parser import ConfigError, parse, DEFAULTS\n"
        "# broken in the fresh trees a state's repeats get (<tree>-run<n>-...), not in reruns'\n"
        "if '-run' in pathlib.Path(__file__).resolve().parents[2].name:\n"
        "    DEFAULTS['mode'] = 'broken'\n"
    )
    agent = tmp_path / "unstable.toml"
    agent.write_text(
        "[[edit]]\npath = 'confparse/parser.py'\nwrite = " + json.dumps(fixed.decode()) + "\n\n"
        "[[edit]]\npath = 'confparse/__init__.py'\nwrite = " + json.dumps(flaky_init) + "\n"
    )
    code, _rows = run_json(
        capsys, str(path), "--agent", f"scripted:{agent}", "--out", str(tmp_path / "run")
    )
    assert code == ExitCode.OK
    with Store.open(tmp_path / "run") as store:
        attempt = store.attempts()[0]
        details = next(r for r in store.receipts(attempt.attempt_id) if r.gate == "V").details
    assert details["unstable_on_candidate"], details
    assert set(details["unstable_on_candidate"]) <= set(details["flaky_excluded"])
    assert attempt.decision is not None
    left_out = " ".join(c.detail for c in attempt.decision.checks)
    assert all(t in left_out for t in details["unstable_on_candidate"]), left_out
    assert "flaky, left out" in left_out


def test_two_contracts_with_one_id_are_refused(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Attempts are stored under the contract id: a second contract with the same id would be
    answered by the first one's finished attempt."""
    twin = parser.contracts[0].with_name("twin.toml")
    twin.write_text(
        parser.contracts[0].read_text().replace("time_budget_s = 120", "time_budget_s = 60")
    )
    code = main(
        [
            "run",
            str(parser.contracts[0]),
            str(twin),
            "--agent",
            "null",
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert code == ExitCode.USAGE
    assert "two contracts share the id 'parser-bounded-config'" in capsys.readouterr().err


def test_commands_compare_clean_trees_not_the_test_tree(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An oracle command must see the candidate as submitted: the hidden tests applied in the
    test tree (or files install commands left in the base) are not the patch's new failures."""
    lint = tmp_path / "lint.py"
    lint.write_text(
        "import pathlib\nraise SystemExit(pathlib.Path('tests/test_limits.py').exists())\n"
    )
    variant = contract_with(parser, "")
    variant.write_text(
        variant.read_text().replace(
            "[reference]",
            f'[[oracles.commands]]\nname = "lint"\nrun = "python {lint}"\n\n[reference]',
        )
    )
    code, rows = run_json(capsys, str(variant), "--agent", "gold", "--out", str(tmp_path / "run"))
    assert code == ExitCode.OK
    assert rows[0]["accepted"] is True, rows


def test_a_patch_cannot_rewrite_its_own_evidence_while_its_tests_run(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The patch file reviewers read must be the one evaluated: code run by the tests cannot
    write the evidence folder (only the report FIFO there is visible to it), and the stored patch
    is checked at decision."""
    fixed = git.show_file(parser.repo, parser.commits["fix"], "confparse/parser.py")
    assert fixed is not None
    rewrite = (
        "\nimport pathlib as _p, sys as _s\n"
        "for _a in _s.argv:\n"
        "    if _a.endswith('.fifo'):\n"
        "        (_p.Path(_a.split('=', 1)[-1]).parents[2] / 'patch.diff').write_text('harmless')\n"
    )
    agent = tmp_path / "rewrite.toml"
    agent.write_text(
        "[[edit]]\npath = 'confparse/parser.py'\nwrite = "
        + json.dumps(fixed.decode() + rewrite)
        + "\n"
    )
    code, rows = run_json(
        capsys,
        str(parser.contracts[0]),
        "--agent",
        f"scripted:{agent}",
        "--out",
        str(tmp_path / "run"),
    )
    assert code == ExitCode.OK
    stored = next((tmp_path / "run" / "attempts").glob("*/patch.diff")).read_text()
    if not HAS_BWRAP:  # weak isolation: the rewrite lands, and the digest check catches it
        assert stored == "harmless"
        assert "patch_digest_verified" in rows[0]["failed"]  # type: ignore[operator]
        return
    assert stored.startswith("diff --git")  # not "harmless": the rewrite did not reach it
    assert "patch_digest_verified" not in rows[0]["failed"]  # type: ignore[operator]
    assert rows[0]["accepted"] is True  # the fix itself, evaluated as stored
