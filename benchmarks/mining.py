"""Task mining on a real repository: validated tasks per CPU-hour, and validation's overhead.

In one run:

1. `repogate tasks mine URL --range R --limit L --repeats N` runs as a subprocess on a local
   mirror (``--repo-cache``), into a fresh task-set folder, with the environment cache given by
   ``$REPOGATE_CACHE`` (warm it with a first run to leave environment builds out). Its CPU time
   (user + system of it and every process under it, the sandboxed tests included, sampled from /proc) and the number of validated tasks give **validated tasks
   per CPU-hour**.
2. For every validated task, the bare pytest runs validation needs are made directly on the same
   states, in the same venv, with no harness: N runs of (base + hidden tests) and N + 1 runs of
   (reference + hidden tests) — N to derive the ids, one for the gold attempt's verification (its
   base state comes from validation) — and, where libfaketime is installed, one more run of the
   reference under the clock ten years ahead (the date check, :mod:`repogate.tasks.dates`); and
   the gold attempt's regression run, when its selection chose tests beyond the graded ones
   (gate V's ``regression_tests_passed``, a hermetic check the reference must pass): those ids,
   once, on the reference. The trees are written with ``git archive`` beforehand and not timed;
   each bare run starts from no saved state, as repogate's runs do (an empty Hypothesis database).

The ratio is repogate's validation time over those bare runs: for each validated task, one
`repogate tasks check CONTRACT --repeats N` process (the same state checks and gold attempt that
mining made, the environment warm, interpreter start included) and then its bare runs, task by
task, so both sides see the same load on a shared machine. Usage::

    REPOGATE_CACHE=/tmp/rgcache uv run python benchmarks/mining.py  # MIRRORS: bare mirrors, as --repo-cache reads them \\
        --repo-cache MIRRORS --url https://github.com/pallets/click \\
        --range HEAD~300..HEAD --limit 8 --repeats 2

Last line: ``ratio: <x>``; the line before it gives the ratio over the touched-file runs alone
(the regression run left out of the baseline, as this benchmark counted before 2026-12-01), and
the one before that the median overhead per candidate in seconds (repogate's time minus the bare
runs'): mostly fixed per candidate (interpreter start, tree copies, the gold attempt's
bookkeeping), so the ratio falls as the tests take longer.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

from repogate.sandbox import SandboxPolicy
from repogate.tasks.dates import libfaketime, shifted

ROOT = Path(__file__).resolve().parent.parent


TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user + system CPU seconds) of a live process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS


class TreeCpu(threading.Thread):
    """Samples the CPU time of a process and all its descendants every 50 ms.

    getrusage(RUSAGE_CHILDREN) misses the tests: bubblewrap's PID namespace does not hand its
    children's times up to the caller, so the tree is read from /proc instead (processes that
    live less than one sample are missed; the tests live for seconds).
    """

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.seen: dict[int, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            stats = {}
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit() and (found := _stat(int(entry.name))) is not None:
                    stats[int(entry.name)] = found
            tree = {self.root}
            grew = True
            while grew:
                grew = False
                for pid, (parent, _cpu) in stats.items():
                    if parent in tree and pid not in tree:
                        tree.add(pid)
                        grew = True
            for pid in tree:
                if pid in stats:
                    self.seen[pid] = max(self.seen.get(pid, 0.0), stats[pid][1])
            self.done.wait(0.05)

    def seconds(self) -> float:
        return sum(self.seen.values())


def mirror_of(cache: Path, url: str) -> Path:
    owner, name = url.rstrip("/").split("/")[-2:]
    for rel in (f"{owner}+{name}/repo", f"{owner}+{name}", f"{owner}/{name}"):
        if (cache / rel / "HEAD").is_file() or (cache / rel / ".git").is_dir():
            return cache / rel
    raise SystemExit(f"no mirror of {url} in {cache}")


def archive(repo: Path, commit: str, dest: Path, paths: list[str] | None = None) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    args = ["git", "-C", str(repo), "archive", commit, *(["--", *paths] if paths else [])]
    data = subprocess.run(args, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=data, check=True)


def environment(env_cache: Path, digest: str) -> dict[str, object]:
    for record in env_cache.glob("*/record.json"):
        data = json.loads(record.read_text())["environment"]
        if data["digest"] == digest:
            return dict(data)
    raise SystemExit(f"no cached environment with digest {digest}")


def bare_run(
    env: dict[str, object], tree: Path, files: list[str], extra: dict[str, str] | None = None
) -> float:
    roots = [str(tree / str(r)) for r in env.get("import_roots", [])]  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory(prefix="bare-hypothesis-") as fresh:
        variables = {
            **os.environ,
            "VIRTUAL_ENV": str(env["venv"]),
            "PATH": f"{env['bin_dir']}:/usr/local/bin:/usr/bin:/bin",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": os.pathsep.join(roots),
            # each run starts from no saved state, as repogate's do (a fresh tree and an empty
            # Hypothesis database per run): a database kept from an earlier run of the same tree
            # made attrs' test files about 0.9 s (18 %) faster per run
            "HYPOTHESIS_STORAGE_DIRECTORY": fresh,
            **(extra or {}),
        }
        started = time.perf_counter()
        subprocess.run(
            ["python", "-m", "pytest", "-p", "no:cacheprovider", "-q", *files],
            cwd=tree,
            env=variables,
            capture_output=True,
            check=False,
        )
        return time.perf_counter() - started


def ours_env() -> dict[str, str]:
    """repogate's environment: this one, less ``PYTHONDONTWRITEBYTECODE``.

    With it set (some shells and CI images set it) every repogate process compiles its own
    modules again (0.8 s of each `tasks check` measured here), which is the machine's setting,
    not repogate's cost; the test runs on both sides set it themselves.
    """
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def regression_ids(run_dir: Path) -> list[str]:
    """The ids the gold attempt's regression run chose (``selected.txt``), or [] when none ran."""
    found = sorted(run_dir.glob("attempts/*/tests-regression/*/selected.txt"))
    return [line for line in found[0].read_text().splitlines() if line] if found else []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo-cache", type=Path, required=True)
    parser.add_argument("--url", default="https://github.com/pallets/click")
    parser.add_argument("--range", default="HEAD~300..HEAD")
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    cache = Path(os.environ.get("REPOGATE_CACHE", Path.home() / ".cache" / "repogate"))
    out = args.out or Path(tempfile.mkdtemp(prefix="mining-bench-")) / "set"
    if out.exists():
        shutil.rmtree(out)
    command = [
        sys.executable, "-m", "repogate.cli", "tasks", "mine", args.url, "--range", args.range,
        "--limit", str(args.limit), "--out", str(out), "--repo-cache", str(args.repo_cache),
        "--repeats", str(args.repeats),
    ]  # fmt: skip
    wall_before = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=ours_env())
    sampler = TreeCpu(process.pid)
    sampler.start()
    if process.wait() != 0:
        raise SystemExit(f"repogate tasks mine exited {process.returncode}")
    sampler.done.set()
    sampler.join()
    cpu = sampler.seconds()
    wall = time.perf_counter() - wall_before
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines() if line]
    rejected = [
        json.loads(line) for line in (out / "rejected.jsonl").read_text().splitlines() if line
    ]
    builds = sum(
        (r["validation"] or {}).get("build_seconds", 0.0)
        for r in [*tasks, *rejected]
        if (r["validation"] or {}).get("environment_cold")
    )
    print(f"candidates: {len(tasks) + len(rejected)}, validated: {len(tasks)}")
    print(f"wall {wall:.1f} s, CPU {cpu:.1f} s (cold environment builds {builds:.1f} s wall)")
    print(f"validated tasks per CPU-hour: {len(tasks) / (cpu / 3600):.1f}")
    mirror = mirror_of(args.repo_cache, args.url)
    ours = bare = bare_touched = 0.0
    overheads: list[float] = []
    scratch = Path(tempfile.mkdtemp(prefix="mining-bare-"))
    library = libfaketime()
    later = {} if library is None else dict(shifted(SandboxPolicy(), library).env)
    for task in tasks:
        v = task["validation"]
        commit = task["source"]["commit"]
        contract = tomllib.loads((out / task["contract"]).read_text())
        env = environment(cache / "envs", v["environment_digest"])
        tests = list(v["test_files"])
        base_tree, ref_tree = scratch / f"{commit}-base", scratch / f"{commit}-ref"
        archive(mirror, contract["base_commit"], base_tree)
        archive(mirror, commit, base_tree, list(contract["oracles"]["hidden_tests"]["paths"]))
        archive(mirror, commit, ref_tree)
        check = [
            sys.executable, "-m", "repogate.cli", "tasks", "check", str(out / task["contract"]),
            "--repo-cache", str(args.repo_cache), "--repeats", str(args.repeats),
        ]  # fmt: skip
        started = time.perf_counter()
        subprocess.run(check, cwd=ROOT, check=True, capture_output=True, env=ours_env())
        mine = time.perf_counter() - started
        runs = [bare_run(env, base_tree, tests) for _ in range(args.repeats)]
        runs += [bare_run(env, ref_tree, tests) for _ in range(args.repeats + 1)]
        if library is not None:  # the date check's run, as validation makes it
            runs.append(bare_run(env, ref_tree, tests, later))
        touched = sum(runs)
        # the gold attempt's regression run: the base-passing tests its selection chose, run on
        # the reference (gate V's regression_tests_passed, a hermetic check), once; read from the
        # mining run's gold attempt (`tasks check` removes its own), whose selection is the same
        selected = regression_ids(out / "validation" / task["id"])
        if selected:
            runs.append(bare_run(env, ref_tree, selected))
        print(
            f"{task['id']}: repogate {mine:.1f} s, bare pytest {sum(runs):.1f} s ({len(runs)} runs"
            f"; {len(selected)} regression ids)"
        )
        ours += mine
        overheads.append(mine - sum(runs))
        bare += sum(runs)
        bare_touched += touched
    shutil.rmtree(scratch, ignore_errors=True)
    if not bare:
        raise SystemExit("no validated task: widen --range or --limit")
    fixed = statistics.median(overheads)
    print(
        f"overhead per candidate (repogate minus bare, median): {fixed:.1f} s; a ratio of 1.15 "
        f"needs bare runs of {fixed / 0.15:.0f} s per candidate at this overhead"
    )
    print(f"ratio over the touched-file runs alone (no regression run): {ours / bare_touched:.3f}")
    print(f"ratio: {ours / bare:.3f}")


if __name__ == "__main__":
    main()
