"""A run folder resumed with a changed contract names what changed, not only the contract.

It said ``its contracts differ (t1)``: the user had to diff the contract against a copy they may
not have kept. The run keeps each contract's policy (the JSON its digest is taken over), and the
refusal names the keys that changed with both values, at most three, the rest counted.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from repogate.contract import TransitionContract, load_contract
from repogate.errors import RunDirError
from repogate.store import RunInputs, Store

BASE = """
id = "{id}"
repo = "repo"
base_commit = "{sha}"
[requirement]
statement = "parse bounded config strings"
[permissions]
time_budget_s = 120
"""
FIX = (
    "give the same contracts to resume or add agents; give a new --out folder, or delete this "
    "one to start over"
)


def _contract(tmp_path: Path, cid: str = "t1", text: str = "") -> TransitionContract:
    """Contract ``cid``: :data:`BASE` with ``text`` appended (a later table wins nothing: TOML
    refuses a table twice, so ``text`` holds only tables BASE has not)."""
    path = tmp_path / f"{cid}-{hashlib.sha256(text.encode()).hexdigest()[:8]}.toml"
    path.write_text(BASE.format(id=cid, sha="a" * 40) + text)
    return load_contract(path)


def _inputs(*contracts: TransitionContract) -> RunInputs:
    return RunInputs(
        contracts={c.id: c.policy_digest() for c in contracts},
        policies={c.id: c.policy_json() for c in contracts},
    )


def _refusal(run_dir: Path, first: RunInputs, then: RunInputs) -> str:
    """Make the run with ``first``, resume it with ``then``; return the refusal."""
    with Store.create(run_dir, first):
        pass
    with pytest.raises(RunDirError) as caught, Store.create(run_dir, then):
        pass
    prefix = f"{run_dir} holds a run of other inputs: its contracts differ ("
    message = str(caught.value)
    assert message.startswith(prefix) and message.endswith(f"); {FIX}"), message
    return message[len(prefix) : -len(f"); {FIX}")]


def test_a_changed_value_is_named_with_both_values(tmp_path: Path) -> None:
    before = _contract(tmp_path)
    after = load_contract(
        _written(tmp_path, BASE.replace("time_budget_s = 120", "time_budget_s = 60"))
    )
    assert _refusal(tmp_path / "run", _inputs(before), _inputs(after)) == (
        "t1: permissions.time_budget_s 60.0 here, 120.0 in the run"
    )


def test_a_long_value_is_named_by_its_key_and_many_keys_are_counted(tmp_path: Path) -> None:
    before = _contract(tmp_path)
    text = BASE.replace("parse bounded config strings", "parse bounded config strings, and more")
    after = load_contract(
        _written(
            tmp_path,
            text.replace("time_budget_s = 120", "time_budget_s = 60\nnetwork = true")
            + "[oracles]\nrepeat = 3\n",
        )
    )
    assert _refusal(tmp_path / "run", _inputs(before), _inputs(after)) == (
        "t1: oracles.repeat 3 here, 1 in the run, permissions.network true here, false in the "
        "run, permissions.time_budget_s 60.0 here, 120.0 in the run and 1 more"
    )


def test_new_missing_and_changed_contracts_are_each_named(tmp_path: Path) -> None:
    one, two, three = (_contract(tmp_path, cid) for cid in ("t1", "t2", "t3"))
    changed = _contract(tmp_path, "t2", "[oracles]\nrepeat = 2\n")
    four = _contract(tmp_path, "t4")
    said = _refusal(tmp_path / "run", _inputs(one, two, three), _inputs(one, changed, four))
    assert said == "t2: oracles.repeat 2 here, 1 in the run; t3: not given; t4: new here"


def test_more_than_three_contracts_are_counted(tmp_path: Path) -> None:
    before = [_contract(tmp_path, f"t{n}") for n in range(5)]
    after = [_contract(tmp_path, f"t{n}", "[oracles]\nrepeat = 2\n") for n in range(5)]
    said = _refusal(tmp_path / "run", _inputs(*before), _inputs(*after))
    assert said.endswith("; t2: oracles.repeat 2 here, 1 in the run; and 2 more contracts")


def test_a_new_repogate_version_is_named(tmp_path: Path) -> None:
    """The digest covers repogate's version: a run of another version is named so."""
    contract = _contract(tmp_path)
    policy = json.loads(contract.policy_json())
    policy["evaluator"] = "0.0.1"
    older = json.dumps(policy, sort_keys=True, separators=(",", ":"))
    recorded = RunInputs(
        contracts={"t1": hashlib.sha256(older.encode()).hexdigest()}, policies={"t1": older}
    )
    said = _refusal(tmp_path / "run", recorded, _inputs(contract))
    assert said.startswith("t1: repogate's version \"") and said.endswith(
        '" here, "0.0.1" in the run'
    )


def test_a_run_made_before_policies_were_kept_names_the_contract(tmp_path: Path) -> None:
    """A run folder of an older repogate holds digests only: the contract is named, as before."""
    before, after = _contract(tmp_path), _contract(tmp_path, "t1", "[oracles]\nrepeat = 2\n")
    recorded = RunInputs(contracts={"t1": before.policy_digest()})
    assert _refusal(tmp_path / "run", recorded, _inputs(after)) == "t1: changed"
    with Store.create(tmp_path / "same", recorded):  # and it resumes with the same contract
        pass
    with Store.create(tmp_path / "same", _inputs(before)) as store:
        assert store.inputs.contracts == {"t1": before.policy_digest()}


def _written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / f"c-{hashlib.sha256(text.encode()).hexdigest()[:8]}.toml"
    path.write_text(text.format(id="t1", sha="a" * 40))
    return path
