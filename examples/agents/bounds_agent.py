"""An example `cmd:` agent: the whole protocol, with a fixed rule where a model would think.

Run it on the embedded parser scenario (built by the README's first command into runs/demo):

    uv run --no-dev repogate run runs/demo/scenarios/parser/contract.toml \
        --agent "cmd:python3 examples/agents/bounds_agent.py" --out runs/my-agent

It reads its task from REPOGATE_TASK (JSON), edits files in its working folder (the workspace:
a checkout of the base commit), and leaves in REPOGATE_OUTPUT what it understood
(requirements.json), what it spent (usage.json), who it is (agent.json) and what it did
(trajectory.jsonl). The protocol is defined in docs/agents.md. Standard library only: it runs
with the task environment's Python, inside the sandbox, without network.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

TARGET = Path("confparse/parser.py")


def main() -> int:
    """Read the task, edit the workspace, leave the output files; exit 0."""
    task = json.loads(os.environ["REPOGATE_TASK"])
    output = Path(os.environ["REPOGATE_OUTPUT"])
    steps: list[dict[str, object]] = []

    def step(action: str, **detail: object) -> None:
        steps.append({"t": round(time.monotonic(), 3), "action": action, **detail})

    step("read_task", id=task["id"], statement=task["statement"], budget_s=task["time_budget_s"])
    claims = [
        {
            "claim": criterion["claim"],
            "source": "statement",
            "confidence": 0.9,
            "test_implication": "a test that fails before this change and passes after it",
            "criterion": criterion["id"],
        }
        for criterion in task["criteria"]
    ]
    # An implicit requirement the statement does not spell out, recovered by reading the code.
    claims.append(
        {
            "claim": "the bounds are inclusive and existing behaviour is kept",
            "source": "inferred",
            "confidence": 0.6,
            "test_implication": "timeout=300 and retries=10 still parse",
        }
    )
    if TARGET.is_file() and "upper bound" in task["statement"]:
        source = TARGET.read_text()
        source = source.replace(
            '    if value < low:\n        raise ConfigError(f"{key}: {value} is below {low}")',
            "    if not low <= value <= high:\n"
            '        raise ConfigError(f"{key}: {value} is outside {low}..{high}")',
        )
        keep = '            settings["mode"] = raw\n'
        source = source.replace(
            keep, keep + '        else:\n            raise ConfigError(f"unknown key {key!r}")\n'
        )
        TARGET.write_text(source)
        step("edit", path=str(TARGET), why="enforce upper bounds; reject unknown keys")
    else:
        step("give_up", why="this example knows only the parser scenario's task")

    (output / "requirements.json").write_text(json.dumps(claims, indent=2))
    (output / "usage.json").write_text(json.dumps({"tokens": 1234, "cost_usd": 0.01}))
    (output / "agent.json").write_text(
        json.dumps({"model": "none (a fixed rule)", "scaffold": "bounds_agent 1"})
    )
    with (output / "trajectory.jsonl").open("w") as trajectory:
        trajectory.writelines(json.dumps(s) + "\n" for s in steps)
    print(f"{task['id']}: {len(steps)} steps")  # kept as the attempt's agent.stdout.txt
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
