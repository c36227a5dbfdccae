"""Cost of gate E's read trace: one graded test session with the guard's audit hook, against none.

A checkout is generated with N parametrized tests, each opening a data file of the package
itself and calling product code that opens another (the worst case for an ``open`` audit hook:
every test opens files). The same session is run by the harness's runner (real pytest in the
sandbox, JUnit report, guard loaded) with ``trace_reads`` on and off, alternating K times; the
medians are compared. The traced session runs once per task (gate E, cached with the base
state), never on a candidate.
Usage: `uv run python benchmarks/read_trace.py [--tests N] [--repeats K]`. Last line: `ratio: <x>`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from repogate.oracles.pytest_runner import run_tests
from repogate.sandbox import SandboxPolicy

COMMAND = "python -m pytest -p no:cacheprovider"


def make_checkout(root: Path, tests: int) -> Path:
    """Write a package that reads data files and a suite of ``tests`` tests that read them too."""
    (root / "pkg" / "data").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text(
        "from pathlib import Path\n\n\ndef factor(name):\n"
        "    return float((Path(__file__).parent / 'data' / name).read_text())\n"
    )
    for i in range(20):
        (root / "pkg" / "data" / f"f{i}.txt").write_text(f"{i}\n")
    (root / "tests" / "test_many.py").write_text(
        "from pathlib import Path\n\nimport pytest\n\nimport pkg\n\n"
        "DATA = Path(pkg.__file__).parent / 'data'\n\n\n"
        f"@pytest.mark.parametrize('n', range({tests}))\n"
        "def test_reads(n):\n    name = f'f{n % 20}.txt'\n"
        "    assert pkg.factor(name) == float((DATA / name).read_text())\n"
    )
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    python = Path(sys.executable)
    policy = SandboxPolicy(timeout_s=600)
    with tempfile.TemporaryDirectory(prefix="read-trace-") as scratch:
        work = make_checkout(Path(scratch) / "work", args.tests)
        ids = ["tests/test_many.py::test_reads[0]"]
        times: dict[bool, list[float]] = {False: [], True: []}
        for k in range(args.repeats):
            for traced in (False, True):
                start = time.perf_counter()
                ran = run_tests(
                    python,
                    work,
                    COMMAND,
                    ids,
                    Path(scratch) / f"r{k}{traced}",
                    policy,
                    trace_reads=traced,
                )
                times[traced].append(time.perf_counter() - start)
                if ran.status != "ok" or (traced and ran.reads is None):
                    raise SystemExit(f"run failed: {ran.reason}")
        plain, traced_s = statistics.median(times[False]), statistics.median(times[True])
        print(
            f"{args.tests} tests, {args.repeats} runs each: untraced {plain:.2f} s, traced {traced_s:.2f} s"
        )
        print(f"ratio: {traced_s / plain:.3f}")


if __name__ == "__main__":
    main()
