"""The base's whole suite, recorded in one run under coverage with the read trace (issue 21).

The regression set is every test that passes at the base; a run under coverage alone would leave
out a test that fails only under a tracer (one that checks ``sys.gettrace()``, skips itself under
coverage, or times itself), and the regression check would never run it on a candidate. So the
ids that did not pass under coverage are run once more plainly, and those that pass there join
the set with no coverage: the selection must run them on every candidate, since nothing says what
they execute. Real pytest in a real uv environment, in the sandbox, as a run of gate V makes.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from repogate import environments
from repogate.contract import EnvironmentRecipe
from repogate.environments import Environment
from repogate.oracles.base_suite import (
    BaseSuite,
    coverage_run,
    record_base_suite,
    suite_command,
)
from repogate.oracles.graded_reads import TracedReads
from repogate.oracles.pytest_runner import run_tests
from repogate.oracles.regress_tools import PLUGIN_MODULE, tool_folder
from repogate.oracles.selection import FileChange, select
from repogate.sandbox import SandboxPolicy

pytestmark = pytest.mark.slow

COMMAND = "python -m pytest -p no:cacheprovider"
POLICY = SandboxPolicy(timeout_s=300)
PRODUCT = """
    import json
    from pathlib import Path


    def table():
        return json.loads((Path(__file__).parent / "data" / "table.json").read_text())


    def double(x):
        return 2 * x


    def triple(x):
        return 3 * x
"""
FILES = {
    "pkg/__init__.py": PRODUCT,
    "pkg/data/table.json": '{"a": 1}\n',
    # coverage would read these if it read a configuration; they must not show as reads
    ".coveragerc": "[run]\nbranch = True\n",
    "setup.cfg": "[coverage:run]\nbranch = True\n",
    # naming this folder aborts a plain session (exit 4): the rerun splits around it
    "examples/conftest.py": "import no_such_package_installed\n",
    "examples/test_e.py": "def test_e():\n    pass\n",
    "tests/data/expected.json": '{"a": 1}\n',
    "tests/data/late.json": "[3]\n",
    "tests/test_pkg.py": """
        import json
        import sys
        from pathlib import Path

        import pytest

        import pkg

        DATA = Path(__file__).parent / "data"


        def traced():
            monitoring = getattr(sys, "monitoring", None)  # Python 3.12+: coverage's sysmon core
            watched = monitoring is not None and monitoring.get_tool(monitoring.COVERAGE_ID)
            return sys.gettrace() is not None or bool(watched)


        def test_table():
            assert pkg.table() == json.loads((DATA / "expected.json").read_text())


        def test_double():
            assert pkg.double(2) == 4


        def test_untraced():
            assert not traced()
            assert pkg.triple(1) == json.loads((DATA / "late.json").read_text())[0]


        @pytest.mark.skipif(traced(), reason="not under a tracer")
        def test_skipped_under_coverage():
            assert pkg.double(0) == 0


        def test_broken():
            assert pkg.triple(1) == 4
    """,
}
T = "tests/test_pkg.py::"
UNTRACED, SKIPPED, BROKEN = (
    f"{T}test_untraced",
    f"{T}test_skipped_under_coverage",
    f"{T}test_broken",
)
PLAINLY = (SKIPPED, UNTRACED)
READS = TracedReads(
    test=("tests/data/expected.json", "tests/data/late.json"), product=("pkg/data/table.json",)
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Environment, Path]:
    """A uv environment with pytest, and the harness's tool folder (coverage, the plugin) for it."""
    root = tmp_path_factory.mktemp("env")
    (root / "install").mkdir()
    env = environments.build(
        environments.BuildRequest(
            recipe=EnvironmentRecipe(install=("uv pip install pytest",)),
            base_checkout=root / "install",
            cache_dir=root / "cache",
            policy=SandboxPolicy(timeout_s=600),
        )
    )
    return env, tool_folder(env, root / "cache")


def _checkout(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def _record(tmp_path: Path, env: Environment, tools: Path | str) -> BaseSuite:
    tree = _checkout(tmp_path / "base")
    return record_base_suite(env, tree, COMMAND, tmp_path / "evidence", POLICY, tools)


def _changed(old: str, new: str) -> FileChange:
    before = textwrap.dedent(PRODUCT).lstrip()
    return FileChange("pkg/__init__.py", "M", before.encode(), before.replace(old, new).encode())


def test_a_test_failing_only_under_coverage_is_in_the_set_and_selected_for_every_candidate(
    tmp_path: Path, built: tuple[Environment, Path]
) -> None:
    """A base-passing test must not drop out of the regression set because the coverage tracer
    broke it; with no coverage of its own (its partial context from the failed run is not kept),
    no candidate may leave it out. A test failing plainly too stays out, and a folder whose
    conftest cannot be imported costs the rerun nothing else."""
    env, tools = built
    suite = _record(tmp_path, env, tools)
    assert suite.status == "ok", suite.reason
    kinds = [r.kind for r in suite.runs]
    assert kinds[0] == "coverage" and set(kinds[1:]) == {"plain-rerun"}, suite.runs
    assert suite.runs[0].reason == ""
    assert len(suite.runs) <= 1 + 1 + 2 * 2  # the rerun, then halves around the broken folder
    assert suite.passing == (f"{T}test_double", SKIPPED, f"{T}test_table", UNTRACED)
    assert suite.passing_only_plainly == PLAINLY
    assert BROKEN not in suite.passing
    assert suite.coverage is not None, suite.coverage_reason
    assert sorted(suite.coverage.tests) == [BROKEN, f"{T}test_double", f"{T}test_table"]
    assert suite.duration_s == pytest.approx(sum(r.duration_s for r in suite.runs))
    assert suite.reads == READS  # what the untraced test read after its check: the rerun's

    for change in (_changed("2 * x", "x + x"), _changed("3 * x", "x * 3")):
        chosen = select([change], suite.passing, suite.coverage, (), ())
        assert not chosen.whole, chosen.reasons
        assert set(PLAINLY) <= set(chosen.tests)
        assert f"{T}test_table" not in chosen.tests  # a real selection, not the whole suite


def test_without_tools_the_suite_runs_once_plainly_and_the_record_says_why(
    tmp_path: Path, built: tuple[Environment, Path]
) -> None:
    env, _tools = built
    why = "coverage could not be installed: no network"
    suite = _record(tmp_path, env, why)
    assert suite.status == "ok", suite.reason
    assert [r.kind for r in suite.runs] == ["plain"]
    assert (suite.coverage, suite.coverage_reason) == (None, why)
    assert suite.passing == (f"{T}test_double", SKIPPED, f"{T}test_table", UNTRACED)
    assert suite.passing_only_plainly == ()
    assert suite.reads == READS
    chosen = select(
        [_changed("2 * x", "x + x")], suite.passing, None, (), (), no_coverage_reason=why
    )
    assert (chosen.whole, chosen.reasons, chosen.tests) == (True, (why,), suite.passing)


def test_a_coverage_run_without_a_usable_report_falls_back_to_the_plain_run(
    tmp_path: Path, built: tuple[Environment, Path]
) -> None:
    """A broken coverage run must cost the regression set nothing: the suite runs plainly, as it
    did before, and every candidate runs the whole base-passing set."""
    env, tools = built
    broken = tmp_path / "tools"  # the plugin beside a coverage that cannot be imported
    (broken / "coverage").mkdir(parents=True)
    shutil.copyfile(tools / f"{PLUGIN_MODULE}.py", broken / f"{PLUGIN_MODULE}.py")
    (broken / "coverage" / "__init__.py").write_text("raise ImportError('a broken coverage')\n")
    suite = _record(tmp_path, env, broken)
    assert suite.status == "ok", suite.reason
    assert [r.kind for r in suite.runs] == ["coverage", "plain"]
    assert suite.runs[0].reason != ""
    assert suite.coverage is None
    assert suite.coverage_reason.startswith("the coverage run gave no usable report: ")
    assert suite.passing == (f"{T}test_double", SKIPPED, f"{T}test_table", UNTRACED)
    assert suite.passing_only_plainly == ()
    assert suite.reads == READS


def test_the_one_run_traces_what_the_plain_run_traced_and_covers_what_the_coverage_run_did(
    tmp_path: Path, built: tuple[Environment, Path]
) -> None:
    """The read trace under coverage must see what it saw in a plain run: coverage's own files
    (its configuration, its data file, the tool folder) are not reads of test or product code,
    and a test failing under coverage before its read still has its read recorded."""
    env, tools = built
    tree = _checkout(tmp_path / "old")
    plain = run_tests(
        env, tree, suite_command(COMMAND), None, tmp_path / "plain", POLICY, trace_reads=True
    )
    _run, old_coverage, why = coverage_run(env, tree, COMMAND, tmp_path / "cov", POLICY, tools)
    assert old_coverage is not None, why
    new = _record(tmp_path, env, tools)
    assert new.reads == plain.reads == READS
    assert new.passing == tuple(sorted(t for t, o in plain.outcomes.items() if o == "passed"))
    assert new.coverage is not None
    assert new.coverage.untested == old_coverage.untested
    assert new.coverage.tests == {
        t: lines for t, lines in old_coverage.tests.items() if t not in PLAINLY
    }


@pytest.mark.parametrize(
    ("started", "outside"),
    [
        ("subprocess.run(['true'], check=True)", False),  # a program: none of the checkout's code
        ("os.system('true')", False),
        ("subprocess.run([sys.executable, '-c', 'pass'], check=True)", True),
        ("os.system(sys.executable + ' -c pass')", True),
        ("subprocess.run(['sh', 'tests/start.sh'], check=True)", True),  # a script of the checkout
    ],
    ids=["program", "shell-program", "python", "shell-python", "checkout-script"],
)
def test_a_child_started_outside_every_test_counts_when_it_may_run_the_checkout_s_code(
    tmp_path: Path, built: tuple[Environment, Path], started: str, outside: bool
) -> None:
    """A child started at import or collection makes the whole suite the selection only when it
    may run code of the checkout: seaborn's base started a program at import (matplotlib's font
    cache), and every seaborn candidate then ran its whole suite."""
    env, tools = built
    tree = _checkout(tmp_path / "base")
    (tree / "tests" / "start.sh").write_text("true\n")
    (tree / "conftest.py").write_text(f"import os\nimport subprocess\nimport sys\n\n{started}\n")
    suite = record_base_suite(env, tree, COMMAND, tmp_path / "evidence", POLICY, tools)
    assert suite.status == "ok", suite.reason
    assert suite.coverage is not None, suite.coverage_reason
    assert suite.coverage.spawned_outside is outside
    chosen = select([_changed("2 * x", "x + x")], suite.passing, suite.coverage, (), ())
    assert chosen.whole is outside, chosen.reasons
