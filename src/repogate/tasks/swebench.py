"""Import SWE-bench instances as contracts (``repogate tasks import``).

An instance (the fields of SWE-bench's datasets, https://github.com/SWE-bench/SWE-bench,
``swebench/harness/constants``: ``instance_id, repo, base_commit, patch, test_patch,
FAIL_TO_PASS, PASS_TO_PASS`` required; ``version, environment_setup_commit, problem_statement,
hints_text, created_at`` optional) becomes one draft contract:

- hidden tests = ``test_patch`` and reference = ``patch``, stored beside the contract as
  ``hidden_tests.diff`` and ``reference.diff`` (an instance carries diffs, not commits);
- requirement statement = ``problem_statement``; R1 = FAIL_TO_PASS (stated, source ``issue``),
  R2 = PASS_TO_PASS (implicit, source ``compatibility``);
- cohort tags: repository, files and hunks of the reference, the year of ``created_at`` (the
  instance's age, for contamination cohorts), the version, where the environment recipe came
  from, and the import's strength;
- the environment from ``--env-map`` for (repo, version), else derived from the base commit;
- at lifecycle strength (the default), base-passing regression, the sentinel window of the fix's
  real later history, permissions from the reference's shape and the cohort tags of its shape;
  ``--as swebench`` keeps SWE-bench's rules (declared regression, no sentinel, no permissions).
  Both are explained, with the choice of profile, in :mod:`repogate.tasks.import_strength`.

FAIL_TO_PASS and PASS_TO_PASS arrive as lists, as JSON-encoded strings (the Hugging Face
datasets) or as Python-literal strings (some agents' copies); all three are read.

The file is JSON (one instance or a list) or JSONL. A file that is not JSON, or an instance that
lacks a required field, is a user error naming ``<file>:<line>``; an instance that cannot be drafted
(no mirror of its repository) is a rejected candidate, and the rest are still imported.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError, field_validator

from repogate import git
from repogate._counted import listed
from repogate._interrupted import interrupt_came
from repogate._model import ForeignModel
from repogate.contract import SHA_RE
from repogate.errors import GitError, UserInputError
from repogate.gates.runner_files import holds_runner, marker_paths
from repogate.oracles.grading import named
from repogate.oracles.junit import looks_truncated
from repogate.patches import file_changes
from repogate.tasks.import_strength import (
    cohort_tags,
    permissions_for,
    sentinel_table,
    sentinel_window,
)
from repogate.tasks.ingest import Candidate
from repogate.tasks.recipe import EnvMap, recipe_for
from repogate.tasks.taskset import RejectedEntry
from repogate.vocabulary import DEFAULT_WINDOW, Strength

REQUIRED = (
    "instance_id",
    "repo",
    "base_commit",
    "patch",
    "test_patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
)
FIX = "each instance needs " + ", ".join(REQUIRED)
REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")
_KEYS = {"fail_to_pass": "FAIL_TO_PASS", "pass_to_pass": "PASS_TO_PASS"}


def _problem(error: Any) -> str:
    """One pydantic error as ``<FIELD> <what>``, in the instance file's own field names."""
    key = _KEYS.get(str(error["loc"][0]), str(error["loc"][0])) if error["loc"] else "(top level)"
    if error["type"] == "value_error":
        return f"{key} {str(error['msg']).removeprefix('Value error, ')}"
    if error["type"] == "string_type":
        return f"{key} must be a string (got {type(error['input']).__name__})"
    return f"{key} {error['msg']}"


def _id_list(value: Any) -> list[str]:
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text)
        except RecursionError:
            raise ValueError("is nested too deeply") from None
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(text)
            except (RecursionError, MemoryError):
                raise ValueError("is nested too deeply") from None
            except (ValueError, SyntaxError):
                raise ValueError("is neither a list nor a JSON or Python list literal") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of test ids")
    return value


class Instance(ForeignModel):
    """One SWE-bench instance (unknown extra fields are kept out, not refused: SWE-bench's shape)."""

    model_config = ConfigDict(populate_by_name=True)

    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    version: str | None = None
    environment_setup_commit: str | None = None
    problem_statement: str = ""
    hints_text: str | None = None
    created_at: str | None = None

    @field_validator("fail_to_pass", "pass_to_pass", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> list[str]:
        return _id_list(value)

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> str | None:
        """SWE-bench writes ``"0.12"``; some copies a number. Anything else is a typo."""
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        raise ValueError(f"must be a string or a number (got {type(value).__name__})")

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str) -> str:
        """``owner/name`` as on GitHub: the URL and the mirror's folder are built from it."""
        if not REPO_RE.match(value) or any(part in (".", "..") for part in value.split("/")):
            raise ValueError(f"must be owner/name as on GitHub (got {value!r})")
        return value

    @field_validator("base_commit")
    @classmethod
    def _sha(cls, value: str) -> str:
        if not SHA_RE.match(value.strip().lower()):
            raise ValueError(f"must be a commit SHA of 7 to 40 hex digits (got {value[:60]!r})")
        return value.strip().lower()


def _decode(
    decoder: json.JSONDecoder, text: str, index: int, path: Path, fix: str
) -> tuple[Any, int]:
    """One JSON value of ``text`` from ``index``: (value, end), or a one-line ``UserInputError``.

    The error names the line the broken value starts on (a JSONL row), and the line the parser
    stopped on when that is another: an unclosed ``{`` of row 1 is found only at the end of the
    file, which is not where to look.
    """
    line = text.count("\n", 0, index) + 1
    try:
        return decoder.raw_decode(text, index)
    except json.JSONDecodeError as exc:
        stopped = "" if exc.lineno == line else f"; the parser stopped at line {exc.lineno}"
        raise UserInputError(f"{path}:{line}: not JSON ({exc.msg}{stopped})", fix) from None
    except RecursionError:
        raise UserInputError(
            f"{path}:{line}: not JSON repogate loads (nested too deeply)", fix
        ) from None


def _objects(text: str, path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (line, value) for each instance of a JSON (object or list) or JSONL file."""
    decoder = json.JSONDecoder()
    stripped = text.lstrip()
    if path.suffix == ".jsonl" or not stripped.startswith("["):
        index = 0
        while index < len(text):
            while index < len(text) and text[index].isspace():
                index += 1
            if index >= len(text):
                return
            line = text.count("\n", 0, index) + 1
            fix = "give a .json file (an instance or a list of them) or a .jsonl file"
            value, index = _decode(decoder, text, index, path, fix)
            yield line, value
        return
    index = text.index("[") + 1
    while True:
        while index < len(text) and text[index] in " \t\r\n,":
            index += 1
        if index >= len(text) or text[index] == "]":
            return
        line = text.count("\n", 0, index) + 1
        value, index = _decode(decoder, text, index, path, "fix the JSON at that line")
        yield line, value


def read_instances(path: Path) -> list[Instance]:
    """Read every instance of a JSON or JSONL file.

    Raises:
        UserInputError: the file cannot be read, is not JSON, or an instance is not an object or
            lacks (or mistypes) a required field; the message is ``<file>:<line>: what``.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise UserInputError(f"{path}: cannot be read ({why})", "give an instance file") from None
    instances = []
    for line, value in _objects(text, path):
        if not isinstance(value, dict):
            raise UserInputError(f"{path}:{line}: an instance must be a JSON object", FIX)
        missing = [k for k in REQUIRED if k not in value]
        if missing:
            raise UserInputError(
                f"{path}:{line}: instance {value.get('instance_id', '?')!r} lacks {', '.join(missing)}",
                FIX,
            )
        renamed = {
            **value,
            "fail_to_pass": value["FAIL_TO_PASS"],
            "pass_to_pass": value["PASS_TO_PASS"],
        }
        try:
            instances.append(Instance.model_validate(renamed))
        except ValidationError as exc:
            raise UserInputError(
                f"{path}:{line}: instance {value.get('instance_id', '?')!r}: "
                f"{_problem(exc.errors()[0])}",
                FIX,
            ) from None
    if not instances:
        raise UserInputError(f"{path}:1: holds no instance", FIX)
    return instances


def _hunks(patch: str) -> int:
    return sum(1 for line in patch.splitlines() if line.startswith("@@"))


def _files(patch: str) -> int:
    return sum(1 for line in patch.splitlines() if line.startswith("diff --git "))


def _without_artefacts(instance: Instance) -> tuple[Instance, list[str]]:
    """Return ``instance`` without its declared ids that name no test, and those ids.

    An id starting with ``[`` has no test name before its parameters: pytest-dev/pytest's
    instances list ``[``, ``[100%]`` and ``[100%]------------------------------`` as
    PASS_TO_PASS, the progress column of the output of pytest's own tests (which run pytest
    inside them) read by SWE-bench's log parser as test ids. No run can report them.
    """
    artefacts = [t for t in (*instance.fail_to_pass, *instance.pass_to_pass) if t.startswith("[")]
    if not artefacts:
        return instance, []
    kept = {
        "fail_to_pass": [t for t in instance.fail_to_pass if not t.startswith("[")],
        "pass_to_pass": [t for t in instance.pass_to_pass if not t.startswith("[")],
    }
    return instance.model_copy(update=kept), artefacts


def draft(
    instance: Instance,
    path: Path,
    env_map: EnvMap,
    repo_cache: Path | None,
    strength: Strength = "lifecycle",
    window: int = DEFAULT_WINDOW,
) -> Candidate | RejectedEntry:
    """Draft one instance's contract; a rejected entry when its repository has no mirror.

    Args:
        instance: the instance.
        path: the instance file (named in the task's source).
        env_map: recipes by repository and version.
        repo_cache: local mirrors (the whole history, for the sentinel's window).
        strength: ``lifecycle`` (base-passing regression, the sentinel window, permissions from
            the reference's shape) or ``swebench`` (SWE-bench's rules); see
            :mod:`repogate.tasks.import_strength`.
        window: follow-up commits the sentinel replays at lifecycle strength.
    """
    source = {"file": str(path), "instance_id": instance.instance_id}
    instance, artefacts = _without_artefacts(instance)
    if artefacts:  # recorded, never graded: no test has such a name
        source["not_test_ids"] = (
            f"{len(artefacts)} declared id(s) name no test ({named(artefacts)}): "
            "SWE-bench's log parser read pytest's own progress output as ids; left out"
        )
    cut = [t for t in (*instance.fail_to_pass, *instance.pass_to_pass) if looks_truncated(t)]
    if cut:  # SWE-bench's log parser cut them at a blank; matched as its grading matches them
        source["cut_ids"] = (
            f"{len(cut)} id(s) cut at a blank by SWE-bench's log parser, matched as its grading "
            f"matches them (repogate.oracles.junit.match_ids): {named(cut)}"
        )
    url = f"https://github.com/{instance.repo}"
    try:
        repo = git.resolve_source(url, path.parent, repo_cache)
    except UserInputError as exc:
        return RejectedEntry(
            id=instance.instance_id, source=source, reason="repository_missing", detail=exc.what
        )
    if not git.has_object(repo, instance.base_commit):
        return RejectedEntry(
            id=instance.instance_id,
            source=source,
            reason="base_commit_missing",
            detail=f"base commit {instance.base_commit} is not in the mirror {repo}",
        )
    lacking = _lacking(repo, instance.base_commit)
    if lacking:
        return RejectedEntry(
            id=instance.instance_id, source=source, reason="base_commit_missing", detail=lacking
        )
    try:
        environment, test_command, origin = recipe_for(
            env_map, instance.repo, instance.version, repo, instance.base_commit
        )
    except Exception as exc:  # one instance's crash is data; the rest of the file goes on
        if interrupt_came():  # the user's Ctrl-C, made an error by a library
            raise KeyboardInterrupt from exc
        return RejectedEntry(
            id=instance.instance_id,
            source=source,
            reason="evaluator_error",
            detail=f"{type(exc).__name__}: {exc}"[:2000],
        )
    try:
        contract = _contract(instance, repo, (environment, test_command, origin), strength, window)
    except GitError as exc:  # the mirror's history could not be read: the evaluator's side
        return RejectedEntry(
            id=instance.instance_id,
            source=source,
            reason="evaluator_error",
            detail=f"reading the sentinel window: {exc}"[:2000],
        )
    files = {
        "reference.diff": instance.patch.encode(),
        "hidden_tests.diff": instance.test_patch.encode(),
    }
    return Candidate(id=instance.instance_id, source=source, contract=contract, files=files)


def _lacking(repo: Path, base: str) -> str:
    """Say what of ``base``'s history the mirror lacks ("" when it lacks nothing).

    A partial copy (astropy's snapshot keeps no file of 4 MiB and more) holds the base commit
    but not every blob: no checkout of the base can be made, whoever submits the candidate. It
    was an ``evaluator_error`` deep in validation (git's "unable to read"); it is the mirror's.
    """
    missing = git.missing_objects(repo, base)
    if not missing:
        return ""
    where = git.paths_in_tree(repo, base, missing)
    named = listed([f"{sha} ({where[sha]})" if sha in where else sha for sha in missing], 5)
    inside = (
        f"{len(where)} of them in the base tree itself"
        if where
        else "none in the base tree (earlier history only)"
    )
    return (
        f"the mirror {repo} lacks {len(missing)} object(s) of base commit {base}'s history: "
        f"{named}; {inside}. It is a partial copy (a snapshot without its largest files): "
        "no checkout of the base can be made from it; use a whole mirror"
    )


def _contract(
    instance: Instance,
    repo: Path,
    recipe: tuple[dict[str, Any], str | None, str],
    strength: Strength,
    window: int,
) -> dict[str, Any]:
    """The draft contract (TOML data) of ``instance`` at ``strength``."""
    environment, test_command, origin = recipe
    reference = instance.patch.encode()
    cohort = {
        "source": "swebench",
        "strength": strength,
        "repo": instance.repo,
        "files": str(_files(instance.patch)),
        "hunks": str(_hunks(instance.patch)),
        "recipe": origin,
    }
    if instance.created_at:
        cohort["year"] = instance.created_at[:4]
    if instance.version:
        cohort["version"] = instance.version
    oracles: dict[str, Any] = {
        "hidden_tests": {"file": "hidden_tests.diff"},
        "fail_to_pass": instance.fail_to_pass,
        "pass_to_pass": instance.pass_to_pass,
        # lifecycle: every test that passed at the base must still pass; SWE-bench's rule: the
        # instance's PASS_TO_PASS only (its harness never runs the whole suite)
        "regression": "base-passing" if strength == "lifecycle" else "declared",
    }
    if test_command:
        oracles["test_command"] = test_command
    if holds_runner(git.existing_paths(repo, instance.base_commit, marker_paths())):
        # pytest tests itself: its runner is the code under test (weaker assurance, said)
        oracles["runner_under_test"] = True
        cohort["runner"] = "under-test"
    contract: dict[str, Any] = {
        "id": instance.instance_id,
        "repo": f"https://github.com/{instance.repo}",
        "base_commit": instance.base_commit,
        "profile": "hermetic",  # hermetic + sentinel: see repogate.tasks.import_strength
        "cohort": cohort,
        "requirement": {
            "statement": instance.problem_statement or f"resolve {instance.instance_id}",
            "criteria": [
                {
                    "id": "R1",
                    "claim": "the issue is resolved: its tests fail before and pass after",
                    "source": "issue",
                    "kind": "stated",
                    "oracles": instance.fail_to_pass,
                }
            ],
        },
        "environment": environment,
        "oracles": oracles,
        "reference": {"file": "reference.diff"},
    }
    if strength == "lifecycle":
        found = sentinel_window(repo, instance.base_commit, reference, window)
        paths = sorted({c.path for c in file_changes(reference)})
        contract["permissions"] = permissions_for(reference)
        contract["sentinel"] = sentinel_table(found, paths)
        if found.branch:
            contract["target_branch"] = found.branch
        cohort.update(cohort_tags(reference, found))
    return contract
