"""The findings an injected task's receipt records (issue 24): authoritative source, regeneration."""

from __future__ import annotations

from functools import partial

import pytest

from repogate.contract import Derivation
from repogate.gates.injection import injection_findings
from repogate.git import ChangedPath
from repogate.receipt import Check, Observation, Receipt, Status, observe
from repogate.vocabulary import CheckName, DerivationKind, GateId

GATE_OF: dict[CheckName, GateId] = {
    "oracle_untouched": "I",
    "focused_tests_passed": "V",
    "dependency_policy_passed": "V-dependencies",
    "generated_artifacts_fresh": "V-generated",
}


def _receipts(**statuses: Status) -> list[Receipt]:
    made = []
    for name, status in statuses.items():
        check = Check.model_validate({"name": name, "status": status})
        made.append(observe(GATE_OF[check.name], "s", partial(Observation, checks=(check,))))
    return made


def _derivation(kind: DerivationKind, trap: tuple[str, ...], source: tuple[str, ...]) -> Derivation:
    return Derivation(
        kind=kind,
        parent_id="t",
        parent_base_commit="a" * 40,
        trap_paths=trap,
        authoritative_paths=source,
    )


def _changed(*paths: str) -> list[ChangedPath]:
    return [ChangedPath("M", p, None, is_symlink=False) for p in paths]


TRAP = _derivation("generated-file-trap", ("client_gen.py",), ("spec/**", "tools/gen.py"))


def test_generated_trap_edited_by_hand_is_not_the_source_and_does_not_survive() -> None:
    seen = injection_findings(
        TRAP, _changed("client_gen.py"), _receipts(generated_artifacts_fresh="failed")
    )
    assert seen.checks == ()
    assert seen.details["authoritative_source_found"] is False
    assert seen.details["survives_regeneration"] is False
    assert seen.details["trap_paths_edited"] == ["client_gen.py"]


def test_generated_trap_fixed_at_the_source_survives() -> None:
    changed = _changed("spec/retry.json", "client_gen.py")
    seen = injection_findings(TRAP, changed, _receipts(generated_artifacts_fresh="passed"))
    assert seen.details["authoritative_source_found"] is True
    assert seen.details["survives_regeneration"] is True
    assert seen.details["authoritative_paths_edited"] == ["spec/retry.json"]


def test_unobserved_freshness_is_unknown_not_true() -> None:
    seen = injection_findings(TRAP, _changed("spec/retry.json"), [])
    assert seen.details["survives_regeneration"] is None


@pytest.mark.parametrize(
    ("dependency", "changed", "found"),
    [
        ("passed", ("uv.lock", "pyproject.toml"), True),
        ("failed", ("uv.lock",), False),
        (None, (), False),
    ],
)
def test_stale_lockfile_is_found_only_when_the_tool_wrote_it(
    dependency: Status | None, changed: tuple[str, ...], found: bool
) -> None:
    """A hand edit fails the dependency policy; a lockfile left stale is not found either."""
    lock = _derivation("stale-lockfile", (), ("uv.lock",))
    receipts = _receipts(dependency_policy_passed=dependency) if dependency else []
    seen = injection_findings(lock, _changed(*changed), receipts)
    assert seen.details["authoritative_source_found"] is found
    assert seen.details["survives_regeneration"] is found


def test_irrelevant_test_edited_is_not_found_even_when_focused_tests_pass() -> None:
    test = _derivation("irrelevant-failing-test", ("tests/test_locale_amounts.py",), ())
    passing = _receipts(focused_tests_passed="passed")
    edited = injection_findings(test, _changed("tests/test_locale_amounts.py", "a.py"), passing)
    clean = injection_findings(test, _changed("a.py"), passing)
    assert edited.details["authoritative_source_found"] is False
    assert clean.details["authoritative_source_found"] is True


def test_misleading_comment_is_decided_by_the_focused_tests() -> None:
    comment = _derivation("misleading-comment", (), ())
    failed = injection_findings(comment, _changed("a.py"), _receipts(focused_tests_passed="failed"))
    assert failed.details["authoritative_source_found"] is False
