"""The sentinel on imported SWE-bench instances: the replay is anchored where history continued.

An instance's base is the pull request's base; the fix lands later, after other commits of the
branch (the *lag*), and the maintainers' next commits were written on top of the landing. Replayed
from the base, those commits conflicted or failed on every attempt, the reference patch's too
(pallets__flask-4045, -4992, -5063 and pylint-dev__pylint-5859, issue 21). Each repository here is
shaped like one such instance, one shape of the lag each:

- ``lag-elsewhere``: the fix is committed on the branch after commits in other files; the
  follow-up's new test calls code the lag added (flask-5063's kind: a regression);
- ``same-file``: the lag changed the fix's own file, away from the fix; the follow-up changes the
  lines the lag changed (a conflict in the fix's file);
- ``merge-landing``: the fix reaches the branch with a merge commit, after a packaging change made
  meanwhile on the branch that the follow-up changes again (flask-4045's kind: ``setup.py``).

The reference patch (the gold attempt) must pass the sentinel on each (the repositories:
`tests/_lagging_history.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _lagging_history import SHAPES, instance
from _tasks_repo import ENV_MAP
from repogate.cli import main


@pytest.mark.slow
def test_the_reference_passes_the_sentinel_whatever_the_base_lags_behind(
    tmp_path: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mirrors = tmp_path / "mirrors"
    rows, env = [], ""
    for name, build in SHAPES.items():
        base, pr = build(mirrors / f"acme+{name}")
        rows.append(instance(name, mirrors / f"acme+{name}", base, pr))
        env += ENV_MAP.format(name=f"acme/{name}")
    (tmp_path / "env.toml").write_text(env)
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    taskset = tmp_path / "set"
    args = ["tasks", "import", str(path), "--out", str(taskset), "--repo-cache", str(mirrors)]
    assert main([*args, "--env-map", str(tmp_path / "env.toml")]) == 0
    lines = (taskset / "tasks.jsonl").read_text().splitlines()
    validated = [json.loads(line)["id"] for line in lines]
    assert sorted(validated) == sorted(f"acme__{n}-1" for n in SHAPES)
    capsys.readouterr()
    run = ["run", str(taskset), "--agent", "gold", "--repo-cache", str(mirrors)]
    assert main([*run, "--out", str(tmp_path / "run"), "--json"]) == 0
    decided = {str(r["contract"]): r for r in json.loads(capsys.readouterr().out)}
    assert sorted(decided) == sorted(validated)
    sentinel = {}
    for task, row in decided.items():
        assert row["accepted"] is True, (task, row["failed"])
        (check,) = row["sentinel"]["checks"]
        assert check["name"] == "post_merge_sentinel_passed"
        sentinel[task] = (check["status"], check["detail"])
    assert {t: s for t, (s, _) in sentinel.items()} == dict.fromkeys(validated, "passed"), sentinel
