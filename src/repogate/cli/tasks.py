"""``repogate tasks``: import SWE-bench instances, mine history, check contracts.

Each command prints one line per candidate as it finishes and a tally of outcomes; a bad input
file is one line ``error: <file>:<line>: what; how to fix`` and exit 2 (see :mod:`repogate.cli`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from repogate._counted import counted
from repogate.cli._help import plain_app
from repogate.errors import ContractError, ExitCode, UserInputError
from repogate.vocabulary import DEFAULT_WINDOW, REPO_CACHE_HELP

if TYPE_CHECKING:  # loaded by the commands that use them: `--help` loads none of them
    from repogate.contract import TransitionContract
    from repogate.tasks.ingest import IngestOptions
    from repogate.vocabulary import Strength

app = plain_app(
    "tasks",
    "Task supply: import SWE-bench instances, mine a repository's history, check contracts.",
)

RepoCache = Annotated[
    Path | None,
    typer.Option("--repo-cache", metavar="DIR", envvar="REPOGATE_REPO_CACHE", help=REPO_CACHE_HELP),
]
Repeats = Annotated[
    int,
    typer.Option(
        "--repeats", metavar="N", min=1, max=10, help="Runs of each state (N of N must agree)."
    ),
]
EnvMapOpt = Annotated[
    Path | None,
    typer.Option(
        "--env-map", metavar="FILE", help="TOML: python and install commands by repo and version."
    ),
]
Out = Annotated[
    Path, typer.Option("--out", metavar="DIR", help="Task-set folder (rerun to resume).")
]
StrengthOpt = Annotated[
    int,
    typer.Option(
        "--strength",
        metavar="N",
        min=0,
        max=500,
        help="After validation, measure each task's oracle strength with at most N mutants "
        "(0: not measured; see `repogate tasks strength`).",
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--test-timeout", metavar="S", min=1, help="Seconds per test run (default: the contract's)."
    ),
]


def _say(task_id: str, outcome: str) -> None:
    typer.echo(f"{task_id}: {outcome}")


def _summary(root: Path) -> None:
    from repogate.tasks.taskset import TaskSet

    tally = TaskSet(root).tally()
    parts = [f"{k} {v}" for k, v in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))]
    typer.echo(f"task set {root}: " + ", ".join(parts))


@app.command("import", short_help="SWE-bench instances as validated contracts.")
def import_cmd(
    instances: Annotated[
        Path,
        typer.Argument(metavar="INSTANCES.json[l]", help="SWE-bench instances (.json or .jsonl)."),
    ],
    out: Out,
    repo_cache: RepoCache = None,
    env_map: EnvMapOpt = None,
    repeats: Repeats = 1,
    test_timeout: Timeout = None,
    ids: Annotated[
        str | None,
        typer.Option(
            "--ids", metavar="ID,ID...", help="Comma-separated instance ids (default: all)."
        ),
    ] = None,
    strength: Annotated[
        str,
        typer.Option(
            "--as",
            metavar="STRENGTH",
            help="lifecycle: every base-passing test, the sentinel over the fix's later history, "
            "permissions from the reference's shape (default); swebench: SWE-bench's own rules.",
        ),
    ] = "lifecycle",
    window: Annotated[
        int,
        typer.Option(
            "--sentinel-window",
            metavar="N",
            min=0,
            help="Follow-up commits after the fix the sentinel replays (lifecycle strength).",
        ),
    ] = DEFAULT_WINDOW,
    mutants: StrengthOpt = 0,
) -> None:
    """Import SWE-bench instances as validated contracts into a task-set folder."""
    from repogate.tasks import swebench
    from repogate.tasks.ingest import IngestOptions, ingest, with_timeout
    from repogate.tasks.recipe import load_env_map
    from repogate.tasks.taskset import Selection, TaskSet

    if strength not in ("lifecycle", "swebench"):
        raise UserInputError(
            f"--as {strength!r} is not an import strength", "give --as lifecycle or --as swebench"
        )
    chosen: Strength = "swebench" if strength == "swebench" else "lifecycle"

    loaded = swebench.read_instances(instances)
    mapping = load_env_map(env_map)
    wanted = {i.strip() for i in ids.split(",") if i.strip()} if ids else None
    unknown = sorted((wanted or set()) - {i.instance_id for i in loaded})
    if unknown:
        raise UserInputError(
            f"--ids names {counted(len(unknown), 'instance')} that "
            f"{'are' if len(unknown) > 1 else 'is'} not in {instances} ({', '.join(unknown)})",
            "give ids of its instances (their instance_id)",
        )
    rule = f"instances of {instances.name}" + (f" with ids {sorted(wanted)}" if wanted else "")
    rule += f", test timeout {test_timeout:g} s" if test_timeout else ""
    rule += (
        ", as SWE-bench judges them (declared PASS_TO_PASS only, no sentinel, no permissions)"
        if chosen == "swebench"
        else f", at lifecycle strength (every base-passing test; sentinel over the next {window}"
        " first-parent commits after the fix touching its files; permissions from the "
        "reference's shape)"
    )
    rule += (
        "; a declared FAIL_TO_PASS id passing at the base in every run is graded as PASS_TO_PASS"
        " (recorded as relabelled) when another declared id fails there"
    )
    flags = {
        "INSTANCES": str(instances),
        "--ids": ",".join(sorted(wanted)) if wanted else "all",
        "--as": chosen,
        **({"--sentinel-window": str(window)} if chosen == "lifecycle" else {}),
        "--test-timeout": f"{test_timeout:g}" if test_timeout else "the contract's",
        "--repeats": str(repeats),
    }
    taskset = TaskSet.create(
        out,
        Selection(
            source="swebench-import",
            origin=str(instances),
            rule=rule,
            repeats=repeats,
            flags=flags,
        ),
    )
    drafts = (
        swebench.draft(i, instances, mapping, repo_cache, chosen, window)
        for i in loaded
        if wanted is None or i.instance_id in wanted
    )
    options = IngestOptions(repo_cache=repo_cache, repeats=repeats, relabel=True)
    ingest(with_timeout(drafts, test_timeout), taskset, options, _say)
    _summary(out)
    if mutants and taskset.tasks():
        measure_strength([out], mutants, repo_cache)


@app.command("mine")
def mine_cmd(
    repo: Annotated[
        str, typer.Argument(metavar="REPO", help="Repository: a URL (with --repo-cache) or a path.")
    ],
    span: Annotated[
        str, typer.Option("--range", metavar="A..B", help="Commits A..B (first-parent line of B).")
    ],
    out: Out,
    paths: Annotated[
        list[str] | None,
        typer.Option(
            "--paths",
            metavar="GLOB",
            help="Only commits touching this glob (contract dialect: * in one folder, ** across).",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", metavar="N", min=1, help="At most N candidates, oldest first."),
    ] = None,
    repo_cache: RepoCache = None,
    env_map: EnvMapOpt = None,
    repeats: Repeats = 1,
    test_timeout: Timeout = None,
    mutants: StrengthOpt = 0,
) -> None:
    """Mine validated tasks from commits that change code and tests."""
    from repogate import git
    from repogate.errors import GitError
    from repogate.tasks import mine
    from repogate.tasks.ingest import IngestOptions, ingest, with_timeout
    from repogate.tasks.recipe import load_env_map
    from repogate.tasks.taskset import Selection, TaskSet

    if ".." not in span:
        raise UserInputError(f"--range {span!r} is not A..B", "give two revisions, e.g. v1.0..main")
    source = git.resolve_source(repo, Path.cwd(), repo_cache)
    url = repo if git.repo_url_parts(repo) else str(source)
    mapping = load_env_map(env_map)
    globs = tuple(paths or ())
    given = span
    try:
        # the selection rule names commits, not revisions that move: a rerun after the branch
        # moved would otherwise pick other candidates under the same rule
        start, _, end = span.partition("..")
        span = "..".join(git.rev_parse(source, f"{r or 'HEAD'}^{{commit}}") for r in (start, end))
        chosen = mine.select_commits(source, span, globs, limit)
    except GitError:
        raise UserInputError(
            f"--range {given!r} names a revision that is not in {repo}",
            "give two revisions of that repository (SHAs, tags or branches), e.g. v1.0..main",
        ) from None
    if not chosen:  # an empty task set would be refused by `run` and `tasks check` alike
        raise UserInputError(
            f"--range {given!r} of {repo} holds no first-parent commit changing code and tests"
            + (f" touching {list(globs)}" if globs else ""),
            "give a wider --range (or other --paths)",
        )
    rule = (
        f"first-parent commits of {span}"
        + (f" (--range {given})" if given != span else "")
        + " changing code and tests"
        + (f", touching {list(globs)}" if globs else "")
        + (f", first {limit}" if limit else "")
        + f": {counted(len(chosen), 'candidate')}"
        + (f", test timeout {test_timeout:g} s" if test_timeout else "")
    )
    flags = {
        "REPO": url,
        "--range": given,
        "--paths": ",".join(globs) if globs else "all",
        "--limit": str(limit) if limit else "none",
        "--test-timeout": f"{test_timeout:g}" if test_timeout else "the contract's",
        "--repeats": str(repeats),
    }
    taskset = TaskSet.create(
        out, Selection(source="mined", origin=url, rule=rule, repeats=repeats, flags=flags)
    )
    drafts = mine.candidates(url, source, span, globs, limit, mapping)
    options = IngestOptions(repo_cache=repo_cache, repeats=repeats, relabel=True)
    ingest(with_timeout(drafts, test_timeout), taskset, options, _say)
    _summary(out)
    if mutants and taskset.tasks():
        measure_strength([out], mutants, repo_cache)


@app.command("check", short_help="Validate contracts; exit 0 when all are sound.")
def check_cmd(
    contracts: Annotated[
        list[Path],
        typer.Argument(metavar="CONTRACT.toml|DIR", help="Contract TOML files or task sets."),
    ],
    repo_cache: RepoCache = None,
    repeats: Repeats = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print results as JSON.")] = False,
) -> None:
    """Validate contracts (declared ids confirmed by running); exit 0 when all are sound, 1 if not."""
    from repogate._folders import remove_if_empty
    from repogate.contract import load_contract
    from repogate.runner import default_cache
    from repogate.tasks.ingest import IngestOptions
    from repogate.tasks.taskset import contract_files

    # every contract is read before anything runs
    loaded = [load_contract(p) for p, _ in contract_files(contracts)]
    cache = default_cache().resolve()
    options = IngestOptions(repo_cache=repo_cache, repeats=repeats)
    try:
        results = [_check_one(contract, cache, options, as_json) for contract in loaded]
    finally:  # each contract removes its own folders in them
        remove_if_empty(cache / "check-work", cache / "check-runs")
    if as_json:
        typer.echo(json.dumps(results, indent=2))
    valid = all(r["valid"] for r in results)
    raise typer.Exit(ExitCode.OK if valid else ExitCode.NOT_ACCEPTED)


def _check_one(
    contract: TransitionContract, cache: Path, options: IngestOptions, as_json: bool
) -> dict[str, Any]:
    """Check one contract's states and gold attempt; print its line (unless JSON); return its row."""
    from repogate import git
    from repogate.runner import contract_notices
    from repogate.tasks.ingest import gold_after
    from repogate.tasks.validate import CheckConfig, Rejected, check_states

    source = git.resolve_source(contract.repo, contract.base_dir, options.repo_cache)
    work = cache / "check-work" / contract.id
    run_dir = cache / "check-runs" / contract.id
    row: dict[str, Any]
    try:
        notices = contract_notices(contract, source)
    except ContractError:  # an unreadable hidden test patch: the check itself says so
        notices = ()
    for line in () if as_json else notices:
        typer.echo(f"warning: {line}", err=True)
    try:
        checked = check_states(contract, source, CheckConfig.in_cache(cache, work, options.repeats))
        assert contract.source_file is not None
        checked = gold_after(contract.source_file, source, checked, run_dir, options)
        if checked.gold != "accepted":
            raise Rejected("reference_not_accepted", checked.gold, checked)
        row = {"id": contract.id, "valid": True, "validation": checked.model_dump(mode="json")}
        row["notices"] = list(notices)
    except Rejected as rejected:
        row = {"id": contract.id, "valid": False, "reason": rejected.reason}
        row["detail"] = rejected.detail
        row["notices"] = list(notices)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    if not as_json:
        typer.echo(
            f"{contract.id}: " + ("valid" if row["valid"] else f"{row['reason']}: {row['detail']}")
        )
    return row


Budget = Annotated[
    int,
    typer.Option(
        "--budget",
        metavar="N",
        min=1,
        max=500,
        help="At most N mutants run per task (cost bound).",
    ),
]


def _strength_line(task_id: str, strength: Any, validation_s: float | None) -> str:
    if strength.note:
        return f"{task_id}: oracle strength not measured: {strength.note}"
    score = "-" if strength.score is None else f"{strength.score:.2f}"
    cost = f"{strength.seconds:.1f} s ({strength.making_seconds:.1f} s making the mutants)"
    if validation_s:
        cost += f", {strength.seconds / validation_s:.2f} x its validation ({validation_s:.1f} s)"
    survivors = [
        f"\n  {m.status}: {m.path}:{m.line} {m.before!r} -> {m.after!r} ({m.operator})"
        for m in strength.mutants
        if m.status in ("survived", "equivalent-looking")
    ]
    return (
        f"{task_id}: mutation score {score} ({strength.killed} killed, {strength.survived} "
        f"survived, {strength.equivalent_looking} equivalent-looking, {strength.equivalent} "
        f"equivalent, {strength.invalid} invalid, "
        f"{counted(strength.errors, 'error')}; {strength.run} run of {strength.made} made); "
        f"weak_oracle {strength.cohort_tag}; cost {cost}" + "".join(survivors)
    )


def measure_strength(
    paths: list[Path], budget: int, repo_cache: Path | None, as_json: bool = False
) -> list[dict[str, Any]]:
    """Measure every task named (contract files, task sets); print one line each; return rows.

    In a task set the record is appended to ``strength.jsonl`` (a rerun skips tasks already
    there), the mutants' run stores kept under ``strength/<id>/``, and the contract's
    ``[cohort]`` gains ``weak_oracle`` and ``mutation_score``.
    """
    from repogate._folders import remove_if_empty
    from repogate.contract import load_contract
    from repogate.runner import RunOptions, default_cache
    from repogate.tasks import strength as st
    from repogate.tasks.taskset import TaskSet, contract_files, is_task_set

    rows: list[dict[str, Any]] = []
    cache = default_cache().resolve()
    for given in paths:
        in_set = is_task_set(given)
        done = st.done_in(given) if in_set else {}
        timings = (
            {
                t.id: t.validation.validation_seconds + t.validation.gold_seconds
                for t in TaskSet.open(given).tasks()
            }
            if in_set
            else {}
        )
        for path, label in contract_files([given]):
            contract = load_contract(path)
            if contract.id in done:
                result = done[contract.id]
            else:
                work = (
                    (given / "strength" / contract.id)
                    if in_set
                    else cache / "strength" / contract.id
                )
                if work.exists():
                    shutil.rmtree(work)
                options = RunOptions(
                    out=work / "run",
                    repo_cache=repo_cache,
                    selection=f"oracle strength of {contract.id}: mutants of its reference",
                )
                result = st.measure(contract, label, work, options, budget=budget)
                if in_set:
                    st.append(given, result)
                    st.tag_contract(path, result)
                else:
                    st.remove_work(work)
            if not as_json:
                typer.echo(_strength_line(contract.id, result, timings.get(contract.id)))
            rows.append(result.model_dump(mode="json"))
    if not paths or not any(is_task_set(p) for p in paths):
        remove_if_empty(cache / "strength")
    return rows


@app.command("strength", short_help="Oracle strength: mutants of each reference's added lines.")
def strength_cmd(
    contracts: Annotated[
        list[Path],
        typer.Argument(metavar="CONTRACT.toml|DIR", help="Contract TOML files or task sets."),
    ],
    budget: Budget = 20,
    repo_cache: RepoCache = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print results as JSON.")] = False,
) -> None:
    """Oracle strength: run mutants of each reference's added lines; score and weak_oracle tag."""
    from repogate.contract import load_contract
    from repogate.tasks.taskset import contract_files

    for path, _ in contract_files(contracts):
        load_contract(path)  # every contract is read before anything runs
    rows = measure_strength(contracts, budget, repo_cache, as_json)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))


@app.command("vary", short_help="Derive a task with one injected failure or convention hidden.")
def vary_cmd(
    contract: Annotated[
        Path, typer.Argument(metavar="CONTRACT.toml", help="The contract TOML to derive from.")
    ],
    inject: Annotated[
        str | None,
        typer.Option(
            "--inject",
            metavar="KIND",
            help="stale-lockfile, irrelevant-failing-test, "
            "misleading-comment or generated-file-trap.",
        ),
    ] = None,
    ablate: Annotated[
        str | None,
        typer.Option(
            "--ablate", metavar="PATH", help="A [[requirement.conventions]] path to hide."
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="Folder for the derived task.")
    ] = Path("varied"),
    repo_cache: RepoCache = None,
) -> None:
    """Derive a task whose base carries one injected failure, or lacks one convention."""
    from repogate.tasks.vary import vary_from_options

    typer.echo(vary_from_options(contract, inject, ablate, out, repo_cache))
