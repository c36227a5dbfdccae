"""The ``mini:MODEL[:CONFIG]`` agent: mini-swe-agent's loop in the harness, actions in the sandbox.

mini-swe-agent (SWE-agent/mini-swe-agent, the extra ``repogate[mini]``) is an agent loop over
three protocols: a model, an environment, an agent. Here its ``DefaultAgent`` runs unchanged in
the harness's process with two classes of ours:

- :class:`SeamModel`, its model: each query goes through repogate's model seam
  (:class:`~repogate.models.meter.Meter`: the contract's budgets, the trajectory), and the action
  is parsed from the reply's text with mini-swe-agent's own ``parse_regex_actions``;
- :class:`SandboxEnvironment`, its environment: each action runs with ``bash -c`` in repogate's
  sandbox on the attempt's workspace (:func:`repogate.agents.model_agent.run_action`), never
  on the harness's machine as its ``LocalEnvironment`` would.

CONFIG is a mini-swe-agent YAML configuration (its ``agent``, ``environment`` and ``model``
sections); the default is its text-based ``mini_textbased.yaml``. mini-swe-agent's own
trajectory (its ``serialize()``) is kept beside repogate's as ``mini-trajectory.json``. Its exit
statuses map to the agent's: ``Submitted`` is ``done``; ``LimitsExceeded`` and ``TimeExceeded``
(its own step and cost limits) and repogate's budgets are ``budget_exceeded``; anything else
(a failed model call, repeated format errors) is ``agent_error``.

Importing mini-swe-agent prints a banner and loads a ``.env`` file from its configuration folder
into the environment (API keys among them); it is imported with its banner off and an empty
configuration folder, so nothing of the user's files reaches the process that way.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from repogate._files import write_bytes_nofollow
from repogate._version import __version__
from repogate.agent_spec import ModelSpec
from repogate.agents.model_agent import ModelAgent, endpoint_of, run_action
from repogate.errors import AgentSpecError
from repogate.models.meter import Meter
from repogate.protocols import ChatMessage, TaskView
from repogate.sandbox import SandboxPolicy

ADAPTER_VERSION = "mini-adapter/1"
DEFAULT_CONFIG = "mini_textbased.yaml"
"""mini-swe-agent's built-in text-based configuration, used when the spec names none."""
_INSTALL = "install it with: uv pip install 'repogate[mini]' (or pip install mini-swe-agent)"
_ENDS = {
    "Submitted": "done",
    "LimitsExceeded": "budget_exceeded",
    "TimeExceeded": "budget_exceeded",
}


def _import(name: str) -> ModuleType:
    """Import a mini-swe-agent module with its banner off and an empty configuration folder."""
    import importlib

    keys = ("MSWEA_SILENT_STARTUP", "MSWEA_GLOBAL_CONFIG_DIR")
    saved = {key: os.environ.get(key) for key in keys}
    with tempfile.TemporaryDirectory(prefix="repogate-mini-") as empty:
        os.environ.update({"MSWEA_SILENT_STARTUP": "1", "MSWEA_GLOBAL_CONFIG_DIR": empty})
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            raise AgentSpecError(f"mini-swe-agent cannot be imported ({exc})", _INSTALL) from None
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def _config_text(spec: ModelSpec) -> tuple[str, str]:
    """The configuration's name and YAML text."""
    if spec.config is not None:
        try:
            return spec.config.name, spec.config.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AgentSpecError(
                f"mini-swe-agent configuration {spec.config} cannot be read ({exc})",
                "give a YAML file",
            ) from None
    folder = Path(_import("minisweagent.config").builtin_config_dir)
    return DEFAULT_CONFIG, (folder / DEFAULT_CONFIG).read_text(encoding="utf-8")


def load_config(spec: ModelSpec) -> dict[str, Any]:
    """Read the YAML configuration ``spec`` names (its sections as dicts).

    Raises:
        AgentSpecError: mini-swe-agent is not installed, or the file is unreadable or not a
            mapping of sections.
    """
    yaml = _import("yaml")
    name, text = _config_text(spec)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AgentSpecError(f"{name} is not YAML: {exc}", "fix it") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise AgentSpecError(f"{name} is not a mini-swe-agent configuration", "see its docs")
    return data


def configuration(spec: ModelSpec) -> dict[str, Any]:
    """Versions, model, endpoint, the configuration's digest and its templates' digests."""
    name, text = _config_text(spec)
    config = load_config(spec)
    templates = {
        f"{section}.{key}": hashlib.sha256(str(value).encode()).hexdigest()
        for section, values in sorted(config.items())
        for key, value in sorted(values.items())
        if key.endswith("template")
    }
    return {
        "agent_version": f"mini-swe-agent {metadata.version('mini-swe-agent')}; "
        f"repogate {__version__} {ADAPTER_VERSION}",
        "model": spec.model,
        "endpoint": endpoint_of(spec),
        "config": {"name": name, "sha256": hashlib.sha256(text.encode()).hexdigest()},
        "prompts": templates,
        "sampling": config.get("model", {}).get("model_kwargs", {}),
        "limits": {k: v for k, v in config.get("agent", {}).items() if k.endswith("limit")},
    }


class SeamModel:
    """mini-swe-agent's model protocol over repogate's model seam (text-based actions)."""

    def __init__(self, meter: Meter, config: dict[str, Any], name: str) -> None:
        self._meter = meter
        self._actions = _import("minisweagent.models.utils.actions_text")
        self._temperature = float(config.get("model_kwargs", {}).get("temperature", 0.0))
        self.config = {
            "model_name": name,
            "action_regex": config.get("action_regex", r"```mswea_bash_command\s*\n(.*?)\n```"),
            "format_error_template": config.get(
                "format_error_template", "Please give exactly one action; found {{actions|length}}."
            ),
            "observation_template": config.get(
                "observation_template",
                "<returncode>{{output.returncode}}</returncode>\n<output>\n{{output.output}}</output>",
            ),
        }

    def query(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        """One model call through the meter; the reply's action parsed (a FormatError otherwise)."""
        prompt = [
            ChatMessage(role=m["role"], content=str(m.get("content") or ""))
            for m in messages
            if m.get("role") in ("system", "user", "assistant")
        ]
        reply = self._meter.complete(prompt, self._temperature)
        actions = self._actions.parse_regex_actions(
            reply.text,
            action_regex=self.config["action_regex"],
            format_error_template=self.config["format_error_template"],
            template_kwargs={"finish_reason": reply.finish_reason},
        )
        return {
            "role": "assistant",
            "content": reply.text,
            "extra": {"actions": actions, "cost": reply.usage.cost_usd, "model": reply.model},
        }

    def format_message(self, **kwargs: Any) -> dict[str, Any]:
        """A message as mini-swe-agent's agent keeps it."""
        return dict(kwargs)

    def format_observation_messages(
        self, message: dict[str, Any], outputs: list[dict[str, Any]], template_vars: Any = None
    ) -> list[dict[str, Any]]:
        """Observations rendered with the configuration's template (mini-swe-agent's function)."""
        rendered: list[dict[str, Any]] = self._actions.format_observation_messages(
            outputs,
            observation_template=self.config["observation_template"],
            template_vars=template_vars,
        )
        return rendered

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        """The model's settings, for templates."""
        return dict(self.config)

    def serialize(self) -> dict[str, Any]:
        """The model's part of mini-swe-agent's trajectory."""
        return {"info": {"config": {"model": self.config, "model_type": "repogate.SeamModel"}}}


class SandboxEnvironment:
    """mini-swe-agent's environment protocol: each action in repogate's sandbox on the workspace."""

    def __init__(
        self, workspace: Path, policy: SandboxPolicy, meter: Meter, config: dict[str, Any]
    ) -> None:
        self._workspace = workspace
        self._meter = meter
        env = {str(k): str(v) for k, v in config.get("env", {}).items()}
        self._policy = policy.model_copy(update={"env": {**policy.env, **env}})
        self._timeout = float(config.get("timeout", 60))
        self._submitted = _import("minisweagent.exceptions").Submitted
        self.config = {"cwd": str(workspace), "timeout": self._timeout, "env": env}

    def execute(self, action: dict[str, Any], cwd: str = "", **kwargs: Any) -> dict[str, Any]:
        """Run ``action["command"]``; its first output line ending the task submits it."""
        done = run_action(
            str(action.get("command", "")),
            self._workspace,
            self._policy,
            self._meter,
            float(kwargs.get("timeout") or self._timeout),
        )
        output = {
            "output": done.output,
            "returncode": done.returncode,
            "exception_info": f"timed out after {self._timeout:g} s" if done.timed_out else "",
        }
        lines = done.output.lstrip().splitlines(keepends=True)
        if (
            lines
            and lines[0].strip() == "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
            and done.returncode == 0
        ):
            submission = "".join(lines[1:])
            raise self._submitted(
                {
                    "role": "exit",
                    "content": submission,
                    "extra": {"exit_status": "Submitted", "submission": submission},
                }
            )
        return output

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        """The environment's settings and the machine's name (never the process's variables)."""
        return {**self.config, **platform.uname()._asdict(), **kwargs}

    def serialize(self) -> dict[str, Any]:
        """The environment's part of mini-swe-agent's trajectory."""
        return {"info": {"config": {"environment": self.config, "environment_type": "repogate"}}}


class MiniAgent(ModelAgent[dict[str, Any]]):
    """mini-swe-agent's ``DefaultAgent`` with :class:`SeamModel` and :class:`SandboxEnvironment`."""

    def _configuration(self) -> dict[str, Any]:
        return configuration(self._spec)

    def _loop(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy, meter: Meter
    ) -> tuple[str, str]:
        default = _import("minisweagent.agents.default")
        model = SeamModel(meter, self._config.get("model", {}), self._spec.model)
        env = SandboxEnvironment(workspace, policy, meter, self._config.get("environment", {}))
        known = set(default.AgentConfig.model_fields)
        settings = {k: v for k, v in self._config.get("agent", {}).items() if k in known}
        agent = default.DefaultAgent(model, env, **{**settings, "output_path": None})
        try:
            ended = agent.run(task.statement)
        finally:  # its own record, whatever the end
            own = json.dumps(agent.serialize(), indent=1, default=str).encode()
            write_bytes_nofollow(output, "mini-trajectory.json", own)
        exit_status = str(ended.get("exit_status", ""))
        return _ENDS.get(exit_status, "agent_error"), (
            f"mini-swe-agent exit status {exit_status or 'none'}"
        )
