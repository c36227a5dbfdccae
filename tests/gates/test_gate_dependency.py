from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from _lifecycle_git import commit, new_repo, write
from repogate import git
from repogate.contract import Lockfile
from repogate.gates._lockfiles import touched_projects, touches_dependencies
from repogate.gates.dependency import LockCache, check_dependency_policy
from repogate.git import ChangedPath
from repogate.receipt import Check
from repogate.sandbox import SandboxPolicy

PYPROJECT = """[project]
name = "demo"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = [{deps}]
"""
ONLINE = SandboxPolicy(network=True, timeout_s=120)
OFFLINE = SandboxPolicy(network=False, timeout_s=60)
UV = Lockfile(manager="uv")


def _uv_lock(folder: Path, *args: str, cache: Path | None = None) -> str:
    env = {**os.environ, "UV_CACHE_DIR": str(cache)} if cache is not None else None
    subprocess.run(
        ["uv", "lock", "-q", *args], cwd=folder, check=True, capture_output=True, env=env
    )
    return (folder / "uv.lock").read_text()


def _pyproject(*deps: str) -> str:
    return PYPROJECT.format(deps=", ".join(f'"{d}"' for d in deps))


def _scenario(
    tmp_path: Path, base: Mapping[str, str | None], cand: Mapping[str, str | None]
) -> tuple[Path, Path, tuple[git.ChangedPath, ...]]:
    repo, base_sha = new_repo(tmp_path / "repo", base)
    head = commit(repo, cand)
    base_dir, cand_dir = tmp_path / "base", tmp_path / "cand"
    git.export_tree(repo, base_sha, base_dir)
    git.export_tree(repo, head, cand_dir)
    return base_dir, cand_dir, git.changed_paths(repo, base_sha, head)


def _locked(tmp_path: Path, *deps: str) -> dict[str, str]:
    folder = tmp_path / "locking"
    folder.mkdir(exist_ok=True)
    (folder / "pyproject.toml").write_text(_pyproject(*deps))
    return {"pyproject.toml": _pyproject(*deps), "uv.lock": _uv_lock(folder)}


def _check(
    tmp_path: Path,
    base: Mapping[str, str | None],
    cand: Mapping[str, str | None],
    lock: Lockfile | None = UV,
    policy: SandboxPolicy = OFFLINE,
    cache: LockCache | None = None,
) -> tuple[Check, dict[str, Any]]:
    base_dir, cand_dir, changed = _scenario(tmp_path, base, cand)
    cache = cache if cache is not None else LockCache(folder=tmp_path / "lock-cache", network=True)
    seen = check_dependency_policy(lambda: (base_dir, cand_dir), lock, changed, policy, cache)
    return seen.checks[0], seen.details


def test_patch_touching_neither_passes_with_reason(tmp_path: Path) -> None:
    check, _ = _check(tmp_path, {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"}, lock=None)
    assert check.status == "passed"
    assert check.detail == "no manifest or lockfile changed"


def test_manifest_without_lockfile_passes_with_reason(tmp_path: Path) -> None:
    check, _ = _check(
        tmp_path, {"setup.cfg": "[metadata]\n"}, {"setup.cfg": "[metadata]\nx=1\n"}, lock=None
    )
    assert check.status == "passed"
    assert check.detail == "manifest changed without a lockfile to check: setup.cfg"


def test_manifest_edit_the_lock_still_matches_passes_offline(tmp_path: Path) -> None:
    base = _locked(tmp_path)
    cand = {"pyproject.toml": base["pyproject.toml"] + "\n[tool.ruff]\nline-length = 99\n"}
    check, details = _check(tmp_path, base, cand)
    assert check.status == "passed", check.detail
    assert details["projects"][0]["replay_reproduced"] is True


def test_version_bump_without_relock_fails_check_mode(tmp_path: Path) -> None:
    base = _locked(tmp_path)
    cand = {"pyproject.toml": base["pyproject.toml"].replace("0.1.0", "0.2.0")}
    check, _ = _check(tmp_path, base, cand)
    assert check.status == "failed"
    assert "uv lock --check --offline (check mode) exited" in check.detail


def test_lockfile_deleted_fails(tmp_path: Path) -> None:
    check, _ = _check(tmp_path, _locked(tmp_path), {"uv.lock": None})
    assert check.status == "failed"
    assert check.detail == "uv.lock: uv.lock was deleted"


def test_lock_manager_not_installed_is_an_error(tmp_path: Path) -> None:
    """A lockfile no installed manager can replay is unverified: error, never passed."""
    empty = tmp_path / "emptybin"
    empty.mkdir()
    base = _locked(tmp_path)
    cand = {"pyproject.toml": base["pyproject.toml"].replace("0.1.0", "0.2.0")}
    policy = SandboxPolicy(env={"PATH": str(empty)})
    check, _ = _check(tmp_path, base, cand, policy=policy)
    assert check.status == "error"
    assert "lock manager uv is not installed (uv not on PATH)" in check.detail


def test_poetry_lock_found_by_name_and_poetry_missing_is_an_error(tmp_path: Path) -> None:
    """A lockfile the contract does not declare is still checked when the patch touches it."""
    empty = tmp_path / "emptybin"
    empty.mkdir()
    base = {"pyproject.toml": "[tool.poetry]\n", "poetry.lock": "# lock\n"}
    check, details = _check(
        tmp_path,
        base,
        {"poetry.lock": "# edited\n"},
        lock=None,
        policy=SandboxPolicy(env={"PATH": str(empty)}),
    )
    assert check.status == "error"
    assert "lock manager poetry is not installed" in check.detail
    assert details["projects"][0]["manager"] == "poetry"


def test_pip_compile_output_found_by_header(tmp_path: Path) -> None:
    empty = tmp_path / "emptybin"
    empty.mkdir()
    header = (
        "# autogenerated by pip-compile with Python 3.11\n#\n#    pip-compile requirements.in\n"
    )
    base = {"requirements.in": "six\n", "requirements.txt": header + "six==1.16.0\n"}
    cand = {"requirements.txt": header + "six==1.17.0\n"}
    check, details = _check(
        tmp_path, base, cand, lock=None, policy=SandboxPolicy(env={"PATH": str(empty)})
    )
    assert check.status == "error"
    assert "lock manager pip-tools is not installed (pip-compile not on PATH)" in check.detail
    assert details["projects"][0]["manifest"] == "requirements.in"


def test_unreachable_index_is_an_error_never_a_pass(tmp_path: Path) -> None:
    """An index that cannot be reached leaves the lockfile unverified: error, never passed."""
    base = _locked(tmp_path)
    index = '\n[[tool.uv.index]]\nurl = "http://127.0.0.1:9/simple"\ndefault = true\n'
    cand = {"pyproject.toml": _pyproject("six") + index}
    cache = tmp_path / "empty-cache"
    policy = SandboxPolicy(
        network=True, timeout_s=60, env={"UV_CACHE_DIR": str(cache), "UV_HTTP_RETRIES": "0"}
    )
    check, _ = _check(tmp_path, base, cand, policy=policy)
    assert check.status == "error", check.detail
    assert "index unreachable: unverified" in check.detail


def test_offline_cache_miss_is_an_error(tmp_path: Path) -> None:
    base = _locked(tmp_path)
    cand = {"pyproject.toml": _pyproject("six")}
    policy = SandboxPolicy(network=False, env={"UV_CACHE_DIR": str(tmp_path / "empty-cache")})
    check, _ = _check(tmp_path, base, cand, policy=policy)
    assert check.status == "error"
    assert "index unreachable: unverified" in check.detail


@pytest.mark.slow
def test_hand_edited_pin_hash_passes_check_mode_but_fails_replay(tmp_path: Path) -> None:
    """A hand-edited lockfile hash satisfies ``uv lock --check``; replaying ``uv lock`` from the
    base lockfile exposes it, so a patch cannot slip an unvetted artifact into the lock."""
    base = _locked(tmp_path, "iniconfig")
    lock_text = base["uv.lock"]
    assert lock_text is not None
    marker = 'hash = "sha256:'
    at = lock_text.rindex(marker) + len(marker)
    tampered = lock_text[:at] + "0000" + lock_text[at + 4 :]
    check, details = _check(tmp_path, base, {"uv.lock": tampered}, policy=ONLINE)
    assert check.status == "failed", check.detail
    assert "does not reproduce the candidate's" in check.detail
    assert "sha256:0000" in check.detail
    assert details["projects"][0]["replay_reproduced"] is False


@pytest.mark.slow
def test_dependency_added_through_uv_lock_passes_and_allowlist_applies(tmp_path: Path) -> None:
    base = _locked(tmp_path)
    folder = tmp_path / "cand-lock"
    folder.mkdir()
    write(folder, {"pyproject.toml": _pyproject("iniconfig"), "uv.lock": base["uv.lock"]})
    cand = {"pyproject.toml": _pyproject("iniconfig"), "uv.lock": _uv_lock(folder)}
    check, details = _check(tmp_path, base, cand, policy=ONLINE)
    assert check.status == "passed", check.detail
    restricted = Lockfile(manager="uv", allow_new=("six",))
    check, details = _check(tmp_path / "again", base, cand, lock=restricted, policy=ONLINE)
    assert check.status == "failed"
    assert "new dependency 'iniconfig' is not in the contract's allow_new list" in check.detail
    assert details["projects"][0]["new_dependencies"] == ["iniconfig"]


@pytest.mark.slow
def test_manifest_dependency_added_without_relock_fails(tmp_path: Path) -> None:
    base = _locked(tmp_path)
    check, _ = _check(tmp_path, base, {"pyproject.toml": _pyproject("iniconfig")}, policy=ONLINE)
    assert check.status == "failed"
    assert "check mode" in check.detail


def test_candidate_checkout_is_not_written(tmp_path: Path) -> None:
    base = _locked(tmp_path)
    cand = {"pyproject.toml": base["pyproject.toml"].replace("0.1.0", "0.2.0")}
    base_dir, cand_dir, changed = _scenario(tmp_path, base, cand)
    before = sorted(cand_dir.iterdir())
    check_dependency_policy(lambda: (base_dir, cand_dir), UV, changed, OFFLINE)
    assert sorted(cand_dir.iterdir()) == before
    assert git.status_porcelain(cand_dir) == ()


@pytest.fixture(scope="module")
def pip_tools_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway venv holding pip-tools (installed from the index; skipped when unreachable)."""
    venv = tmp_path_factory.mktemp("pip-tools") / "venv"
    made = subprocess.run(["uv", "venv", "-q", str(venv)], capture_output=True, check=False)
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    done = subprocess.run(
        ["uv", "pip", "install", "-q", "pip-tools"], capture_output=True, env=env, check=False
    )
    if made.returncode or done.returncode:
        pytest.skip(f"pip-tools could not be installed: {done.stderr.decode()[-300:]}")
    return venv / "bin"


def _pip_compile(folder: Path, bin_dir: Path, requirements_in: str) -> str:
    (folder / "requirements.in").write_text(requirements_in)
    options = ["--no-emit-index-url", "--no-emit-find-links", "--strip-extras", "-q"]
    subprocess.run(
        [str(bin_dir / "pip-compile"), *options, "requirements.in"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    return (folder / "requirements.txt").read_text()


@pytest.mark.slow
def test_pip_compile_replay_reproduces_and_catches_a_hand_pin(
    tmp_path: Path, pip_tools_bin: Path
) -> None:
    """pip-tools has no check mode: the replay of the header's pip-compile command is the check."""
    work = tmp_path / "work"
    work.mkdir()
    base_txt = _pip_compile(work, pip_tools_bin, "iniconfig\n")
    grown_txt = _pip_compile(work, pip_tools_bin, "iniconfig\nsix\n")
    base = {"requirements.in": "iniconfig\n", "requirements.txt": base_txt}
    path = f"{pip_tools_bin}{os.pathsep}{os.environ['PATH']}"
    policy = SandboxPolicy(network=True, timeout_s=120, env={"PATH": path})
    grown = {"requirements.in": "iniconfig\nsix\n", "requirements.txt": grown_txt}
    check, _ = _check(tmp_path / "good", base, grown, lock=None, policy=policy)
    assert check.status == "passed", check.detail
    pin = base_txt.split("iniconfig==")[1].split("\n")[0]
    hand = {"requirements.txt": base_txt.replace(f"iniconfig=={pin}", "iniconfig==2.0.0")}
    check, _ = _check(tmp_path / "hand", base, hand, lock=None, policy=policy)
    assert check.status == "failed"
    assert f"-iniconfig=={pin} | +iniconfig==2.0.0" in check.detail


@pytest.mark.slow
def test_hand_edited_version_pin_is_not_passed(tmp_path: Path) -> None:
    """A pin changed by hand in uv.lock never passes: uv rejects the lock or the replay differs."""
    base = _locked(tmp_path, "iniconfig")
    lock_text = base["uv.lock"]
    assert lock_text is not None
    tampered = lock_text.replace(
        'name = "iniconfig"\nversion = "', 'name = "iniconfig"\nversion = "0.'
    )
    assert tampered != lock_text
    check, _ = _check(tmp_path, base, {"uv.lock": tampered}, policy=ONLINE)
    assert check.status == "failed", check.detail


BACKEND = """import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).sendall(b"reached")
except OSError:
    pass
raise RuntimeError("BACKEND-EXECUTED")
"""
DYNAMIC = """[project]
name = "demo"
dynamic = ["version"]
requires-python = ">=3.11"

[build-system]
requires = []
build-backend = "bk"
backend-path = ["."]
"""


@pytest.mark.parametrize(
    ("manifest", "why"),
    [
        (DYNAMIC, "dynamic metadata (version)"),
        (
            _pyproject()
            + '\n[build-system]\nrequires = []\nbuild-backend = "bk"\nbackend-path = ["."]\n',
            "in-tree build backend",
        ),
        (_pyproject() + '\n[tool.uv.sources]\nlib = { path = "lib" }\n', "local package source"),
    ],
)
def test_candidate_build_backend_is_never_run_even_with_the_network(
    tmp_path: Path, manifest: str, why: str
) -> None:
    """Threat (red team 4): the lockfile check made uv build the candidate's project, running its
    in-tree build backend with the base install's network grant. The candidate's backend must never
    run: not even a loopback listener on this machine hears from it, whatever the grant."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        base = _locked(tmp_path)
        cand = {
            "pyproject.toml": manifest,
            "uv.lock": 'version = 1\nrequires-python = ">=3.11"\n',
            "bk.py": BACKEND.format(port=port),
            "lib/pyproject.toml": DYNAMIC.replace("demo", "lib"),
            "lib/bk.py": BACKEND.format(port=port),
        }
        check, details = _check(tmp_path, base, cand, policy=ONLINE)
        with pytest.raises(TimeoutError):
            listener.accept()
    assert "BACKEND-EXECUTED" not in check.detail
    assert "commands" not in details["projects"][0]
    assert check.status == "error"
    assert why in check.detail


@pytest.mark.parametrize(
    "path",
    [
        "pyproject.toml", "sub/setup.cfg", "setup.py", "requirements.in", "requirements-dev.in",
        "uv.lock", "sub/poetry.lock", "requirements.txt", "requirements/test.txt",
        "src/app/core.py", "README.md", "tests/test_core.py", "locks/pinned.lock",
    ],
)  # fmt: skip
def test_touches_dependencies_is_false_only_where_no_project_is_found(
    tmp_path: Path, path: str
) -> None:
    """The clean trees are skipped when ``touches_dependencies`` is False: it must never be
    False for a path ``touched_projects`` would report (a lockfile edit would go unverified)."""
    for tree in (tmp_path / "base", tmp_path / "candidate"):
        folder = tree / posixpath.dirname(path)
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("pyproject.toml", "uv.lock", "poetry.lock"):
            (folder / name).write_text("")
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text("# via pip-compile\n# pip-compile requirements.in\n")
    changed = [ChangedPath("M", path, None, False)]
    declared = Lockfile(manager="uv", manifest="locks/pyproject.toml", lockfile="locks/pinned.lock")
    for lock in (None, declared):
        found, unlocked = touched_projects(changed, lock, tmp_path / "base", tmp_path / "candidate")
        if not touches_dependencies(changed, lock):
            assert (found, unlocked) == ([], [])
    unrelated = {"src/app/core.py", "README.md", "tests/test_core.py", "requirements/test.txt"}
    assert touches_dependencies(changed, declared) == (path not in unrelated)


# Issue 23: the lock replay ran ``uv lock --offline`` against the *user's* uv cache, so a fresh
# machine (no index pages for the locked packages there) gave ``error`` where a used one gave
# ``passed``. The verdict must not depend on what the caller's cache holds.


@pytest.fixture(params=["empty", "filled"])
def user_cache(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The caller's uv cache: empty (a fresh machine), or filled by the author's own ``uv lock``."""
    author = tmp_path / "author-uv-cache"
    folder = tmp_path / "xdg" if request.param == "empty" else author
    monkeypatch.delenv("UV_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if request.param == "filled":
        monkeypatch.setenv("UV_CACHE_DIR", str(author))
    return folder


def _author_locked(tmp_path: Path, *deps: str, args: tuple[str, ...] = ()) -> dict[str, str]:
    """Lock ``deps`` as an author would, with network and a cache of their own."""
    folder = tmp_path / "author"
    folder.mkdir(exist_ok=True)
    (folder / "pyproject.toml").write_text(_pyproject(*deps))
    lock = _uv_lock(folder, *args, cache=tmp_path / "author-uv-cache")
    return {"pyproject.toml": _pyproject(*deps), "uv.lock": lock}


def _relocked(tmp_path: Path, files: Mapping[str, str], *args: str) -> str:
    folder = tmp_path / "author"
    write(folder, dict(files))
    return _uv_lock(folder, *args, cache=tmp_path / "author-uv-cache")


@pytest.mark.slow
def test_stale_lockfile_regenerated_passes_whatever_the_users_cache_holds(
    tmp_path: Path, user_cache: Path
) -> None:
    """The payments ``stale-lockfile`` shape: the manifest's version moved, the agent ran
    ``uv lock`` (offline replay), from a base that locks a dependency with dependencies of its
    own on other platforms (pytest: colorama on Windows)."""
    base = _author_locked(tmp_path, "pytest>=8")
    manifest = base["pyproject.toml"].replace('version = "0.1.0"', 'version = "0.1.1"')
    cand = {
        "pyproject.toml": manifest,
        "uv.lock": _relocked(tmp_path, {"pyproject.toml": manifest}),
    }
    check, details = _check(tmp_path / "gate", base, cand)
    assert check.status == "passed", check.detail
    assert details["projects"][0]["replay_reproduced"] is True


@pytest.mark.slow
def test_stale_lockfile_edited_by_hand_fails_whatever_the_users_cache_holds(
    tmp_path: Path, user_cache: Path
) -> None:
    """The mimicking agent of the same shape: the project's version edited into uv.lock by hand
    (check mode accepts it; the replay writes the same, so the lockfile's other edits show)."""
    base = _author_locked(tmp_path, "pytest>=8")
    manifest = base["pyproject.toml"].replace('version = "0.1.0"', 'version = "0.1.1"')
    lock = base["uv.lock"].replace(
        'name = "demo"\nversion = "0.1.0"', 'name = "demo"\nversion = "0.1.1"'
    )
    marker = 'hash = "sha256:'
    at = lock.rindex(marker) + len(marker)
    lock = lock[:at] + "0000" + lock[at + 4 :]
    check, _ = _check(tmp_path / "gate", base, {"pyproject.toml": manifest, "uv.lock": lock})
    assert check.status == "failed", check.detail
    assert "does not reproduce the candidate's" in check.detail


@pytest.mark.slow
def test_check_mode_alone_needs_no_user_cache(tmp_path: Path, user_cache: Path) -> None:
    """Check mode alone decides: a dependency added to the manifest without relocking fails
    ``uv lock --check --offline`` (failed, never the cache miss's error)."""
    base = _author_locked(tmp_path, "pytest>=8")
    manifest = _pyproject("pytest>=8", "pluggy>=1")
    check, _ = _check(tmp_path / "gate", base, {"pyproject.toml": manifest})
    assert check.status == "failed", check.detail
    assert "uv lock --check --offline (check mode) exited" in check.detail


@pytest.mark.slow
def test_upgrade_package_moved_lockfile_is_decided_alike_whatever_the_users_cache_holds(
    tmp_path: Path, user_cache: Path
) -> None:
    """A lockfile moved with ``uv lock --upgrade-package`` to a version the base did not lock:
    offline, its metadata is known only if someone fetched it, so the verdict is ``error``
    (unverified) whether or not the caller's cache holds it; with the agent's network, passed."""
    base = _author_locked(tmp_path, "iniconfig>=1", args=("--upgrade-package", "iniconfig==2.0.0"))
    assert 'name = "iniconfig"\nversion = "2.0.0"' in base["uv.lock"]
    moved = _relocked(tmp_path, base, "--upgrade-package", "iniconfig==2.1.0")
    assert 'name = "iniconfig"\nversion = "2.1.0"' in moved
    check, _ = _check(tmp_path / "gate", base, {"uv.lock": moved})
    assert check.status == "error", check.detail
    assert "index unreachable: unverified" in check.detail
    check, _ = _check(tmp_path / "online", base, {"uv.lock": moved}, policy=ONLINE)
    assert check.status == "passed", check.detail


def _cache_files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


@pytest.mark.slow
def test_a_replay_never_writes_the_harness_lock_cache(tmp_path: Path, user_cache: Path) -> None:
    """Threat: the lock cache is shared between runs and mounted writable where uv reads the
    candidate's files; what a replay writes (here the index page of a dependency the candidate
    added, fetched with the agent's network) must land in a throwaway copy, never the cache the
    next replay (or another candidate) starts from."""
    base = _author_locked(tmp_path, "pytest>=8")
    manifest = _pyproject("pytest>=8", "six")
    cand = {
        "pyproject.toml": manifest,
        "uv.lock": _relocked(tmp_path, {"pyproject.toml": manifest}),
    }
    cache = LockCache(folder=tmp_path / "lock-cache", network=True)
    ruff = {"pyproject.toml": base["pyproject.toml"] + "\n[tool.ruff]\nline-length = 99\n"}
    check, details = _check(tmp_path / "first", base, ruff, cache=cache)
    assert check.status == "passed", check.detail
    assert details["projects"][0]["lock_cache"] == "filled"
    before = _cache_files(cache.folder)
    assert any("pytest" in name for name in before)
    check, details = _check(tmp_path / "online", base, cand, policy=ONLINE, cache=cache)
    assert check.status == "passed", check.detail
    after = _cache_files(cache.folder)
    assert after == before
    assert not any("six" in name for name in after)


def test_without_network_to_fill_it_the_lock_cache_stays_empty_and_says_why(
    tmp_path: Path, user_cache: Path
) -> None:
    """The recipe grants no network: nothing is fetched for the replay, whatever the user's
    cache holds, and the receipt says the cache was empty and why."""
    base = _author_locked(tmp_path, "iniconfig")
    manifest = base["pyproject.toml"].replace('version = "0.1.0"', 'version = "0.1.1"')
    cand = {
        "pyproject.toml": manifest,
        "uv.lock": _relocked(tmp_path, {"pyproject.toml": manifest}),
    }
    cache = LockCache(folder=tmp_path / "lock-cache", network=False)
    check, details = _check(tmp_path / "gate", base, cand, cache=cache)
    assert check.status == "error", check.detail
    assert "index unreachable: unverified" in check.detail
    assert details["projects"][0]["lock_cache"] == (
        "empty: the environment recipe grants no network to fill it"
    )
