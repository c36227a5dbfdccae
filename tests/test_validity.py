"""Every input that can change a test result changes the key its cached result is stored under."""

from __future__ import annotations

from pathlib import Path

from _venv_record import uv_record
from repogate.contract import Oracles
from repogate.validity import result_key, run_conditions


def test_every_run_condition_changes_the_result_key() -> None:
    """Timezone, locale, python, platform, test command and timeout each change the key."""
    env = uv_record(Path("/v"))
    toolchain = env.toolchain
    oracles = Oracles()
    key = result_key(run_conditions(env, oracles), "base")
    assert key == result_key(run_conditions(env, oracles), "base")
    variants = [
        (env.model_copy(update={"timezone": "Asia/Tokyo"}), oracles),
        (env.model_copy(update={"locale": "de_DE.UTF-8"}), oracles),
        (env.model_copy(update={"exclude_newer": "2024-01-01T00:00:00Z"}), oracles),
        (env.model_copy(update={"digest": "e"}), oracles),
        (
            env.model_copy(update={"toolchain": toolchain.model_copy(update={"python": "3.12.1"})}),
            oracles,
        ),
        (
            env.model_copy(
                update={"toolchain": toolchain.model_copy(update={"platform": "macosx"})}
            ),
            oracles,
        ),
        (env, oracles.model_copy(update={"test_command": "python -m pytest -x"})),
        (env, oracles.model_copy(update={"timeout_s": 5.0})),
    ]
    keys = {result_key(run_conditions(e, o), "base") for e, o in variants}
    assert key not in keys
    assert len(keys) == len(variants)
    assert result_key(run_conditions(env, oracles), "other") != key
