"""``repogate tasks``: import SWE-bench instances, mine history, check contracts.

Each command prints one line per candidate as it finishes and a tally of outcomes; a bad input
file is one line ``error: <file>:<line>: what; how to fix`` and exit 2 (see :mod:`repogate.cli`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Annotated, Any

import typer

from repogate import git
from repogate._folders import remove_if_empty
from repogate.contract import TransitionContract, load_contract
from repogate.errors import ExitCode, GitError, UserInputError
from repogate.runner import default_cache
from repogate.tasks.ingest import IngestOptions

app = typer.Typer(
    name="tasks",
    help="Task supply: import SWE-bench instances, mine a repository's history, check contracts.",
    no_args_is_help=True,
    add_completion=False,
)

RepoCache = Annotated[
    Path | None,
    typer.Option("--repo-cache", envvar="REPOGATE_REPO_CACHE", help="Local mirrors of URLs."),
]
Repeats = Annotated[
    int, typer.Option("--repeats", min=1, max=10, help="Runs of each state (N of N must agree).")
]
EnvMapOpt = Annotated[
    Path | None,
    typer.Option("--env-map", help="TOML: python and install commands by repo and version."),
]
Out = Annotated[Path, typer.Option("--out", help="Task-set folder (rerun to resume).")]
Timeout = Annotated[
    float | None,
    typer.Option("--test-timeout", min=1, help="Seconds per test run (default: the contract's)."),
]


def _say(task_id: str, outcome: str) -> None:
    typer.echo(f"{task_id}: {outcome}")


def _summary(root: Path) -> None:
    from repogate.tasks.taskset import TaskSet

    tally = TaskSet(root).tally()
    parts = [f"{k} {v}" for k, v in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))]
    typer.echo(f"task set {root}: " + ", ".join(parts))


@app.command("import")
def import_cmd(
    instances: Annotated[Path, typer.Argument(help="SWE-bench instances (.json or .jsonl).")],
    out: Out,
    repo_cache: RepoCache = None,
    env_map: EnvMapOpt = None,
    repeats: Repeats = 1,
    test_timeout: Timeout = None,
    ids: Annotated[
        str | None, typer.Option("--ids", help="Comma-separated instance ids (default: all).")
    ] = None,
) -> None:
    """Import SWE-bench instances as validated contracts into a task-set folder."""
    from repogate.tasks import swebench
    from repogate.tasks.ingest import IngestOptions, ingest, with_timeout
    from repogate.tasks.recipe import load_env_map
    from repogate.tasks.taskset import Selection, TaskSet

    loaded = swebench.read_instances(instances)
    mapping = load_env_map(env_map)
    wanted = {i.strip() for i in ids.split(",") if i.strip()} if ids else None
    unknown = sorted((wanted or set()) - {i.instance_id for i in loaded})
    if unknown:
        raise UserInputError(
            f"--ids names {len(unknown)} instance{'s' if len(unknown) > 1 else ''} that "
            f"{'are' if len(unknown) > 1 else 'is'} not in {instances} ({', '.join(unknown)})",
            "give ids of its instances (their instance_id)",
        )
    rule = f"instances of {instances.name}" + (f" with ids {sorted(wanted)}" if wanted else "")
    rule += f", test timeout {test_timeout:g} s" if test_timeout else ""
    taskset = TaskSet.create(
        out,
        Selection(source="swebench-import", origin=str(instances), rule=rule, repeats=repeats),
    )
    drafts = (
        swebench.draft(i, instances, mapping, repo_cache)
        for i in loaded
        if wanted is None or i.instance_id in wanted
    )
    options = IngestOptions(repo_cache=repo_cache, repeats=repeats)
    ingest(with_timeout(drafts, test_timeout), taskset, options, _say)
    _summary(out)


@app.command("mine")
def mine_cmd(
    repo: Annotated[str, typer.Argument(help="Repository: a URL (with --repo-cache) or a path.")],
    span: Annotated[str, typer.Option("--range", help="Commits A..B (first-parent line of B).")],
    out: Out,
    paths: Annotated[
        list[str] | None, typer.Option("--paths", help="Only commits touching this glob.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most N candidates, oldest first.")
    ] = None,
    repo_cache: RepoCache = None,
    env_map: EnvMapOpt = None,
    repeats: Repeats = 1,
    test_timeout: Timeout = None,
) -> None:
    """Mine validated tasks from commits that change code and tests."""
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
        + f": {len(chosen)} candidates"
        + (f", test timeout {test_timeout:g} s" if test_timeout else "")
    )
    taskset = TaskSet.create(out, Selection(source="mined", origin=url, rule=rule, repeats=repeats))
    drafts = mine.candidates(url, source, span, globs, limit, mapping)
    options = IngestOptions(repo_cache=repo_cache, repeats=repeats)
    ingest(with_timeout(drafts, test_timeout), taskset, options, _say)
    _summary(out)


@app.command("check")
def check_cmd(
    contracts: Annotated[list[Path], typer.Argument(help="Contract TOML files or task sets.")],
    repo_cache: RepoCache = None,
    repeats: Repeats = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print results as JSON.")] = False,
) -> None:
    """Validate contracts (declared ids confirmed by running); exit 0 when all are sound, 1 if not."""
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
    from repogate.tasks.ingest import gold_after
    from repogate.tasks.validate import CheckConfig, Rejected, check_states

    source = git.resolve_source(contract.repo, contract.base_dir, options.repo_cache)
    work = cache / "check-work" / contract.id
    run_dir = cache / "check-runs" / contract.id
    row: dict[str, Any]
    try:
        checked = check_states(contract, source, CheckConfig.in_cache(cache, work, options.repeats))
        assert contract.source_file is not None
        checked = gold_after(contract.source_file, source, checked, run_dir, options)
        if checked.gold != "accepted":
            raise Rejected("reference_not_accepted", checked.gold, checked)
        row = {"id": contract.id, "valid": True, "validation": checked.model_dump(mode="json")}
    except Rejected as rejected:
        row = {"id": contract.id, "valid": False, "reason": rejected.reason}
        row["detail"] = rejected.detail
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    if not as_json:
        typer.echo(
            f"{contract.id}: " + ("valid" if row["valid"] else f"{row['reason']}: {row['detail']}")
        )
    return row


@app.command("vary")
def vary_cmd(
    contract: Annotated[Path, typer.Argument(help="The contract TOML to derive from.")],
    inject: Annotated[
        str | None,
        typer.Option(
            "--inject",
            help="stale-lockfile, irrelevant-failing-test, "
            "misleading-comment or generated-file-trap.",
        ),
    ] = None,
    ablate: Annotated[
        str | None, typer.Option("--ablate", help="A [[requirement.conventions]] path to hide.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for the derived task.")] = Path(
        "varied"
    ),
    repo_cache: RepoCache = None,
) -> None:
    """Derive a task whose base carries one injected failure, or lacks one convention."""
    from repogate.tasks.vary import vary_from_options

    typer.echo(vary_from_options(contract, inject, ablate, out, repo_cache))
