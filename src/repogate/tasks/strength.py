"""Oracle strength: mutation analysis of a task's reference patch, graded by the task's own tests.

A task's tests can only reject a wrong patch they can tell from the right one. Each mutant of the
reference's added lines (:mod:`repogate.tasks._mutants`, mutmut's operators) is run as a
candidate through the real pipeline (``repogate.runner.run``: sandboxed, guarded, the graded
FAIL_TO_PASS and PASS_TO_PASS tests and the base-passing regression set), under the hermetic
profile with the differential oracle off and no sentinel: a mutant is *killed* when
``focused_tests_passed`` or ``regression_tests_passed`` fails, *survived* when it is accepted.
Mutants that parse to the reference's own AST are *equivalent* and not run; mutants that do not
compile are *invalid*; a survivor that changes only the text of a string passed to a call (a
message) or of a string inside a type annotation (a forward reference) is *equivalent-looking*; an attempt that errored or was rejected by another check is an *error*
with its reason. None of these counts in the score.

The mutation score is killed / (killed + survived). A task is ``weak_oracle`` when its score is
below :data:`WEAK_BELOW` (0.8: fewer than four in five mutants of the lines the fix itself adds
are caught), with at least :data:`MIN_MUTANTS` scored mutants; with fewer it is not said. STING
(arXiv 2604.01518) found a surviving mutant of the reference in 77% of SWE-bench Verified
instances; the threshold is this project's choice, recorded with every result.

Cost: every mutant is one attempt; at most ``budget`` run per task (evenly spread over the mutants
made). The wall seconds recorded are the whole measurement's: the reference's tree, making every
mutant (libcst and ``ast`` over each whole mutated file: on a large module this is most of it),
and the attempts; the making alone is recorded too (``making_seconds``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import tomli_w

from repogate import clock, git
from repogate._model import FrozenModel, SchemaVersion
from repogate.agent_spec import parse_agent_spec
from repogate.contract import Sentinel, TransitionContract
from repogate.oracles.functions import is_test_path
from repogate.patches import load_patch, touched_paths
from repogate.runner import PlannedAttempt, RunOptions, run
from repogate.store import AttemptRecord
from repogate.tasks._mutants import Mutant, mutants_of, spread

WEAK_BELOW = 0.8
"""A mutation score below this makes the task ``weak_oracle``."""
MIN_MUTANTS = 3
"""Fewer scored mutants than this: oracle strength is not said (``weak_oracle`` unknown)."""
DEFAULT_BUDGET = 20
"""Mutants run per task unless told otherwise."""
KILLING = ("focused_tests_passed", "regression_tests_passed")

MutantStatus = Literal["killed", "survived", "equivalent-looking", "equivalent", "invalid", "error"]


class MutantResult(FrozenModel):
    """One mutant and what the task's tests made of it.

    Attributes:
        number: its index among the mutants made (stable for one reference).
        path: the file mutated; line: the line (after the reference).
        operator: the operator's name (mutmut's, or ``_statement_removed``/``_return_swapped``).
        before: the code replaced; after: what replaced it.
        status: ``killed``, ``survived``, ``equivalent-looking`` (survived, and changes only a
            string's text), ``equivalent``, ``invalid`` or ``error``.
        reason: the failed checks (killed), or why it was not scored.
        diff: the mutant's diff against the reference (survivors only).
    """

    number: int
    path: str
    line: int
    operator: str
    before: str
    after: str
    status: MutantStatus
    reason: str = ""
    diff: str = ""


class Strength(FrozenModel):
    """A task's oracle strength, as ``tasks strength`` records it (``strength.jsonl``).

    Attributes:
        task_id: the contract's id.
        made: mutants made on the reference's added lines (every operator, every node).
        run: mutants run as candidates (at most the budget).
        killed, survived, equivalent, invalid, errors: counts by status.
        equivalent_looking: survivors that change only a string's text (a message), kept apart.
        score: killed / (killed + survived); None when nothing was scored.
        weak_oracle: ``score < threshold`` with at least ``MIN_MUTANTS`` scored; None when not said.
        threshold: :data:`WEAK_BELOW` as used.
        seconds: wall seconds of the whole measurement (the tree, making the mutants, the
            attempts), whatever was run.
        making_seconds: the part of ``seconds`` spent before any attempt: exporting the
            reference's tree, making every mutant and telling the equivalent and invalid apart.
        note: why nothing was run (no reference, no Python line added), else "".
        mutants: each mutant run or kept apart.
    """

    schema_version: SchemaVersion = 1
    task_id: str
    made: int = 0
    run: int = 0
    killed: int = 0
    survived: int = 0
    equivalent_looking: int = 0
    equivalent: int = 0
    invalid: int = 0
    errors: int = 0
    score: float | None = None
    weak_oracle: bool | None = None
    threshold: float = WEAK_BELOW
    seconds: float = 0.0
    making_seconds: float = 0.0
    note: str = ""
    mutants: tuple[MutantResult, ...] = ()

    @property
    def cohort_tag(self) -> str:
        """``yes``, ``no`` or ``unknown``: the ``weak_oracle`` cohort tag."""
        return {True: "yes", False: "no", None: "unknown"}[self.weak_oracle]


def _compiles(mutant: Mutant) -> bool:
    try:
        compile(mutant.text, mutant.path, "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def _result(
    mutant: Mutant, number: int, status: MutantStatus, reason: str = "", diff: str = ""
) -> MutantResult:
    return MutantResult(
        number=number,
        path=mutant.path,
        line=mutant.line,
        operator=mutant.operator,
        before=mutant.before,
        after=mutant.after,
        status=status,
        reason=reason,
        diff=diff,
    )


def _judge(record: AttemptRecord) -> tuple[MutantStatus, str]:
    decision = record.decision
    if decision is None:
        return "error", f"the attempt crashed: {record.crash}"
    if decision.accepted:
        return "survived", ""
    killing = [n for n in decision.failed if n in KILLING]
    if killing:
        return "killed", ", ".join(killing)
    said = [*decision.failed, *(f"{n} (error)" for n in decision.errored)]
    return "error", "not scored: " + ", ".join(said)


def _graded_contract(contract: TransitionContract) -> TransitionContract:
    """The contract as mutants are graded: hermetic, no differential oracle, no sentinel."""
    oracles = contract.oracles.model_copy(update={"differential": "off"})
    return contract.model_copy(
        update={"profile": "hermetic", "oracles": oracles, "sentinel": Sentinel()}
    )


def measure(
    contract: TransitionContract,
    source_label: str,
    work: Path,
    options: RunOptions,
    *,
    budget: int = DEFAULT_BUDGET,
    say: Callable[[str], None] | None = None,
) -> Strength:
    """Measure one task's oracle strength.

    Args:
        contract: the task (with a reference patch).
        source_label: where the contract came from (the run's record).
        work: a folder for the predictions file and the mutants' run store (made).
        options: where the run goes (``options.out``) and its caches.
        budget: at most this many mutants run.
        say: told one line per mutant as it is judged.

    Raises:
        UserInputError: the repository or base commit cannot be found (as ``repogate run``).
    """
    if contract.reference is None:
        return Strength(task_id=contract.id, note="no reference patch: nothing to mutate")
    started = clock.monotonic()
    source = git.resolve_source(contract.repo, contract.base_dir, options.repo_cache)
    reference = load_patch(contract.reference, contract, source)
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="repogate-mutants-", dir=work) as tmp:
        tree = Path(tmp) / "tree"
        git.export_tree(source, contract.base_commit, tree)
        git.apply_patch(tree, reference)
        git.commit_all(tree, "reference")
        paths = [p for p in touched_paths(reference) if p.endswith(".py") and not is_test_path(p)]
        texts = {p: (tree / p).read_text(encoding="utf-8") for p in paths if (tree / p).is_file()}
        made = mutants_of(texts, reference)
        if not made:
            spent = round(clock.monotonic() - started, 3)
            return Strength(
                task_id=contract.id,
                note="the reference adds no mutable Python line",
                seconds=spent,
                making_seconds=spent,
            )
        numbered = list(enumerate(made))
        kept_apart = [
            _result(
                m,
                n,
                "equivalent" if m.equivalent else "invalid",
                "parses to the reference's own AST" if m.equivalent else "does not compile",
            )
            for n, m in numbered
            if m.equivalent or not _compiles(m)
        ]
        apart = {r.number for r in kept_apart}
        chosen = spread([(n, m) for n, m in numbered if n not in apart], budget)
        rows, diffs = [], {}
        for n, mutant in chosen:
            (tree / mutant.path).write_text(mutant.text, encoding="utf-8")
            mutated = git.commit_all(tree, f"mutant {n}")
            rows.append(
                {
                    "instance_id": contract.id,
                    "model_name_or_path": f"mutant-{n:04d}",
                    "model_patch": git.diff_binary(tree, contract.base_commit, mutated).decode(),
                }
            )
            diffs[n] = git.diff_binary(tree, "HEAD~1", "HEAD").decode()
            (tree / mutant.path).write_text(texts[mutant.path], encoding="utf-8")
            git.commit_all(tree, "reference again")
    making = round(clock.monotonic() - started, 3)
    if not chosen:
        return _summary(contract.id, len(made), kept_apart, making, making)
    predictions = work / "mutants.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    graded = _graded_contract(contract)
    plans = [
        PlannedAttempt(
            graded,
            source_label,
            parse_agent_spec(f"predictions:{predictions}#{r['model_name_or_path']}"),
        )
        for r in rows
    ]
    records = run(plans, options)
    seconds = round(clock.monotonic() - started, 3)
    by_model = {r.agent.rsplit("#", 1)[-1]: r for r in records}
    results = list(kept_apart)
    for n, mutant in chosen:
        record = by_model.get(f"mutant-{n:04d}")
        status, reason = _judge(record) if record is not None else ("error", "no attempt record")
        if status == "survived" and mutant.text_only:
            status, reason = "equivalent-looking", "survived; changes only a string's text"
        survived = status in ("survived", "equivalent-looking")
        results.append(_result(mutant, n, status, reason, diffs[n] if survived else ""))
        if say is not None:
            say(
                f"  mutant {n} {mutant.path}:{mutant.line} {mutant.before!r} -> {mutant.after!r}: {status}"
            )
    return _summary(contract.id, len(made), results, seconds, making, run_count=len(chosen))


def _summary(
    task_id: str,
    made: int,
    results: list[MutantResult],
    seconds: float,
    making_seconds: float,
    run_count: int = 0,
) -> Strength:
    count = {
        s: sum(r.status == s for r in results)
        for s in ("killed", "survived", "equivalent-looking", "equivalent", "invalid", "error")
    }
    scored = count["killed"] + count["survived"]
    score = round(count["killed"] / scored, 4) if scored else None
    weak = None if scored < MIN_MUTANTS or score is None else score < WEAK_BELOW
    return Strength(
        task_id=task_id,
        made=made,
        run=run_count,
        killed=count["killed"],
        survived=count["survived"],
        equivalent_looking=count["equivalent-looking"],
        equivalent=count["equivalent"],
        invalid=count["invalid"],
        errors=count["error"],
        score=score,
        weak_oracle=weak,
        seconds=seconds,
        making_seconds=making_seconds,
        mutants=tuple(sorted(results, key=lambda r: r.number)),
    )


def remove_work(work: Path) -> None:
    """Remove a strength run's scratch folder (the predictions file and mutants' trees)."""
    shutil.rmtree(work, ignore_errors=True)


STRENGTH_FILE = "strength.jsonl"
"""A task set's oracle-strength records, one :class:`Strength` per task, appended as each finishes."""


def tag_contract(path: Path, strength: Strength) -> None:
    """Write ``weak_oracle`` and ``mutation_score`` into the contract's ``[cohort]`` table.

    The file is rewritten whole (``tomli_w``, as task supply writes contracts), atomically.
    """
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    cohort = dict(data.get("cohort", {}))
    cohort["weak_oracle"] = strength.cohort_tag
    cohort["mutation_score"] = "unknown" if strength.score is None else f"{strength.score:.2f}"
    data["cohort"] = cohort
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(tomli_w.dumps(data), encoding="utf-8")
    tmp.replace(path)


def done_in(root: Path) -> dict[str, Strength]:
    """The strength records already in the task set at ``root``, by task id (resume)."""
    path = root / STRENGTH_FILE
    if not path.is_file():
        return {}
    rows = [Strength.model_validate_json(line) for line in path.read_text().splitlines() if line]
    return {r.task_id: r for r in rows}


def append(root: Path, strength: Strength) -> None:
    """Append one record to the task set's ``strength.jsonl`` (one line, flushed)."""
    with (root / STRENGTH_FILE).open("a", encoding="utf-8") as handle:
        handle.write(strength.model_dump_json() + "\n")
        handle.flush()
