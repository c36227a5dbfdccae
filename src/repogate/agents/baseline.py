"""The ``baseline:MODEL`` agent: localise, repair, validate (after Agentless, Xia et al. 2024).

1. **Localise**: rank the workspace's files with BM25 against the task's statement and stated
   criteria (:mod:`._localise`), show the model the best ``top_files`` as skeletons, and ask it
   which files and functions must change; paths it names are kept (the two best ranked when it
   names none).
2. **Repair**: show the chosen files whole and ask for search/replace edits (:mod:`._edits`) and,
   optionally, a reproduction script. The first sample is drawn at temperature 0, the others at
   ``temperature``. A sample whose edits do not all match exactly is rejected (nothing of it
   kept); a sample with no edit counts as drawn.
3. **Validate**: with a sample applied, run the repository's visible tests (``test_command``, in
   the sandbox; never the hidden tests, which the workspace does not hold) and the sample's
   reproduction; files they leave are removed. Score: tests passed minus failed, plus 1 when the
   reproduction passes (minus 1 when it fails). The best sample is kept (the earliest of equal
   ones); drawing stops early once a sample fails no test and its reproduction passes.

Budgets (:class:`~repogate.models.meter.Budget`): the contract's wall time, tokens and US
dollars, and up to ``samples`` repair samples (capped by the contract's ``sample_budget``).
Reaching one ends the agent with status ``budget_exceeded``, the best sample so far applied.
An unreachable endpoint, or no sample giving a usable edit, ends it with ``agent_error``.

Configuration (``baseline:MODEL:CONFIG.toml``; every key optional)::

    samples = 4            temperature = 0.8      top_files = 5
    test_command = "python -m pytest -q -p no:cacheprovider"
    step_timeout_s = 300   max_file_chars = 40000
    [sampling]  max_tokens = 4096  top_p = 1.0  seed = 1  timeout_s = 120  max_retries = 2
                price_prompt_per_mtok = 0.15  price_completion_per_mtok = 0.6
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from repogate._counted import counted
from repogate._files import read_toml_model, write_bytes_nofollow
from repogate._model import FrozenModel
from repogate._version import __version__
from repogate.agent_spec import ModelSpec
from repogate.agents import _baseline_prompts as prompts
from repogate.agents._edits import Edit, EditSession, parse_edits
from repogate.agents._localise import rank, read_files, skeleton
from repogate.agents.model_agent import GaveUp, ModelAgent, endpoint_of, run_action
from repogate.errors import AgentSpecError
from repogate.models.meter import DEFAULT_SAMPLES, Meter
from repogate.models.openai_compat import Sampling
from repogate.models.trajectory import Note
from repogate.protocols import ChatMessage, TaskView
from repogate.sandbox import SandboxPolicy

AGENT_VERSION = "baseline/1"
"""The baseline's own version: raise it when its steps change."""
REPRO_FILE = ".repogate_reproduce.py"
_REPRO = re.compile(r"```reproduce[ \t]*\n(.*?)\n?```", re.DOTALL)
_COUNTS = re.compile(r"(\d+) (passed|failed|errors?)\b")


class BaselineConfig(FrozenModel):
    """The baseline's settings (see the module docstring); recorded in the run manifest."""

    samples: int = Field(default=DEFAULT_SAMPLES, gt=0)
    temperature: float = Field(default=0.8, ge=0, le=2)
    top_files: int = Field(default=5, gt=0)
    test_command: str = "python -m pytest -q -p no:cacheprovider"
    step_timeout_s: float = Field(default=300.0, gt=0)
    max_file_chars: int = Field(default=40_000, gt=0)
    sampling: Sampling = Sampling()


def load_config(path: Path | None) -> BaselineConfig:
    """Read a baseline configuration file (None: the defaults).

    Raises:
        AgentSpecError: unreadable, not TOML, or a key that is unknown or out of range.
    """
    if path is None:
        return BaselineConfig()
    return read_toml_model(
        path,
        BaselineConfig,
        "baseline configuration",
        AgentSpecError,
        "see repogate.agents.baseline",
    )


def configuration(spec: ModelSpec) -> dict[str, Any]:
    """What a baseline run is configured with: versions, model, endpoint, settings, prompts."""
    return {
        "agent_version": f"repogate {__version__} {AGENT_VERSION}",
        "model": spec.model,
        "endpoint": endpoint_of(spec),
        "config": load_config(spec.config).model_dump(mode="json"),
        "prompts": prompts.digests(),
    }


@dataclass(frozen=True)
class _Scored:
    score: int
    sample: int
    edits: list[Edit]
    summary: str
    done: bool


def _score(output: str, repro: int | None) -> tuple[int, int, str]:
    counts = {"passed": 0, "failed": 0, "error": 0}
    for number, word in _COUNTS.findall(output[-4000:]):
        counts[word.rstrip("s") if word.startswith("error") else word] = int(number)
    failed = counts["failed"] + counts["error"]
    bonus = 0 if repro is None else (1 if repro == 0 else -1)
    said = f"{counts['passed']} passed, {failed} failed"
    if repro is not None:
        said += ", reproduction " + ("passed" if repro == 0 else f"exit {repro}")
    return counts["passed"] - failed + bonus, failed, said


def _entries(workspace: Path) -> set[str]:
    found: set[str] = set()
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = [d for d in dirs if not (folder == str(workspace) and d == ".git")]
        found.update(str((Path(folder) / n).relative_to(workspace)) for n in dirs + files)
    return found


def _remove_new(workspace: Path, before: set[str]) -> None:
    """Remove what validation left (caches, reproduction files), without following links."""
    for relative in sorted(_entries(workspace) - before, key=len):
        path = workspace / relative
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.is_symlink() or path.exists():
            path.unlink(missing_ok=True)


class BaselineAgent(ModelAgent[BaselineConfig]):
    """Localise, repair, validate (:class:`~repogate.protocols.Agent`; see the module docstring)."""

    def _sampling(self) -> Sampling:
        return self._config.sampling

    def _configuration(self) -> dict[str, Any]:
        return configuration(self._spec)

    def _loop(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy, meter: Meter
    ) -> tuple[str, str]:
        return "done", self._work(task, workspace, policy, meter)

    def _work(self, task: TaskView, workspace: Path, policy: SandboxPolicy, meter: Meter) -> str:
        chosen, files = self._localise(task, workspace, meter)
        contents = "\n\n".join(
            f"### {path}\n```\n{files[path][: self._config.max_file_chars]}\n```" for path in chosen
        )
        prompt = [
            ChatMessage(role="system", content=prompts.SYSTEM),
            ChatMessage(
                role="user",
                content=prompts.REPAIR.format(statement=_statement(task), contents=contents),
            ),
        ]
        best: _Scored | None = None
        try:
            for sample in range(self._budget.samples):
                scored = self._sample(sample, prompt, workspace, policy, meter)
                if scored is not None and (best is None or scored.score > best.score):
                    best = scored
                if scored is not None and scored.done:
                    break
            if best is None:
                raise GaveUp(
                    f"no usable edit in {counted(self._budget.samples, 'sample')} (none applied exactly)"
                )
            meter.recorder.add(Note(text=f"sample {best.sample} kept: {best.summary}"))
        finally:
            if best is not None:
                EditSession(workspace).apply_all(best.edits)
        return f"sample {best.sample} of {self._budget.samples} kept: {best.summary}"

    def _localise(
        self, task: TaskView, workspace: Path, meter: Meter
    ) -> tuple[list[str], dict[str, str]]:
        files = read_files(workspace)
        ranked = rank(files, _statement(task), self._config.top_files)
        meter.recorder.add(
            Note(text="BM25: " + (", ".join(f"{p} {s:.3f}" for p, s in ranked) or "no files"))
        )
        skeletons = "\n\n".join(f"### {p}\n{skeleton(p, files[p])}" for p, _ in ranked)
        reply = meter.complete(
            [
                ChatMessage(role="system", content=prompts.SYSTEM),
                ChatMessage(
                    role="user",
                    content=prompts.LOCALISE.format(
                        statement=_statement(task),
                        skeletons=skeletons,
                        limit=self._config.top_files,
                    ),
                ),
            ]
        )
        named = sorted((p for p in files if p in reply.text), key=reply.text.index)
        chosen = named[: self._config.top_files] or [p for p, _ in ranked[:2]]
        meter.recorder.add(Note(text="localised: " + ", ".join(chosen)))
        return chosen, files

    def _sample(
        self,
        sample: int,
        prompt: list[ChatMessage],
        workspace: Path,
        policy: SandboxPolicy,
        meter: Meter,
    ) -> _Scored | None:
        temperature = 0.0 if sample == 0 else self._config.temperature
        reply = meter.complete(prompt, temperature)
        edits = parse_edits(reply.text)
        if not edits:
            meter.recorder.add(Note(text=f"sample {sample}: no search/replace edit"))
            return None
        session = EditSession(workspace)
        steps, applied = session.apply_all(edits)
        for step in steps:
            meter.recorder.add(step)
        if not applied:
            meter.recorder.add(Note(text=f"sample {sample}: rejected (an edit did not match)"))
            return None
        try:
            score, failed, said = self._validate(reply.text, workspace, policy, meter)
        finally:
            session.undo()
        meter.recorder.add(Note(text=f"sample {sample}: score {score} ({said})"))
        done = failed == 0 and "reproduction passed" in said
        return _Scored(score, sample, edits, said, done)

    def _validate(
        self, reply: str, workspace: Path, policy: SandboxPolicy, meter: Meter
    ) -> tuple[int, int, str]:
        before = _entries(workspace)
        found = _REPRO.search(reply)
        step = self._config.step_timeout_s
        try:
            tests = run_action(self._config.test_command, workspace, policy, meter, step)
            repro = None
            if found is not None:
                write_bytes_nofollow(workspace, REPRO_FILE, found.group(1).encode() + b"\n")
                ran = run_action(f"python {REPRO_FILE}", workspace, policy, meter, step)
                repro = ran.returncode
        finally:
            _remove_new(workspace, before)
        return _score(tests.output, repro)


def _statement(task: TaskView) -> str:
    criteria = "\n".join(f"- {c.get('claim', '')}" for c in task.criteria)
    return task.statement + (f"\n\nCriteria:\n{criteria}" if criteria else "")
