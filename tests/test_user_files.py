"""Every file a user (or an agent) writes takes a boolean as a boolean and a number as a number.

pydantic's lax mode turns the strings "yes", "on", "1" and the numbers 0 and 1 into booleans, so
``tls = "yes"`` in a contract was read as true. It also turns ``"120"`` into 120, ``true`` into 1
and ``2.0`` into 2 where an integer belongs, so ``time_budget_s = "120"`` loaded. TOML and JSON
have real booleans and real numbers: every boolean, integer and number field of a model such a
file is validated as must be strict (:data:`pydantic.StrictBool`, :data:`pydantic.StrictInt`,
:data:`pydantic.StrictFloat`, which still takes an integer: ``margin = 0``). This walks each such
file's model, so a field added later without strictness fails here; the tests below load real
files and read the one line said of a number written wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

import pytest
from pydantic import BaseModel, Field, StrictFloat, StrictInt, ValidationError
from pydantic.fields import FieldInfo

from _stored_run import one_attempt_run
from repogate._problems import every_problem, what_to_fix
from repogate.agents.command import read_agent_output
from repogate.agents.scripted import Script, load_script
from repogate.cli import ExitCode, main
from repogate.contract import TransitionContract, load_contract
from repogate.decision import Evidence, SoftMetrics
from repogate.environments.agent_recipe import AgentRecipe
from repogate.errors import AgentSpecError, EvidenceError, UserInputError
from repogate.gates.authority import ReviewEvidence, load_reviews
from repogate.report.policy import Policy, load_policy
from repogate.tasks.recipe import EnvMap
from repogate.tasks.taskset import Selection
from test_contract import MINIMAL

USER_FILES: dict[str, type[BaseModel]] = {
    "contract TOML": TransitionContract,
    "env map TOML (--env-map)": EnvMap,
    "report policy TOML (--policy)": Policy,
    "scripted agent TOML": Script,
    "agent's environment.toml": AgentRecipe,
    "review evidence JSON (--reviews)": ReviewEvidence,
    "evidence JSON (repogate decide)": Evidence,
}

BOOLEAN: tuple[type, ...] = (bool,)
NUMBERS: tuple[type, ...] = (int, float)


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in getattr(annotation, "__args__", ()) for m in _models(arg)]


def _fields(root: type[BaseModel]) -> list[tuple[str, FieldInfo]]:
    """Every field of ``root`` and of every model inside it, as ``(Model.field, info)``."""
    found: list[tuple[str, FieldInfo]] = []
    seen: set[type[BaseModel]] = set()
    todo = [root]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, field in model.model_fields.items():
            found.append((f"{model.__name__}.{name}", field))
            todo.extend(_models(field.annotation))
    return found


def _holds(annotation: Any, kinds: tuple[type, ...], strict: bool) -> tuple[bool, bool]:
    """Whether ``annotation`` holds one of ``kinds`` (``int``, ``int | None``, ``tuple[int, ...]``,
    ``Annotated[int, Strict()]``), and whether one of them is lax (not strict)."""
    if get_origin(annotation) is Annotated:
        base, *metadata = get_args(annotation)
        return _holds(base, kinds, strict or any(getattr(m, "strict", False) for m in metadata))
    if annotation in kinds:
        return True, not strict
    found = [_holds(arg, kinds, strict) for arg in get_args(annotation)]
    return any(h for h, _ in found), any(lax for _, lax in found)


def _of_kind(root: type[BaseModel], kinds: tuple[type, ...], *, lax: bool) -> list[str]:
    """The fields of ``root`` (or of a model inside it) holding ``kinds``; with ``lax``, only the
    lax ones."""
    chosen: list[str] = []
    for name, field in _fields(root):
        strict = any(getattr(m, "strict", False) for m in field.metadata)
        holds, is_lax = _holds(field.annotation, kinds, strict)
        if holds and (is_lax or not lax):
            chosen.append(name)
    return sorted(chosen)


@pytest.mark.parametrize("what", sorted(USER_FILES))
def test_every_boolean_of_a_user_file_is_strict(what: str) -> None:
    assert _of_kind(USER_FILES[what], BOOLEAN, lax=True) == []


@pytest.mark.parametrize("what", sorted(USER_FILES))
def test_every_number_of_a_user_file_is_strict(what: str) -> None:
    """``time_budget_s = "120"``, ``repeat = true`` and ``repeat = 2.0`` were read as numbers."""
    assert _of_kind(USER_FILES[what], NUMBERS, lax=True) == []


def test_the_walk_finds_numbers_wherever_they_are_written() -> None:
    """The walk is no proof unless it sees a lax number inside an optional, a tuple or a model."""

    class Inner(BaseModel):
        count: int = 0

    class Outer(BaseModel):
        strict: StrictInt = 0
        strict_optional: StrictFloat | None = None
        strict_field: int = Field(0, strict=True)
        lax: float = 0.0
        lax_optional: int | None = None
        lax_many: tuple[int, ...] = ()
        inner: Inner | None = None

    assert _of_kind(Outer, NUMBERS, lax=True) == [
        "Inner.count",
        "Outer.lax",
        "Outer.lax_many",
        "Outer.lax_optional",
    ]
    assert len(_of_kind(Outer, NUMBERS, lax=False)) == 7
    seen = {name for model in USER_FILES.values() for name in _of_kind(model, NUMBERS, lax=False)}
    assert {"Permissions.time_budget_s", "Service.port", "GatePolicy.alpha", "Usage.tokens"} <= seen
    assert len(seen) >= 38, sorted(seen)


# --- Real files: a number written wrong is one line naming its key --------------------------------


def _run_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> str:
    """``repogate run`` on a contract holding ``text``: exit 2, one line, nothing written."""
    path = tmp_path / "c.toml"
    path.write_text(MINIMAL.format(sha="a" * 40) + text)
    capsys.readouterr()
    assert main(["run", str(path), "--agent", "null", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: contract {path}: ") and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()
    return err


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # a string number
        (
            '[permissions]\ntime_budget_s = "120"\n',
            "key 'permissions.time_budget_s': \"120\" is not a number (write 120 without quotes)",
        ),
        (
            '[permissions]\ncost_budget_usd = "0.5"\n',
            "key 'permissions.cost_budget_usd': \"0.5\" is not a number (write 0.5 without quotes)",
        ),
        (
            '[authority]\nmin_approvals = "2"\n',
            "key 'authority.min_approvals': \"2\" is not a number (write 2 without quotes)",
        ),
        (
            '[permissions]\ntoken_budget = "1000"\n',
            "key 'permissions.token_budget': \"1000\" is not a number (write 1000 without quotes)",
        ),
        (
            '[oracles]\nrepeat = "2.5"\n',
            "key 'oracles.repeat': \"2.5\" is not a number (write a whole number without quotes)",
        ),
        (
            "[permissions]\ntime_budget_s = 'soon'\n",
            "key 'permissions.time_budget_s': \"soon\" is not a number (write a number without "
            "quotes)",
        ),
        # a boolean for an integer, and for a number
        (
            "[oracles]\nrepeat = true\n",
            "key 'oracles.repeat': true is not a number (write a whole number, not true or false)",
        ),
        (
            "[oracles]\ntimeout_s = false\n",
            "key 'oracles.timeout_s': false is not a number (write a number, not true or false)",
        ),
        # a float for an integer: with a fraction, and without one
        (
            "[oracles]\nrepeat = 2.5\n",
            "key 'oracles.repeat': 2.5 is not a whole number (this key takes an integer)",
        ),
        (
            "[sentinel]\nfollow_up_count = 2.0\n",
            "key 'sentinel.follow_up_count': 2.0 is not an integer (write 2, without the decimal "
            "point)",
        ),
        (
            '[[environment.services]]\nname = "db"\nstart = "s"\nready = "r"\nport = 8080.5\n',
            "key 'environment.services.0.port': 8080.5 is not a whole number",
        ),
    ],
)
def test_a_number_written_wrong_in_a_contract_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    err = _run_contract(tmp_path, capsys, text)
    assert f": {said}" in err, err
    assert "fix the value and run again" in err, err


def test_a_number_out_of_range_is_still_refused(tmp_path: Path) -> None:
    """Strictness keeps each number's constraints (gt, ge, le)."""
    for text, said in (
        (
            "[permissions]\ntime_budget_s = 0\n",
            "permissions.time_budget_s': Input should be greater than 0",
        ),
        ("[oracles]\nrepeat = 11\n", "oracles.repeat': Input should be less than or equal to 10"),
        (
            "[permissions]\ntoken_budget = -1\n",
            "token_budget': Input should be greater than or equal to 0",
        ),
    ):
        path = tmp_path / "c.toml"
        path.write_text(MINIMAL.format(sha="a" * 40) + text)
        with pytest.raises(UserInputError) as caught:
            load_contract(path)
        assert said in str(caught.value), caught.value


def test_an_integer_still_loads_where_a_number_belongs(tmp_path: Path) -> None:
    """TOML users write ``0`` for ``0.0``: a float field takes an integer."""
    path = tmp_path / "c.toml"
    path.write_text(
        MINIMAL.format(sha="a" * 40)
        + "[permissions]\ntime_budget_s = 120\ncost_budget_usd = 0\ntoken_budget = 5\n"
        + "[oracles]\ntimeout_s = 60\nrepeat = 3\n"
    )
    contract = load_contract(path)
    assert contract.permissions.time_budget_s == 120.0
    assert isinstance(contract.permissions.time_budget_s, float)
    assert contract.permissions.cost_budget_usd == 0.0
    assert contract.permissions.token_budget == 5
    assert (contract.oracles.timeout_s, contract.oracles.repeat) == (60.0, 3)
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text(
        "[autonomy]\nmargin = 0\nacceptance_floor = 1\n[gates]\nmin_failures = 3\n"
    )
    policy, _ = load_policy(policy_file)
    assert (policy.autonomy.margin, policy.autonomy.acceptance_floor) == (0.0, 1.0)
    assert isinstance(policy.autonomy.margin, float) and policy.gates.min_failures == 3


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '[gates]\nalpha = "0.05"\n',
            "key 'gates.alpha': \"0.05\" is not a number (write 0.05 without quotes)",
        ),
        ("[gates]\nmin_failures = true\n", "key 'gates.min_failures': true is not a number"),
        (
            "[autonomy]\nmin_paired_tasks = 10.5\n",
            "key 'autonomy.min_paired_tasks': 10.5 is not a whole number",
        ),
    ],
)
def test_a_number_written_wrong_in_a_policy_is_named(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    with pytest.raises(UserInputError) as caught:
        load_policy(path)
    message = str(caught.value)
    assert message.startswith(f"policy file {path}: {said}"), message
    assert message.endswith(
        "; fix the value; docs/report.md lists every key of a policy file with its default"
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '[usage]\ntokens = "100"\n',
            "key 'usage.tokens': \"100\" is not a number (write 100 without quotes)",
        ),
        ("[usage]\ncost_usd = true\n", "key 'usage.cost_usd': true is not a number"),
        ("[usage]\ntokens = 100.5\n", "key 'usage.tokens': 100.5 is not a whole number"),
        (
            '[[requirements]]\nclaim = "c"\nconfidence = "0.9"\n',
            "key 'requirements.0.confidence': \"0.9\" is not a number",
        ),
    ],
)
def test_a_number_written_wrong_in_a_scripted_agent_is_named(
    tmp_path: Path, text: str, said: str
) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(text)
    with pytest.raises(AgentSpecError) as caught:
        load_script(path)
    assert f"scripted agent file {path}: {said}" in str(caught.value), caught.value


def test_an_agents_usage_with_a_string_number_is_ignored_and_said(tmp_path: Path) -> None:
    """usage.json is JSON: ``"tokens": "100"`` is the agent's bad output, ignored, never summed."""
    (tmp_path / "usage.json").write_text(json.dumps({"tokens": "100", "cost_usd": 1}))
    found = read_agent_output(tmp_path)
    assert "usage" not in found
    assert "usage.json ignored: key 'tokens': \"100\" is not a number" in found["detail"]
    (tmp_path / "usage.json").write_text(json.dumps({"tokens": 100, "cost_usd": 1}))
    assert read_agent_output(tmp_path)["usage"].cost_usd == 1.0


def _evidence(root: Path, soft: dict[str, Any], duration: Any = 0.0) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (root / "examples" / "evidence" / "pure-parser-function.json").read_text()
    )
    data["soft"].update(soft)
    data["receipts"][0]["duration_s"] = duration
    return data


@pytest.mark.parametrize(
    ("soft", "duration", "said"),
    [
        (
            {"tokens": "10"},
            0.0,
            "key 'soft.tokens': \"10\" is not a number (write 10 without quotes)",
        ),
        ({"retries": True}, 0.0, "key 'soft.retries': true is not a number"),
        ({"changed_lines": 3.5}, 0.0, "key 'soft.changed_lines': 3.5 is not a whole number"),
        (
            {},
            "1.5",
            "key 'receipts.0.duration_s': \"1.5\" is not a number (write 1.5 without quotes)",
        ),
    ],
)
def test_a_number_written_wrong_in_evidence_exits_2_naming_the_key(
    root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    soft: dict[str, Any],
    duration: Any,
    said: str,
) -> None:
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps(_evidence(root, soft, duration)))
    capsys.readouterr()
    assert main(["decide", str(path)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"error: evidence file {path}: {said}") and err.count("\n") == 1, err


def test_evidence_with_integers_for_numbers_is_decided(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps(_evidence(root, {"review_minutes": 2, "wall_time_s": 0}, 0)))
    assert main(["decide", str(path), "--json"]) in (ExitCode.OK, ExitCode.NOT_ACCEPTED)
    assert "error" not in capsys.readouterr().err


_REVIEW = {
    "reviewer": "alice",
    "state": "approved",
    "patch_digest": "c" * 64,
    "at": "2026-01-05T09:00:00Z",
}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            {"reviews": [{**_REVIEW, "minutes": "5"}]},
            "key 'reviews.0.minutes': \"5\" is not a number (write 5 without quotes)",
        ),
        (
            {"metrics": {"substantive_rounds": 1.5}},
            "key 'metrics.substantive_rounds': 1.5 is not a whole number",
        ),
        (
            {"threads": [{"concern": "c", "resolved": True, "line": True}]},
            "key 'threads.0.line': true is not a number",
        ),
    ],
)
def test_a_number_written_wrong_in_a_review_file_is_named(
    tmp_path: Path, change: dict[str, Any], said: str
) -> None:
    path = tmp_path / "reviews.json"
    path.write_text(json.dumps({"schema_version": 1, "reviews": [_REVIEW], **change}))
    assert load_reviews(_valid(tmp_path)).reviews[0].minutes == 5.0
    with pytest.raises(EvidenceError) as caught:
        load_reviews(path)
    assert f"review file {path}: {said}" in str(caught.value), caught.value


def _valid(tmp_path: Path) -> Path:
    path = tmp_path / "valid.json"
    path.write_text(json.dumps({"schema_version": 1, "reviews": [{**_REVIEW, "minutes": 5}]}))
    return path


# --- The hint says what to fix: the key, or the value under a right key -------------------------


def test_the_contract_hint_says_fix_the_key_for_an_unknown_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _run_contract(tmp_path, capsys, "[permissions]\ntime_budgt_s = 120\n")
    assert "unknown key 'permissions.time_budgt_s'" in err
    assert err.rstrip().endswith(
        "; fix the key and run again; `repogate schema contract` prints every valid key and what "
        "it takes"
    ), err


def test_the_contract_hint_says_fix_the_value_for_a_right_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _run_contract(tmp_path, capsys, '[oracles]\nrepeat = 20\ndifferential = "always"\n')
    assert "2 problems: " in err and "; fix the values and run again; " in err, err
    assert "fix the key" not in err


def test_the_contract_hint_says_both_when_both_are_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _run_contract(tmp_path, capsys, '[oracles]\nrepeat = "2"\nrepaet = 2\n')
    assert "; fix the keys and values and run again; " in err, err


def test_the_policy_hint_says_fix_the_key_or_the_value(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    for text, fix in (
        ("[autonomy]\nmargn = 0.1\n", "fix the key"),
        ("[autonomy]\nmargin = 1.5\n", "fix the value"),
        ("version = 2\n", "fix the value"),
        ("version = 2\n[autonomy]\nmargn = 0.1\n", "fix the keys and values"),
    ):
        path.write_text(text)
        with pytest.raises(UserInputError) as caught:
            load_policy(path)
        assert (
            caught.value.fix
            == f"{fix}; docs/report.md lists every key of a policy file with its default"
        ), text


class _Shape(BaseModel, extra="forbid"):
    name: str
    count: StrictInt = 0


@pytest.mark.parametrize(
    ("data", "fix"),
    [
        ({}, "fix the key"),  # missing: the key is the problem
        ({"name": "a", "cuont": 1}, "fix the key"),
        ({"cuont": 1}, "fix the keys"),
        ({"name": "a", "count": "1"}, "fix the value"),
        ({"name": 1, "count": "1"}, "fix the values"),
        ({"count": "1"}, "fix the keys and values"),
    ],
)
def test_what_to_fix_tells_keys_from_values(data: dict[str, Any], fix: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Shape.model_validate(data)
    assert what_to_fix(caught.value) == fix


class _Numbers(BaseModel):
    whole: StrictInt = 0
    number: StrictFloat = 0.0


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"whole": " 7 "}, "key 'whole': \" 7 \" is not a number (write 7 without quotes)"),
        ({"whole": "1_000"}, "key 'whole': \"1_000\" is not a number (write 1000 without quotes)"),
        ({"whole": "1e3"}, "key 'whole': \"1e3\" is not a number (write 1000 without quotes)"),
        ({"whole": "0x1f"}, "key 'whole': \"0x1f\" is not a number (write a whole number without"),
        ({"whole": "1" * 5000}, "is not a number (write a whole number without quotes)"),
        (
            {"whole": 1e20},
            "key 'whole': 1e+20 is not an integer (write its digits, without an exponent)",
        ),
        ({"whole": float("inf")}, "key 'whole': Infinity is not a whole number"),
        ({"whole": [1]}, "key 'whole': [1] is not a whole number"),
        (
            {"number": "nan"},
            "key 'number': \"nan\" is not a number (write a number without quotes)",
        ),
        ({"number": "-2.5e-3"}, "key 'number': \"-2.5e-3\" is not a number (write -2.5e-3 without"),
        ({"number": {"a": 1}}, "key 'number': {\"a\": 1} is not a number"),
    ],
)
def test_a_number_written_wrong_is_said_as_written(data: dict[str, Any], said: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Numbers.model_validate(data)
    assert said in every_problem(caught.value, _Numbers)


# --- A format version is the integer 1: ``true`` and ``1.0`` equal 1 in Python, not in the file ----


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("true", "key 'schema_version': true is not a number (write a whole number, not true"),
        ("1.0", "key 'schema_version': 1.0 is not an integer (write 1, without the decimal point)"),
        ('"1"', "key 'schema_version': \"1\" is not a number (write 1 without quotes)"),
    ],
)
def test_a_contracts_schema_version_written_as_true_or_a_float_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, said: str
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f"schema_version = {written}\n" + MINIMAL.format(sha="a" * 40))
    with pytest.raises(UserInputError) as caught:
        load_contract(path)
    assert said in str(caught.value), caught.value
    path.write_text("schema_version = 1\n" + MINIMAL.format(sha="a" * 40))
    assert load_contract(path).schema_version == 1


@pytest.mark.parametrize("written", ["true", "1.0"])
def test_a_policys_version_written_as_true_or_a_float_is_refused(
    tmp_path: Path, written: str
) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(f"version = {written}\n")
    with pytest.raises(UserInputError) as caught:
        load_policy(path)
    assert str(caught.value).startswith(f"policy file {path}: key 'version': {written} is not"), (
        caught.value
    )


@pytest.mark.parametrize("written", [True, 1.0])
def test_a_json_files_schema_version_written_as_true_or_a_float_is_refused(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], written: Any
) -> None:
    """Evidence for ``repogate decide`` and review evidence are JSON: ``true`` and ``1.0`` there."""
    reviews = tmp_path / "reviews.json"
    reviews.write_text(json.dumps({"schema_version": written, "reviews": [_REVIEW]}))
    with pytest.raises(EvidenceError) as caught:
        load_reviews(reviews)
    assert "key 'schema_version': " in str(caught.value), caught.value
    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps({**_evidence(root, {}), "schema_version": written}))
    capsys.readouterr()
    assert main(["decide", str(evidence)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"error: evidence file {evidence}: key 'schema_version': "), err


# --- pydantic's words a TOML or JSON user does not have: tuple, dictionary, "Value error, " ------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '[permissions]\neditable = "calc/**"\n',
            'key \'permissions.editable\': "calc/**" is not a list (write ["calc/**"])',
        ),
        (
            '[oracles]\nfail_to_pass = "tests/test_a.py::test_x"\n',
            "key 'oracles.fail_to_pass': \"tests/test_a.py::test_x\" is not a list (write "
            '["tests/test_a.py::test_x"])',
        ),
        (
            "[permissions]\nforbidden = 3\n",
            "key 'permissions.forbidden': 3 is not a list (write [3])",
        ),
        ('cohort = "x"\n', "key 'cohort': \"x\" is not a table (write key = value pairs)"),
    ],
)
def test_a_list_or_table_written_wrong_is_said_in_toml_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    """pydantic said "Input should be a valid tuple" (or dictionary): words TOML does not have."""
    minimal = MINIMAL.format(sha="a" * 40)  # a top-level key goes before its tables
    path = tmp_path / "c.toml"
    path.write_text(minimal + text if text.startswith("[") else text + minimal)
    with pytest.raises(UserInputError) as caught:
        load_contract(path)
    assert f": {said}" in str(caught.value), caught.value
    assert "valid tuple" not in str(caught.value) and "dictionary" not in str(caught.value)


def test_a_validators_message_is_said_without_pydantics_prefix(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(MINIMAL.format(sha="d" * 48))
    with pytest.raises(UserInputError) as caught:
        load_contract(path)
    assert "key 'base_commit': " in str(caught.value), caught.value
    assert "Value error" not in str(caught.value)


# --- A version this repogate does not read: the version found, those read, what to do ------------


def _unread(version: int, key: str = "schema_version") -> str:
    return (
        f"key '{key}': version {version} is not one this repogate reads (it reads 1): write 1, or "
        f"use a repogate that reads version {version}"
    )


@pytest.mark.parametrize("version", [99, 2, 0, -1])
def test_a_contract_of_a_version_not_read_says_the_version_and_those_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: int
) -> None:
    """``schema_version = 99`` said only pydantic's "Input should be 1"."""
    path = tmp_path / "c.toml"
    path.write_text(f"schema_version = {version}\n" + MINIMAL.format(sha="a" * 40))
    capsys.readouterr()
    assert main(["run", str(path), "--agent", "null", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: contract {path}: {_unread(version)}; fix the value"), err
    assert err.count("\n") == 1 and "Input should be" not in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("version", [99, 2])
def test_every_file_of_a_version_not_read_says_the_version_and_those_read(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], version: int
) -> None:
    """The policy's ``version``, review evidence, a run's manifest: each through the one type."""
    policy = tmp_path / "policy.toml"
    policy.write_text(f"version = {version}\n")
    with pytest.raises(UserInputError) as caught:
        load_policy(policy)
    assert str(caught.value).startswith(f"policy file {policy}: {_unread(version, 'version')};")
    reviews = tmp_path / "reviews.json"
    reviews.write_text(json.dumps({"schema_version": version, "reviews": [_REVIEW]}))
    with pytest.raises(EvidenceError) as said:
        load_reviews(reviews)
    assert _unread(version) in str(said.value), said.value
    evidence = tmp_path / "evidence.json"  # `decide` checks the version before anything else
    evidence.write_text(json.dumps({**_evidence(root, {}), "schema_version": version}))
    capsys.readouterr()
    assert main(["decide", str(evidence)]) == ExitCode.USAGE
    assert capsys.readouterr().err == (
        f"error: evidence file {evidence} has schema_version {version}; this repogate reads "
        "schema_version 1; `repogate schema evidence` prints it\n"
    )
    with pytest.raises(ValidationError) as invalid:  # a record repogate writes: the same words
        Selection.model_validate(
            {"schema_version": version, "source": "mined", "origin": "o", "rule": "r", "repeats": 1}
        )
    assert every_problem(invalid.value, Selection) == _unread(version)


def test_a_run_manifest_of_a_version_not_read_says_the_version_and_those_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file repogate writes: ``report`` refuses it, ``show`` says it beside the attempt."""
    run = tmp_path / "run"
    one_attempt_run(run, "bubblewrap", SoftMetrics(wall_time_s=1.0))
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "schema_version": 99}))
    capsys.readouterr()
    assert main(["report", str(run)]) == ExitCode.USAGE
    assert capsys.readouterr().err.startswith(
        f"error: {run / 'manifest.json'} is not a run manifest this repogate reads "
        f"({_unread(99)}); "
    )
    assert main(["show", str(run), "1"]) == ExitCode.OK
    assert f"run's isolation: not known ({run / 'manifest.json'}" in capsys.readouterr().out
