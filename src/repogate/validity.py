"""What makes a cached test result valid: every input that can change it is part of its key.

repogate caches three kinds of result (``docs/architecture.md``, "Caches"): built environments,
base-state results (with the reference patch's validation) and the sentinel's real-history
results. A cached result may be reused only where running again would give the same result, so
its key holds everything a test run's outcome is a function of. :func:`run_conditions` lists the
inputs common to every test run: the environment digest (python version, implementation and
platform, uv, the resolved packages, timezone, locale and resolution bound), the timezone and
locale again (spelled out for people reading the cache), the test command with the harness's
arguments (fixed by the evaluator version), the test timeout, the isolation in force (a test may
behave differently with the network reachable), and the evaluator version. Each cache adds what
is its own: the commit, the hidden test patch, the graded ids, the reference patch, the graded
text inside editable files, the test selection.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from repogate import sandbox
from repogate._version import __version__
from repogate.contract import Oracles
from repogate.environments import Environment


def run_conditions(env: Environment, oracles: Oracles) -> dict[str, object]:
    """Return the conditions every graded test run of a task happens under (see module docs)."""
    return {
        "evaluator": __version__,
        "environment": env.digest,
        "python": f"{env.toolchain.implementation} {env.toolchain.python}",
        "platform": env.toolchain.platform,
        "timezone": env.timezone,
        "locale": env.locale,
        "exclude_newer": env.exclude_newer,
        "test_command": oracles.test_command,
        "timeout_s": oracles.timeout_s,
        "isolation": sandbox.isolation(False).kind,
    }


def result_key(conditions: Mapping[str, object], *parts: object) -> str:
    """Return sha256 (hex) over ``conditions`` and a cache's own ``parts`` (JSON-serialisable)."""
    payload = json.dumps([dict(conditions), list(parts)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()
