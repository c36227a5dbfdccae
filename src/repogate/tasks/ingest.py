"""Turn candidates into a task set: validate each once, write its contract, keep every rejection.

Import (:mod:`repogate.tasks.swebench`) and mining (:mod:`repogate.tasks.mine`) both produce
:class:`Candidate` values (a draft contract with no ids, or SWE-bench's declared ids, plus its
patch files) or, for an instance that cannot even be drafted, a ready :class:`RejectedEntry`.
For each one not yet finished in the task set, in order:

1. write the draft contract (and its patch files) into ``contracts/<id>/``;
2. :func:`repogate.tasks.validate.check_states`: patches apply, environment builds, the touched
   test files run N times on each state, ids confirmed or derived, flaky tests left out;
3. rewrite the contract with the graded ids and their criteria;
4. run the gold agent through the real pipeline (:func:`repogate.runner.run`) into
   ``validation/<id>/``: the reference must be accepted under the contract's hermetic checks;
5. append the task to ``tasks.jsonl``, or the candidate to ``rejected.jsonl`` with its reason
   (its contract folder is then removed).

A candidate whose checks crash is rejected as ``evaluator_error`` with the message; the rest go on.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomli_w

from repogate import clock, git
from repogate._counted import counted
from repogate._folders import remove_if_empty
from repogate._interrupted import interrupt_came
from repogate._logs import keep_log
from repogate.agent_spec import GoldSpec
from repogate.contract import Sentinel, TransitionContract, load_contract
from repogate.errors import ContractError, UserInputError
from repogate.runner import PlannedAttempt, RunOptions, default_cache, run
from repogate.tasks.taskset import CONTRACT_NAME, RejectedEntry, TaskEntry, TaskSet
from repogate.tasks.validate import CheckConfig, Rejected, Validation, check_states
from repogate.vocabulary import is_task_id


@dataclass(frozen=True)
class Candidate:
    """A candidate task before validation.

    Attributes:
        id: the contract id.
        source: where it came from (kept in the task set), e.g. ``{"instance": ..., "file": ...}``.
        contract: the draft contract as TOML data (``fail_to_pass`` empty to derive the ids).
        files: files written beside the contract (patches of an imported instance), name -> bytes.
    """

    id: str
    source: dict[str, str]
    contract: dict[str, Any]
    files: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class IngestOptions:
    """How candidates are validated.

    Attributes:
        repo_cache: local mirrors of repository URLs.
        repeats: runs of each state per candidate.
        cache_dir: the environment cache root (default ``$REPOGATE_CACHE``).
        gold_check: run the gold attempt through the pipeline (the hermetic check).
        relabel: grade a declared FAIL_TO_PASS id passing at the base in every run as
            PASS_TO_PASS when another fails there (the import of SWE-bench instances;
            :attr:`repogate.tasks.validate.CheckConfig.relabel_passing_fail_to_pass`).
    """

    repo_cache: Path | None = None
    repeats: int = 1
    cache_dir: Path | None = None
    gold_check: bool = True
    relabel: bool = False


def with_timeout(
    items: Iterable[Candidate | RejectedEntry], seconds: float | None
) -> Iterator[Candidate | RejectedEntry]:
    """Yield ``items`` with each draft's test timeout (``oracles.timeout_s``) set to ``seconds``.

    A test that hangs at the base (the bug it checks is a hang) then costs ``seconds`` per run,
    and the candidate is rejected as ``timeout``; None keeps the contract default.
    """
    for item in items:
        if seconds is None or isinstance(item, RejectedEntry):
            yield item
            continue
        oracles = {**item.contract.get("oracles", {}), "timeout_s": seconds}
        yield replace(item, contract={**item.contract, "oracles": oracles})


Report = Callable[[str, str], None]
"""Called with (candidate id, outcome) after each candidate: ``validated`` or the reason."""


def _write_contract(folder: Path, data: Mapping[str, Any]) -> Path:
    path = folder / CONTRACT_NAME
    tmp = folder / f"{CONTRACT_NAME}.tmp"
    tmp.write_text(tomli_w.dumps(dict(data)), encoding="utf-8")
    tmp.replace(path)
    return path


def with_ids(data: Mapping[str, Any], checked: Validation) -> dict[str, Any]:
    """Return the draft contract data with the graded ids and the criteria that link them.

    R1 holds FAIL_TO_PASS (stated; source from the draft's first criterion, else ``issue``), R2
    PASS_TO_PASS (implicit, ``compatibility``); ids left out of grading are named in the draft's
    open questions, so the contract says what was dropped and why.
    """
    out = dict(data)
    oracles = dict(out.get("oracles", {}))
    oracles["fail_to_pass"] = list(checked.fail_to_pass)
    oracles["pass_to_pass"] = list(checked.pass_to_pass)
    out["oracles"] = oracles
    requirement = dict(out["requirement"])
    criteria = list(requirement.get("criteria", []))
    first = (
        dict(criteria[0]) if criteria else {"id": "R1", "claim": "the change", "source": "issue"}
    )
    first["oracles"] = list(checked.fail_to_pass)
    rest = [
        {
            "id": "R2",
            "claim": "tests that passed before the change still pass",
            "source": "compatibility",
            "kind": "implicit",
            "oracles": list(checked.pass_to_pass),
        }
    ]
    requirement["criteria"] = [first, *(rest if checked.pass_to_pass else [])]
    notes = [f"{t}: left out of grading ({why})" for t, why in sorted(checked.dropped.items())]
    runs = f"{checked.repeats} of {counted(checked.repeats, 'run')}"
    notes += [
        f"{t}: declared FAIL_TO_PASS, passes at the base in {runs}: graded as PASS_TO_PASS"
        for t in checked.relabelled_pass_to_pass
    ]
    notes += [f"{t}: flaky in validation, left out of grading" for t in checked.flaky]
    if notes:
        requirement["open_questions"] = [*requirement.get("open_questions", []), *notes[:50]]
    out["requirement"] = requirement
    return out


def gold_check(contract_path: Path, run_dir: Path, options: IngestOptions) -> str:
    """Run the gold agent on a written contract through the real pipeline, into ``run_dir``.

    Only the hermetic checks matter here: the sentinel window is replayed when agents run, not
    during validation, so the attempt runs without it.

    Returns:
        "" when the gold attempt is accepted, else why not (failed and errored checks).
    """
    contract = load_contract(contract_path).model_copy(update={"sentinel": Sentinel()})
    task_id = contract.id
    if run_dir.exists():
        shutil.rmtree(run_dir)
    plan = PlannedAttempt(contract, str(contract_path), GoldSpec())
    opts = RunOptions(
        out=run_dir,
        repo_cache=options.repo_cache,
        cache_dir=options.cache_dir,
        selection=f"validation of candidate {task_id}",
    )
    records = run([plan], opts)
    record = records[0]
    if record.decision is None:
        return f"the gold attempt crashed: {record.crash}"
    if record.decision.accepted:
        return ""
    failed = [*record.decision.failed, *(f"{c} (error)" for c in record.decision.errored)]
    return "the gold attempt is not accepted: " + ", ".join(failed)


def gold_after(
    path: Path, source: Path, checked: Validation, run_dir: Path, options: IngestOptions
) -> Validation:
    """Run :func:`gold_check` on the contract at ``path`` after its states were checked.

    Gate E checks the base state afresh (its own key covers the run conditions, the reference's
    validation and the tests' imports, which task validation does not observe), so the gold
    attempt is judged exactly as any agent's.

    Returns:
        ``checked`` with ``gold`` (``accepted`` or why not) and ``gold_seconds`` filled in.
    """
    started = clock.monotonic()
    why = gold_check(path, run_dir, options)
    took = round(clock.monotonic() - started, 3)
    return checked.model_copy(update={"gold": why or "accepted", "gold_seconds": took})


def _validate(
    candidate: Candidate, taskset: TaskSet, options: IngestOptions
) -> TaskEntry | RejectedEntry:
    if not is_task_id(candidate.id):  # checked before the id names any folder
        why = (
            f"{candidate.id!r} is not a valid task id (letters, digits and ._-, starting with a "
            "letter or digit): it would name a folder outside the task set"
        )
        return _reject(candidate, None, Rejected("instance_invalid", why))
    folder = taskset.contract_dir(candidate.id)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, data in candidate.files.items():
        (folder / name).write_bytes(data)
    try:
        draft = load_contract(_write_contract(folder, candidate.contract))
    except ContractError as exc:
        return _reject(candidate, folder, Rejected("instance_invalid", exc.what))
    try:
        source = git.resolve_source(draft.repo, draft.base_dir, options.repo_cache)
    except UserInputError as exc:
        return _reject(candidate, folder, Rejected("repository_missing", exc.what))
    cache = (options.cache_dir or default_cache()).resolve()
    work = taskset.root / "work" / candidate.id
    cfg = CheckConfig.in_cache(cache, work, options.repeats, relabel=options.relabel)
    try:
        checked = check_states(draft, source, cfg)
    except Rejected as rejected:
        return _reject(candidate, folder, rejected, taskset)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    path = _write_contract(folder, with_ids(candidate.contract, checked))
    if options.gold_check:
        checked = gold_after(path, source, checked, taskset.validation_dir(candidate.id), options)
        if checked.gold != "accepted":
            return _reject(
                candidate, folder, Rejected("reference_not_accepted", checked.gold, checked)
            )
    contract: TransitionContract = load_contract(path)
    return TaskEntry(
        id=candidate.id,
        source=candidate.source,
        contract=str(path.relative_to(taskset.root)),
        contract_digest=contract.policy_digest(),
        validation=checked,
    )


def _reject(
    candidate: Candidate, folder: Path | None, rejected: Rejected, taskset: TaskSet | None = None
) -> RejectedEntry:
    """The rejection's record; the failing command's log kept where the task set keeps it."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    log = None
    if rejected.log and taskset is not None:
        kept = keep_log(taskset.validation_dir(candidate.id) / "rejection.log", rejected.log)
        log = kept.relative_to(taskset.root).as_posix()
    return RejectedEntry(
        id=candidate.id,
        source=candidate.source,
        reason=rejected.reason,
        detail=rejected.detail[:2000],
        validation=rejected.validation,
        log=log,
    )


def ingest(
    candidates: Iterable[Candidate | RejectedEntry],
    taskset: TaskSet,
    options: IngestOptions,
    report: Report | None = None,
) -> tuple[int, int]:
    """Validate every unfinished candidate into ``taskset``; return (validated, rejected) this call.

    Candidates already in ``tasks.jsonl`` or ``rejected.jsonl`` are skipped (resume). Each
    result is appended the moment it is known, so an interrupted call loses only the candidate
    it was validating.
    """
    done = taskset.finished()
    counts = [0, 0]
    try:
        _ingest_each(candidates, taskset, options, report, done, counts)
    finally:
        remove_if_empty(taskset.root / "work")  # each candidate removes its own scratch folder
    return counts[0], counts[1]


def _ingest_each(
    candidates: Iterable[Candidate | RejectedEntry],
    taskset: TaskSet,
    options: IngestOptions,
    report: Report | None,
    done: set[str],
    counts: list[int],
) -> None:
    """:func:`ingest`'s loop: validate and record each unfinished candidate, counting them."""
    for item in candidates:
        if item.id in done:
            continue
        done.add(item.id)
        if isinstance(item, RejectedEntry):
            entry: TaskEntry | RejectedEntry = item
        else:
            try:
                entry = _validate(item, taskset, options)
            except Exception as exc:  # one candidate's crash is data; the rest go on
                if interrupt_came():  # the user's Ctrl-C, made an error by a library
                    raise KeyboardInterrupt from exc
                folder = taskset.contract_dir(item.id) if is_task_id(item.id) else None
                why = f"{type(exc).__name__}: {exc}"
                entry = _reject(item, folder, Rejected("evaluator_error", why))
        if isinstance(entry, TaskEntry):
            taskset.add_task(entry)
            counts[0] += 1
        else:
            taskset.add_rejected(entry)
            counts[1] += 1
        if report:
            report(item.id, "validated" if isinstance(entry, TaskEntry) else entry.reason)
