"""Import SWE-bench instances as contracts (``repogate tasks import``).

An instance (the fields of SWE-bench's datasets, https://github.com/SWE-bench/SWE-bench,
``swebench/harness/constants``: ``instance_id, repo, base_commit, patch, test_patch,
FAIL_TO_PASS, PASS_TO_PASS`` required; ``version, environment_setup_commit, problem_statement,
hints_text, created_at`` optional) becomes one draft contract:

- hidden tests = ``test_patch`` and reference = ``patch``, stored beside the contract as
  ``hidden_tests.diff`` and ``reference.diff`` (an instance carries diffs, not commits);
- requirement statement = ``problem_statement``; R1 = FAIL_TO_PASS (stated, source ``issue``),
  R2 = PASS_TO_PASS (implicit, source ``compatibility``);
- cohort tags: repository, files and hunks of the reference, the year of ``created_at`` (for
  contamination cohorts), the version, and where the environment recipe came from;
- the environment from ``--env-map`` for (repo, version), else derived from the base commit.

FAIL_TO_PASS and PASS_TO_PASS arrive as lists, as JSON-encoded strings (the Hugging Face
datasets) or as Python-literal strings (some agents' copies); all three are read.

The file is JSON (one instance or a list) or JSONL. A file that is not JSON, or an instance that
lacks a required field, is a user error naming ``<file>:<line>``; an instance that cannot be drafted
(no mirror of its repository) is a rejected candidate, and the rest are still imported.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from repogate import git
from repogate.errors import UserInputError
from repogate.oracles.junit import looks_truncated
from repogate.tasks.ingest import Candidate
from repogate.tasks.recipe import EnvMap, recipe_for
from repogate.tasks.taskset import RejectedEntry

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


class Instance(BaseModel):
    """One SWE-bench instance (unknown extra fields are kept out, not refused)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

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
        return None if value is None else str(value)


def _decode(
    decoder: json.JSONDecoder, text: str, index: int, path: Path, fix: str
) -> tuple[Any, int]:
    """One JSON value of ``text`` from ``index``: (value, end), or a one-line ``UserInputError``."""
    try:
        return decoder.raw_decode(text, index)
    except json.JSONDecodeError as exc:
        raise UserInputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})", fix) from None
    except RecursionError:
        line = text.count("\n", 0, index) + 1
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
            first = exc.errors()[0]
            key = {"fail_to_pass": "FAIL_TO_PASS", "pass_to_pass": "PASS_TO_PASS"}.get(
                str(first["loc"][0]), str(first["loc"][0])
            )
            raise UserInputError(
                f"{path}:{line}: instance {value.get('instance_id', '?')!r}: {key} {first['msg']}",
                FIX,
            ) from None
    if not instances:
        raise UserInputError(f"{path}:1: holds no instance", FIX)
    return instances


def _hunks(patch: str) -> int:
    return sum(1 for line in patch.splitlines() if line.startswith("@@"))


def _files(patch: str) -> int:
    return sum(1 for line in patch.splitlines() if line.startswith("diff --git "))


def draft(
    instance: Instance, path: Path, env_map: EnvMap, repo_cache: Path | None
) -> Candidate | RejectedEntry:
    """Draft one instance's contract; a rejected entry when its repository has no mirror."""
    source = {"file": str(path), "instance_id": instance.instance_id}
    cut = [t for t in (*instance.fail_to_pass, *instance.pass_to_pass) if looks_truncated(t)]
    if cut:  # SWE-bench's log parser cut them at a blank; matched as its grading matches them
        source["cut_ids"] = (
            f"{len(cut)} id(s) cut at a blank by SWE-bench's log parser, matched as its grading "
            "matches them (repogate.oracles.junit.match_ids)"
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
    try:
        environment, test_command, origin = recipe_for(
            env_map, instance.repo, instance.version, repo, instance.base_commit
        )
    except Exception as exc:  # one instance's crash is data; the rest of the file goes on
        return RejectedEntry(
            id=instance.instance_id,
            source=source,
            reason="evaluator_error",
            detail=f"{type(exc).__name__}: {exc}"[:2000],
        )
    cohort = {
        "source": "swebench",
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
        # SWE-bench's rule: the instance's PASS_TO_PASS is the regression set (its harness never
        # runs the whole suite; sympy's takes hours)
        "regression": "declared",
    }
    if test_command:
        oracles["test_command"] = test_command
    contract = {
        "id": instance.instance_id,
        "repo": url,
        "base_commit": instance.base_commit,
        "profile": "hermetic",
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
    files = {
        "reference.diff": instance.patch.encode(),
        "hidden_tests.diff": instance.test_patch.encode(),
    }
    return Candidate(id=instance.instance_id, source=source, contract=contract, files=files)
