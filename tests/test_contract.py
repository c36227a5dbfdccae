from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogate.cli import ExitCode, main
from repogate.contract import load_contract
from repogate.errors import ContractError

MINIMAL = """
id = "t1"
repo = "repo"
base_commit = "{sha}"
[requirement]
statement = "parse bounded config strings"
"""


def write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_minimal_contract_loads_with_defaults(tmp_path: Path) -> None:
    contract = load_contract(write(tmp_path, MINIMAL.format(sha="a" * 40)))
    assert contract.profile == "hermetic"
    assert contract.base_commit == "a" * 40
    assert contract.resolve("repo") == (tmp_path / "repo").resolve()


def test_short_sha_accepted_and_lowercased(tmp_path: Path) -> None:
    contract = load_contract(write(tmp_path, MINIMAL.format(sha="ABCDEF1")))
    assert contract.base_commit == "abcdef1"


@pytest.mark.parametrize("sha", ["main", "xyz1234", "abc", "a" * 41, "HEAD~1"])
def test_base_commit_must_be_hex_sha(tmp_path: Path, sha: str) -> None:
    with pytest.raises(ContractError) as info:
        load_contract(write(tmp_path, MINIMAL.format(sha=sha)))
    message = str(info.value)
    assert "c.toml" in message
    assert "base_commit" in message
    assert "hex" in message


def test_misspelled_key_is_named_alone_with_suggestion(tmp_path: Path) -> None:
    text = MINIMAL.format(sha="a" * 40) + "[oracles]\nfail_to_pas = ['t::x']\n"
    with pytest.raises(ContractError) as info:
        load_contract(write(tmp_path, text))
    message = str(info.value)
    assert message.startswith(
        f"contract {tmp_path / 'c.toml'}: unknown key 'oracles.fail_to_pas' (did you mean "
        "'fail_to_pass'? valid keys here: "
    )
    assert "problems" not in message


_SERVICE = """
[[environment.services]]
name = "hello"
start = "python -m http.server 8765"
ready = "true"
port = 8765
tls = {value}
"""


@pytest.mark.parametrize(
    ("table", "key", "value", "shown"),
    [
        (_SERVICE, "environment.services.0.tls", '"yes"', '"yes"'),
        (_SERVICE, "environment.services.0.tls", '"on"', '"on"'),
        ("[oracles]\nrunner_under_test = {value}\n", "oracles.runner_under_test", "1", "1"),
        ("[oracles]\nrunner_under_test = {value}\n", "oracles.runner_under_test", "0", "0"),
        ("[permissions]\nnetwork = {value}\n", "permissions.network", '"1"', '"1"'),
    ],
)
def test_a_boolean_written_as_a_string_or_number_is_refused_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, key: str, value: str, shown: str
) -> None:
    """Issue 21: pydantic's lax mode read ``tls = "yes"`` as true (and "on", "1", 0 and 1), so a
    contract meaning something else was accepted silently. TOML has real booleans: anything
    else is the user's error, said with its key."""
    text = MINIMAL.format(sha="a" * 40) + table.format(value=value)
    err = _problem_line(tmp_path, capsys, text)
    assert f"key {key!r}: {shown} is not a boolean (use true or false); " in err, err


def test_wrong_type_is_named(tmp_path: Path) -> None:
    text = MINIMAL.format(sha="a" * 40) + "[permissions]\ntime_budget_s = 'soon'\n"
    with pytest.raises(ContractError) as info:
        load_contract(write(tmp_path, text))
    assert "permissions.time_budget_s" in str(info.value)


def test_malformed_toml_names_file(tmp_path: Path) -> None:
    with pytest.raises(ContractError) as info:
        load_contract(write(tmp_path, "id = \n"))
    assert "not valid TOML" in str(info.value)
    assert "c.toml" in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="cannot be read"):
        load_contract(tmp_path / "nope.toml")


def test_patch_source_needs_exactly_one_origin(tmp_path: Path) -> None:
    text = MINIMAL.format(sha="a" * 40) + "[reference]\nfile = 'x.patch'\ncommit = 'abcdef1'\n"
    with pytest.raises(ContractError, match="exactly one"):
        load_contract(write(tmp_path, text))


def test_policy_digest_changes_with_contract(tmp_path: Path) -> None:
    a = load_contract(write(tmp_path, MINIMAL.format(sha="a" * 40), "a.toml"))
    b = load_contract(write(tmp_path, MINIMAL.format(sha="b" * 40), "b.toml"))
    assert a.policy_digest() != b.policy_digest()
    assert a.policy_digest() == load_contract(tmp_path / "a.toml").policy_digest()


def test_schema_validates_shipped_examples(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    assert main(["schema", "contract"]) == ExitCode.OK
    schema = json.loads(capsys.readouterr().out)
    import tomllib

    env_maps = {"env-map.toml"}  # an `--env-map` for `tasks import`, not a contract
    examples = sorted(p for p in (root / "examples").rglob("*.toml") if p.name not in env_maps)
    assert len(examples) >= 2
    for path in examples:
        jsonschema.validate(tomllib.loads(path.read_text()), schema)
        load_contract(path)


def test_cli_reports_bad_contract_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, MINIMAL.format(sha="zzz"))
    code = main(["run", str(path), "--agent", "null", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == ExitCode.USAGE
    assert err.startswith("error: contract")
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def _properties(schema: dict[str, object]) -> list[tuple[str, dict[str, object]]]:
    found: list[tuple[str, dict[str, object]]] = []
    models = {"TransitionContract": schema, **schema["$defs"]}  # type: ignore[dict-item]
    for model_name, model in models.items():
        for key, prop in model.get("properties", {}).items():  # type: ignore[attr-defined]
            found.append((f"{model_name}.{key}", prop))
    return found


def test_schema_describes_every_contract_field() -> None:
    """The JSON Schema is the contract author's reference: no key without a description."""
    from repogate.contract import contract_schema

    props = _properties(contract_schema())
    assert len(props) > 70
    undocumented = [name for name, prop in props if not prop.get("description")]
    assert undocumented == []


def test_with_base_dir_returns_a_copy(tmp_path: Path) -> None:
    contract = load_contract(write(tmp_path, MINIMAL.format(sha="a" * 40)))
    moved = contract.with_base_dir(tmp_path / "elsewhere")
    assert moved.base_dir == (tmp_path / "elsewhere").resolve()
    assert contract.base_dir == tmp_path.resolve()
    assert moved.policy_digest() == contract.policy_digest()  # the same task, resolved elsewhere


def test_review_placeholder_needs_the_explicit_switch_not_a_cohort_tag(tmp_path: Path) -> None:
    """Free-form cohort metadata must not decide how approvals are checked: only
    ``authority.simulated_reviews`` lets a ``{{candidate}}`` digest stand for the candidate's."""
    text = MINIMAL.format(sha="a" * 40) + '[cohort]\norigin = "scenario"\n'
    assert load_contract(write(tmp_path, text)).authority.simulated_reviews is False
    text += "[authority]\nsimulated_reviews = true\n"
    assert load_contract(write(tmp_path, text, "d.toml")).authority.simulated_reviews is True


def _problem_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> str:
    """The one error line ``repogate run`` gives for a contract holding ``text`` (nothing written)."""
    path = write(tmp_path, text)
    assert main(["run", str(path), "--agent", "null", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: contract") and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()
    return err


MISSPELT_TABLE = """
id = "t1"
repo = "repo"
base_commit = "{sha}"
[requirment]
statement = "parse bounded config strings"
"""


def test_a_misspelt_table_and_a_wrong_type_are_both_said_with_the_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 21: ``[requirment]`` makes pydantic report the missing ``requirement`` first, and
    the hint naming the misspelling was hidden in "(and 1 more)"; with a second problem beside
    it, neither may hide the other."""
    text = MISSPELT_TABLE.format(sha="a" * 40) + "[permissions]\ntime_budget_s = 'soon'\n"
    err = _problem_line(tmp_path, capsys, text)
    assert "3 problems: key 'requirement': Field required; " in err
    assert "unknown key 'requirment' (did you mean 'requirement'? valid keys here: " in err
    assert "key 'permissions.time_budget_s': \"soon\" is not a number (write a number" in err
    assert "; fix the keys and values and run again; " in err
    assert "more)" not in err


def test_two_misspelt_keys_in_a_table_each_get_their_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = MINIMAL.format(sha="a" * 40) + (
        "[oracles]\nfail_to_pas = ['t::x']\nregresion = 'declared'\n"
    )
    err = _problem_line(tmp_path, capsys, text)
    assert err.startswith(f"error: contract {tmp_path / 'c.toml'}: 2 problems: ")
    assert "unknown key 'oracles.fail_to_pas' (did you mean 'fail_to_pass'? valid keys" in err
    assert "unknown key 'oracles.regresion' (did you mean 'regression'? valid keys" in err


def test_real_booleans_still_load(tmp_path: Path) -> None:
    text = MINIMAL.format(sha="a" * 40) + _SERVICE.format(value="true")
    text += "[oracles]\nrunner_under_test = false\n"
    contract = load_contract(write(tmp_path, text))
    assert contract.environment.services[0].tls is True
    assert contract.oracles.runner_under_test is False
