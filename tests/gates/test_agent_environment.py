"""An environment the agent supplies (``[environment] supplied_by = "agent"``), graded in stages.

One task run once with five ``cmd:`` agents (real git, real uv builds, real pytest): each leaves
the fix (or not) and an ``environment.toml`` recipe (or not) in ``$REPOGATE_OUTPUT``. Gate E builds
the recipe at the base and grades how far it got (built, imports, collects, reproduces); every
later gate still grades in the evaluator's environment built from the contract's recipe.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _task import make_task
from repogate.cli import main
from repogate.receipt import Receipt
from repogate.store import Store

BUGGY = "def double(x):\n    return x * 3\n"
FIXED = "def double(x):\n    return x * 2\n"
# The graded tests import six (a dependency) and check the packaging the recipe pinned.
F2P_TESTS = (
    "import six\n\nfrom units import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
)
P2P_TESTS = 'import packaging\n\n\ndef test_pinned():\n    assert packaging.__version__ == "24.1"\n'
INSTALL = ["uv pip install pytest six packaging==24.1"]
FAKE_PYTEST = (
    "'''python -c \"import sysconfig, pathlib; "
    "pathlib.Path(sysconfig.get_paths()['purelib'], 'pytest.py')"
    ".write_text('raise SystemExit(0)')\"'''"
)
# Appends to six (which the graded test imports first) a line that fixes the bug in memory.
PATCH_SIX = (
    "'''python -c \"import six, pathlib; p = pathlib.Path(six.__file__); "
    "p.write_text(p.read_text() + '\\nimport units; units.double = lambda x: x * 2\\n')\"'''"
)

AGENTS: dict[str, tuple[bool, str | None]] = {
    # name: (leaves the fix, its environment.toml or None)
    "correct": (True, 'python = "3.11"\ninstall = ["uv pip install six pytest packaging==24.1"]\n'),
    "no-recipe": (True, None),
    "omits-six": (True, 'python = "3.11"\ninstall = ["uv pip install pytest packaging==24.1"]\n'),
    "pins-other": (
        True,
        'python = "3.11"\ninstall = ["uv pip install pytest six packaging==23.2"]\n',
    ),
    "malformed": (True, 'python = "3.11"\ninstall = "not a list"\n'),
    "patched-six": (False, f'python = "3.11"\ninstall = ["{INSTALL[0]}", {PATCH_SIX}]\n'),
    "fake-pytest": (False, f'python = "3.11"\ninstall = ["uv pip install six", {FAKE_PYTEST}]\n'),
}


def _agent(root: Path, name: str, fixes: bool, recipe: str | None) -> str:
    """A shell agent that writes the fix (or not) and its recipe (or not); its ``cmd:`` spec."""
    lines = ["#!/bin/sh", "set -e"]
    if fixes:
        lines.append(f"printf '%s' '{FIXED}' > units/__init__.py")
    if recipe is not None:
        lines += [f"cat > \"$REPOGATE_OUTPUT/environment.toml\" <<'EOF'\n{recipe}EOF"]
    lines.append('echo "PATH=$PATH" > "$REPOGATE_OUTPUT/seen.txt"')
    script = root / f"{name}.sh"
    script.write_text("\n".join(lines) + "\n")
    script.chmod(0o755)
    return f"cmd:{script}"


class Ran:
    """The run's attempts by agent name: decision checks and receipts."""

    def __init__(self, out: Path, names: list[str]) -> None:
        with Store.open(out) as store:
            records = store.attempts()
            self.manifest = store.manifest()
            self.by_name: dict[str, tuple[Any, list[Receipt]]] = {}
            for record in records:
                name = Path(record.agent.removeprefix("cmd:")).stem
                self.by_name[name] = (record.decision, store.receipts(record.attempt_id))
        self.out = out
        assert sorted(self.by_name) == sorted(names)

    def outcome(self, name: str) -> str:
        return str(self.by_name[name][0].outcome)

    def check(self, name: str, check: str) -> tuple[str, str]:
        found = next(c for c in self.by_name[name][0].checks if c.name == check)
        return str(found.status), str(found.detail)

    def receipt(self, name: str, gate: str) -> Receipt:
        return next(r for r in self.by_name[name][1] if r.gate == gate)

    def reached(self, name: str) -> list[tuple[str, str]]:
        stages = self.receipt(name, "E-reconstruction").details["stages"]
        return [(s["stage"], s["status"]) for s in stages]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    root = tmp_path_factory.mktemp("agent-env")
    contract, _, _ = make_task(
        root,
        {
            "pyproject.toml": '[project]\nname = "units"\nversion = "1.0.0"\n',
            "units/__init__.py": BUGGY,
            "tests/test_pinned.py": P2P_TESTS,
        },
        {"units/__init__.py": FIXED, "tests/test_units.py": F2P_TESTS},
        install=INSTALL,
        fail_to_pass=["tests/test_units.py::test_double"],
        pass_to_pass=["tests/test_pinned.py::test_pinned"],
        editable=["units/**"],
        environment='supplied_by = "agent"',
    )
    specs = ["gold", *(_agent(root, name, *given) for name, given in AGENTS.items())]
    out = root / "run"
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()):
        patch.setenv("REPOGATE_CACHE", str(root / "cache"))
        patch.setenv("SOURCE_DATE_EPOCH", "1767600000")
        with contextlib.suppress(SystemExit):
            main(
                [
                    "run",
                    str(contract),
                    *[a for s in specs for a in ("--agent", s)],
                    "--out",
                    str(out),
                ]
            )
    yield Ran(out, ["gold", *AGENTS])


pytestmark = pytest.mark.slow

ALL_STAGES = [(s, "passed") for s in ("built", "imports", "collects", "reproduces")]


def test_a_correct_recipe_and_the_fix_are_accepted_with_every_stage(ran: Ran) -> None:
    assert ran.outcome("correct") == "accepted", ran.by_name["correct"][0].checks
    assert ran.reached("correct") == ALL_STAGES
    assert ran.receipt("correct", "E-reconstruction").details["reached"] == "reproduces"
    status, detail = ran.check("correct", "environment_reproduced")
    assert status == "passed"
    # folded with gate E's own check on the evaluator's environment
    assert detail.endswith(
        "; the agent's environment reached every stage: built, imports, collects, reproduces"
    ), detail


def test_gold_leaves_the_contracts_recipe_and_reaches_every_stage(ran: Ran) -> None:
    assert ran.outcome("gold") == "accepted"
    assert ran.reached("gold") == ALL_STAGES
    recipe = ran.receipt("gold", "E-reconstruction").details["recipe"]
    assert recipe == {"python": "3.11", "install": INSTALL, "lock_inputs": []}


def test_no_recipe_fails_environment_reproduced_at_built(ran: Ran) -> None:
    assert ran.outcome("no-recipe") == "rejected"
    status, detail = ran.check("no-recipe", "environment_reproduced")
    assert status == "failed"
    assert "failed at built: no environment.toml" in detail
    assert ran.reached("no-recipe") == [("built", "failed")]
    # the rest still graded, in the evaluator's environment: the fix passes
    assert ran.check("no-recipe", "focused_tests_passed")[0] == "passed"


def test_a_malformed_recipe_fails_at_built_with_the_parse_error(ran: Ran) -> None:
    status, detail = ran.check("malformed", "environment_reproduced")
    assert status == "failed"
    assert "failed at built: environment.toml: key 'install'" in detail, detail


def test_a_recipe_missing_a_dependency_the_tests_import_fails_at_collects(ran: Ran) -> None:
    assert ran.outcome("omits-six") == "rejected"
    status, detail = ran.check("omits-six", "environment_reproduced")
    assert status == "failed"
    assert ran.reached("omits-six") == [*ALL_STAGES[:2], ("collects", "failed")]
    assert "tests/test_units.py::test_double" in detail


def test_a_recipe_pinning_another_version_fails_at_reproduces(ran: Ran) -> None:
    assert ran.outcome("pins-other") == "rejected"
    status, detail = ran.check("pins-other", "environment_reproduced")
    assert status == "failed"
    assert ran.reached("pins-other") == [*ALL_STAGES[:3], ("reproduces", "failed")]
    assert "'tests/test_pinned.py::test_pinned' (passed -> failed)" in detail, detail


def test_a_fake_pytest_in_the_agents_recipe_changes_nothing_in_gate_v(ran: Ran) -> None:
    """The agent left the bug; its recipe's pytest exits 0 for everything. Gate V is unmoved."""
    assert ran.outcome("fake-pytest") == "rejected"
    assert ran.check("fake-pytest", "focused_tests_passed")[0] == "failed"
    assert ran.check("fake-pytest", "environment_reproduced")[0] == "failed"
    agents_env = ran.receipt("fake-pytest", "E-reconstruction").details["environment"]
    evaluators = ran.receipt("fake-pytest", "E").details["environment"]
    assert agents_env["digest"] != evaluators["digest"]
    # gate V graded the state gate E's evaluator environment is bound to (its digest is part of
    # the state id), and found the bug
    assert ran.receipt("fake-pytest", "V").state_id == ran.receipt("fake-pytest", "E").state_id
    assert ran.receipt("fake-pytest", "V").status == "failed"


def test_the_agent_gets_no_prepared_environment(ran: Ran) -> None:
    seen = (ran.out / "attempts").glob("*/agent/seen.txt")
    paths = {p.read_text().strip() for p in seen}
    assert paths == {"PATH=/usr/local/bin:/usr/bin:/bin"}


def test_the_manifest_and_cohort_say_reconstructed(ran: Ran) -> None:
    assert ran.manifest is not None
    entry = ran.manifest.contracts[0]
    assert entry.environment_supplied_by == "agent"
    assert entry.cohort["environment"] == "reconstructed"


def test_the_decision_carries_each_reconstruction_stage(ran: Ran) -> None:
    stages = ran.by_name["omits-six"][0].stages
    assert stages["environment built"] == "passed"
    assert stages["environment imports"] == "passed"
    assert stages["environment collects"] == "failed"
    assert "environment reproduces" not in stages
    assert stages["environment reconstructed"] == "failed"


def test_the_report_funnel_shows_each_stage_and_groups_by_environment(ran: Ran) -> None:
    from repogate.report.aggregate import build_report
    from repogate.report.load import load_runs

    report = build_report(load_runs([ran.out]), by="environment")
    assert {a.cohort for a in report.acceptance} == {"all", "reconstructed"}
    funnel = next(f for f in report.funnels if "omits-six" in f.agent)
    rows = {s.stage: (s.passed, s.failed) for s in funnel.stages}
    names = [s.stage for s in funnel.stages]
    at = names.index("environment reconstructed")
    assert names[at - 4 : at] == [
        "environment built",
        "environment imports",
        "environment collects",
        "environment reproduces",
    ]
    assert rows["environment collects"] == (0, 1)
    assert rows["environment reproduces"] == (0, 0)  # not reached


def test_agents_environments_are_built_apart_from_the_evaluators(ran: Ran) -> None:
    """An agent's recipe equal to the contract's is still built in a cache of its own."""
    gold = ran.receipt("gold", "E-reconstruction").details["environment"]
    evaluators = ran.receipt("gold", "E").details["environment"]
    assert gold["cache_key"] == evaluators["cache_key"]  # the same recipe
    assert gold["cold"] is True  # yet built again, not the evaluator's reused


def test_show_and_report_print_the_reconstruction(
    ran: Ran, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # wide enough that the detail column holds the stage's words on one line (at 100 columns,
    # what `show` takes off a terminal, the table wraps them since ids are never cut)
    monkeypatch.setenv("COLUMNS", "240")
    capsys.readouterr()
    with Store.open(ran.out) as store:
        attempt = next(a for a in store.attempts() if "omits-six" in a.agent)
    assert main(["show", str(ran.out), attempt.attempt_id]) == 0
    shown = capsys.readouterr().out
    assert "E-reconstruction" in shown and "failed at collects" in shown, shown
    assert main(["report", str(ran.out), "--by", "environment"]) == 0
    said = capsys.readouterr().out
    assert "environment collects" in said and "reconstructed" in said, said


def test_a_recipe_patching_a_test_dependency_changes_nothing_in_gate_v(ran: Ran) -> None:
    """The agent left the bug; its recipe patches six to fix it in memory. Gate V is unmoved."""
    assert ran.outcome("patched-six") == "rejected"
    assert ran.check("patched-six", "focused_tests_passed")[0] == "failed"
    status, detail = ran.check("patched-six", "environment_reproduced")
    assert status == "failed"
    assert ran.reached("patched-six") == [*ALL_STAGES[:3], ("reproduces", "failed")]
    assert "'tests/test_units.py::test_double' (failed -> passed)" in detail, detail
