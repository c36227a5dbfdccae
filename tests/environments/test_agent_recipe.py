"""The recipe an agent leaves (``environment.toml``) and the rules gate E grades it by."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from repogate.contract import EnvironmentRecipe, TransitionContract
from repogate.environments import (
    AgentRecipe,
    AgentRecipeError,
    agent_environment_recipe,
    read_agent_recipe,
    recipe_text,
)
from repogate.gates.reconstruction import (
    StageResult,
    differing,
    reconstruction,
    top_level_packages,
    uncollected,
)
from repogate.oracles.junit import TestOutcome
from repogate.store import contract_entry


def _write(folder: Path, text: str) -> Path:
    (folder / "environment.toml").write_text(text, encoding="utf-8")
    return folder


def test_a_recipe_reads_as_given(tmp_path: Path) -> None:
    given = read_agent_recipe(
        _write(
            tmp_path,
            'python = "3.12"\ninstall = ["uv pip install -e ."]\nlock_inputs = ["uv.lock"]\n',
        )
    )
    assert given == AgentRecipe(
        python="3.12", install=("uv pip install -e .",), lock_inputs=("uv.lock",)
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (None, "no environment.toml in the agent's output folder ($REPOGATE_OUTPUT)"),
        ('python = "3.11"\ninstall = [', "environment.toml is not TOML: "),
        ('install = ["x"]\n', "environment.toml: key 'python': Field required"),
        ('python = "3.11"\ninstall = "uv pip install x"\n', "environment.toml: key 'install'"),
        # the contract's conditions are not the agent's to set
        (
            'python = "3.11"\nnetwork = true\n',
            "environment.toml: unknown key 'network' (valid keys here: install, lock_inputs, python)",
        ),
        ('python = "3.11"\ntimezone = "Asia/Tokyo"\n', "environment.toml: unknown key 'timezone'"),
        ('python = "3.11; rm -rf /"\n', "environment.toml: key 'python': String should match"),
        (b"python = '\xff'\n", "environment.toml is not TOML: "),
        # a path would be an interpreter the harness queries outside the sandbox
        ('python = "/tmp/out/python"\n', "environment.toml: key 'python': String should match"),
        ('python = "3.11"\nlock_inputs = ["../secret"]\n', "environment.toml: key 'lock_inputs'"),
        ('python = "3.11"\nlock_inputs = ["/etc/passwd"]\n', "environment.toml: key 'lock_inputs'"),
    ],
)
def test_a_bad_recipe_is_one_line_saying_why(
    tmp_path: Path, text: str | bytes | None, said: str
) -> None:
    if isinstance(text, bytes):
        (tmp_path / "environment.toml").write_bytes(text)
    elif text is not None:
        _write(tmp_path, text)
    with pytest.raises(AgentRecipeError) as caught:
        read_agent_recipe(tmp_path)
    assert str(caught.value).startswith(said), str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_planted_link_is_refused_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.toml"
    secret.write_text('python = "3.11"\n')
    out = tmp_path / "out"
    out.mkdir()
    (out / "environment.toml").symlink_to(secret)
    with pytest.raises(AgentRecipeError, match=r"environment\.toml is a symbolic link"):
        read_agent_recipe(out)


def test_the_contracts_conditions_stay_the_evaluators() -> None:
    contract = EnvironmentRecipe(
        supplied_by="agent",
        python="3.11",
        install=("uv pip install pytest",),
        network=False,
        timezone="Europe/Paris",
        locale="C.UTF-8",
    )
    built = agent_environment_recipe(
        contract, AgentRecipe(python="3.12", install=("pip install x",))
    )
    assert (built.python, built.install, built.lock_inputs) == ("3.12", ("pip install x",), ())
    assert (built.network, built.timezone, built.locale, built.backend, built.supplied_by) == (
        False,
        "Europe/Paris",
        "C.UTF-8",
        "uv",
        "agent",
    )


def test_recipe_text_reads_back_as_the_contracts_recipe(tmp_path: Path) -> None:
    contract = EnvironmentRecipe(
        python="3.11", install=('sh -c "echo \\"x\\""',), lock_inputs=("a.txt",)
    )
    text = recipe_text(contract)
    assert tomllib.loads(text) == {
        "python": "3.11",
        "install": ['sh -c "echo \\"x\\""'],
        "lock_inputs": ["a.txt"],
    }
    assert read_agent_recipe(_write(tmp_path, text)).install == contract.install


def test_stages_fold_into_environment_reproduced() -> None:
    passed = [
        StageResult(stage=s, status="passed")
        for s in ("built", "imports", "collects", "reproduces")
    ]
    assert reconstruction(passed, {}).checks[0].status == "passed"
    failed = [
        *passed[:2],
        StageResult(stage="collects", status="failed", detail="2 graded test id(s) do not collect"),
    ]
    seen = reconstruction(failed, {"x": 1})
    assert seen.checks[0].status == "failed"
    assert (
        seen.checks[0].detail
        == "the agent's environment failed at collects: 2 graded test id(s) do not collect"
    )
    assert seen.details["reached"] == "imports" and seen.details["x"] == 1
    assert reconstruction(passed[:2], {}).checks[0].status == "failed"  # never graded past imports


def test_outcomes_compared_id_by_id() -> None:
    ids = ["t/test_a.py::test_x", "t/test_b.py::test_y"]
    evaluator: dict[str, TestOutcome] = {
        "t/test_a.py::test_x": "failed",
        "t/test_b.py::test_y": "passed",
    }
    assert differing(evaluator, dict(evaluator), ids, ()) == ""
    moved: dict[str, TestOutcome] = {
        "t/test_a.py::test_x": "failed",
        "t/test_b.py::test_y": "failed",
    }
    assert differing(evaluator, moved, ids, ()) == (
        "1 graded test(s) end differently than in the evaluator's environment: "
        "'t/test_b.py::test_y' (passed -> failed)"
    )
    assert differing(evaluator, moved, ids, {"t/test_b.py::test_y"}) == ""  # flaky at the base
    lost: dict[str, TestOutcome] = {"t/test_a.py": "error", "t/test_b.py::test_y": "passed"}
    assert (
        uncollected(evaluator, lost, ids)
        == "1 graded test id(s) do not collect: 't/test_a.py::test_x'"
    )
    # an id the evaluator's environment does not collect either (it imports the fix) is no loss
    assert uncollected(lost, lost, ids) == ""


def test_top_level_packages_leave_tests_and_docs_out() -> None:
    found = top_level_packages(
        {".": ["units", "tests", "test_data", "docs", "not-a-name"], "src": ["core"]}
    )
    assert found == ("core", "units")


@pytest.mark.parametrize(
    ("environment", "cohort", "supplied_by"),
    [
        ({}, {"environment": "supplied"}, "evaluator"),
        ({"supplied_by": "agent"}, {"environment": "reconstructed"}, "agent"),
    ],
)
def test_the_manifest_entry_says_who_supplied_the_environment(
    environment: dict[str, str], cohort: dict[str, str], supplied_by: str
) -> None:
    contract = TransitionContract.model_validate(
        {
            "id": "t1",
            "repo": "repo",
            "base_commit": "a" * 40,
            "requirement": {"statement": "s"},
            "cohort": {"team": "api"},
            "environment": environment,
        }
    )
    entry = contract_entry(contract, "t1.toml")
    assert entry.cohort == {"team": "api", **cohort}
    assert entry.environment_supplied_by == supplied_by
    # a tag the contract sets itself wins over the derived one
    tagged = contract.model_copy(update={"cohort": {"environment": "mine"}})
    assert contract_entry(tagged, "t1.toml").cohort == {"environment": "mine"}
