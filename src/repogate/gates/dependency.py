"""Gate check ``dependency_policy_passed``: a changed lockfile is exactly what its manager writes.

When the patch touches a manifest or a lockfile, for each project touched (see
:mod:`repogate.gates._lockfiles`), in a scratch copy of the candidate tree:

1. **check mode**: the lockfile agrees with the manifest (``uv lock --check``,
   ``poetry check --lock``; pip-tools has none);
2. **replay**: the base lockfile is put back and the manager's lock command is run with the
   candidate manifest (``uv lock``, ``poetry lock``, the ``pip-compile`` command the file's header
   records); the result must equal the candidate lockfile byte for byte. Check modes alone accept
   a hand-edited pin or hash (uv keeps whatever a lockfile says as long as it still satisfies the
   manifest), so the replay is what catches them;
3. **allowlist**: with ``allow_new`` in the contract, a dependency name the candidate manifest
   declares and the base did not must be on the list.

A manager that is not installed, or an index that cannot be reached (read from the manager's
stderr), leaves the lockfile unverified: ``error``, never ``passed``. The manager runs on the
candidate's files in the sandbox with the agent's network grant (``permissions.network``), never
the base install's; without it uv runs ``--offline``, from a throwaway copy of the harness's lock
cache (:class:`LockCache`), filled from the base lockfile alone, never from the user's uv cache:
the verdict does not depend on who runs repogate. A version the base does not lock (an upgraded
or added package) is then not in that cache, and the lockfile is left unverified (``error``)
unless the agent is granted the network. The manager never builds
the candidate's project: a manifest whose metadata only a build gives (``dynamic`` fields, an
in-tree backend, local package sources, ``setup.py``) leaves the lockfile unverified (``error``)
before any command runs, since the build backend is candidate code. A definite failure (the lockfile disagrees, the replay
differs, a dependency outside the allowlist) fails the check even if another project errored.

Limits: a replay resolves new dependencies against today's index, so a lockfile written before a
newer release appeared can differ for that reason alone; the detail shows the difference.
pip-compile's header names the Python version and may embed index options from the machine's pip
configuration, so its replay reproduces only lockfiles compiled under the same conditions; a pin
made with pip-compile's ``--upgrade-package`` is not in the header and so is not replayed (uv's
is: each locked version that moved is replayed with ``--upgrade-package name==version``). The poetry path
(``poetry check --lock``, then ``poetry lock``, which keeps locked versions since poetry 2) is
not exercised by this project's tests.
"""

from __future__ import annotations

import difflib
import hashlib
import posixpath
import shlex
import shutil
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from repogate import sandbox
from repogate._files import read_bytes_nofollow, unlink_nofollow, write_bytes_nofollow
from repogate._locks import locked
from repogate._model import FrozenModel
from repogate.contract import Lockfile
from repogate.gates._commands import (
    describe_failure,
    granted,
    looks_like_network_failure,
    system_path,
)
from repogate.gates._lockfiles import (
    Project,
    declared_names,
    normalise_name,
    pip_compile_command,
    touched_projects,
    touches_dependencies,
)
from repogate.git import ChangedPath
from repogate.receipt import Check, Observation, Status
from repogate.sandbox import SandboxPolicy
from repogate.vocabulary import CheckName, ErrorKind

CHECK: CheckName = "dependency_policy_passed"
_PROGRAM = {"uv": "uv", "poetry": "poetry", "pip-tools": "pip-compile"}


class LockCache(FrozenModel):
    """The harness's own uv cache for lock replays, filled from the base lockfile.

    A replay without the network (``uv lock --offline``) resolves from a cache, and which cache it
    reads decides the verdict; the user's own (``~/.cache/uv``) holds whatever that user happened
    to lock before, so the verdict would depend on who runs repogate (issue 23). Instead the
    harness keeps, under ``folder``, one uv cache per base manifest and lockfile (named by their
    sha256), filled once by a ``uv lock`` of the **base** project alone in the sandbox, with every
    locked registry package held at its locked version (``--upgrade-package name==version``): the
    index pages and metadata of exactly what the base locks, on every platform the lock covers.
    Each verification then runs on a throwaway copy of it, so the candidate-driven manager never
    writes a cache anything else reads (a shared writable cache could be poisoned for later runs).

    Attributes:
        folder: where the filled caches live (created when absent); the harness's, never the user's.
        network: whether filling it may reach the index: the environment recipe's grant (the base's
            own install commands reach the same index with the same files). Without it, or when the
            base project cannot be locked without building it, the replay starts from an empty cache.
    """

    folder: Path
    network: bool


def _registry_pins(lock_text: str | None) -> list[str]:
    """``--upgrade-package name==version`` for every package of a uv.lock that comes from an index."""
    try:
        packages = tomllib.loads(lock_text or "").get("package", [])
    except tomllib.TOMLDecodeError:
        return []
    return [
        arg
        for p in packages
        if isinstance(p, dict) and isinstance(p.get("source"), dict) and "registry" in p["source"]
        for arg in ("--upgrade-package", f"{p.get('name')}=={p.get('version')}")
    ]


def _fill(entry: Path, base: Path, project: Project, policy: SandboxPolicy, network: bool) -> str:
    """Fill the uv cache ``entry/uv`` from the base manifest and lockfile; say how it stands.

    ``filled`` (then kept: ``entry/filled``), or why it is empty: no network, nothing locked from
    an index, a base that only a build describes, or the fill command's failure (tried again by
    the next verification). The caller holds the entry's lock.

    Raises:
        OSError: the cache folder cannot be written, or the base's files not read.
    """
    if (entry / "filled").exists():
        return "filled"
    (entry / "uv").mkdir(parents=True, exist_ok=True)
    manifest = read_bytes_nofollow(base, project.manifest) or b""
    lockfile = read_bytes_nofollow(base, project.lockfile) or b""
    pins = _registry_pins(lockfile.decode("utf-8", "replace"))
    if not network:
        return "empty: the environment recipe grants no network to fill it"
    if not pins:
        return "empty: the base lockfile locks nothing from an index"
    if _builds_candidate(base, project) is not None:
        return "empty: the base project is only described by building it"
    config = posixpath.join(project.folder, "uv.toml")  # where the project may name its index
    files = {project.manifest: manifest, project.lockfile: lockfile}
    files |= {config: data} if (data := read_bytes_nofollow(base, config)) is not None else {}
    with tempfile.TemporaryDirectory(prefix="repogate-lockfill-") as tmp:
        tree = Path(tmp)  # the base's manifest, lockfile and uv.toml alone: nothing else is read
        for name, data in files.items():
            write_bytes_nofollow(tree, name, data, make_parents=True)
        env = {**policy.env, "UV_CACHE_DIR": str(entry / "uv"), "UV_PYTHON_DOWNLOADS": "never"}
        fill = granted(policy.model_copy(update={"env": env}), network=True).model_copy(
            update={"writable": (tree, entry / "uv")}
        )
        result = sandbox.run(["uv", "lock", *pins], tree / project.folder, fill)
    if not result.ok:
        return describe_failure("empty: filling it from the base failed", result)
    (entry / "filled").touch()
    return "filled"


def _private_cache(
    cache: LockCache | None, base: Path, project: Project, policy: SandboxPolicy, tmp: Path
) -> tuple[Path, str]:
    """Return a uv cache for one verification and how it stands (see :func:`_fill`).

    The cache is a copy, in ``tmp``, of the harness's one for this base (one per sha256 of the
    base manifest and lockfile, filled once), or empty; nothing else ever reads the copy.

    Raises:
        OSError, shutil.Error: the harness's cache cannot be written or copied.
    """
    private = tmp / "uv-cache"
    if cache is None or project.manager != "uv":
        private.mkdir()
        return private, "empty: no harness lock cache" if cache is None else "unused"
    manifest = read_bytes_nofollow(base, project.manifest) or b""
    lockfile = read_bytes_nofollow(base, project.lockfile) or b""
    digest = hashlib.sha256(b"%d\0%b%b" % (len(manifest), manifest, lockfile)).hexdigest()
    entry = cache.folder / digest
    with locked(cache.folder / f"{digest}.lock"):  # copied whole: never while it is being filled
        state = _fill(entry, base, project, policy, cache.network)
        shutil.copytree(entry / "uv", private, symlinks=True)
    return private, state


def _builds_candidate(tree: Path, project: Project) -> str | None:
    """Say why the manager would build (run) the candidate's own code for metadata; None if not.

    uv (0.13 tried: ``--offline``, ``--no-build``, ``--no-build-package`` do not stop it) runs a
    project's build backend whenever its metadata is not static: a ``[project]`` table that is
    missing or lists ``dynamic`` fields, a backend loaded from the tree (``backend-path``), or a
    package taken from a local path (``[tool.uv.sources]`` ``path``, workspace members). That
    backend is candidate code, so the harness never lets the manager reach that point.
    pip-compile on a ``pyproject.toml``/``setup.py``/``setup.cfg`` builds the project the same way.
    """
    if project.manager == "poetry":  # poetry check --lock / poetry lock read [tool.poetry] only
        return None
    name = posixpath.basename(project.manifest)
    if name in ("setup.py", "setup.cfg"):
        return f"{project.manifest} is only read by building the project"
    if name != "pyproject.toml":
        text = (read_bytes_nofollow(tree, project.manifest) or b"").decode("utf-8", "replace")
        local = [
            w
            for w in text.split()
            if w in ("-e", "--editable") or w.startswith((".", "/", "file:"))
        ]
        return f"{project.manifest} names a local package ({local[0]})" if local else None
    try:
        data = tomllib.loads((read_bytes_nofollow(tree, project.manifest) or b"").decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return f"{project.manifest} cannot be read ({exc})"
    table = data.get("project")
    uv = data.get("tool", {}).get("uv", {}) if isinstance(data.get("tool"), dict) else {}
    sources = uv.get("sources", {}) if isinstance(uv, dict) else {}
    if not isinstance(table, dict):
        return f"{project.manifest} has no [project] table: no static metadata"
    if table.get("dynamic"):
        return f"{project.manifest} declares dynamic metadata ({', '.join(map(str, table['dynamic']))})"
    if "backend-path" in data.get("build-system", {}):
        return f"{project.manifest} loads an in-tree build backend (build-system.backend-path)"
    if isinstance(uv, dict) and "workspace" in uv:
        return f"{project.manifest} declares a uv workspace, whose members are built"
    if isinstance(sources, dict) and any(
        isinstance(v, dict) and ("path" in v or "workspace" in v) for v in sources.values()
    ):
        return f"{project.manifest} takes a local package source ([tool.uv.sources]), built by uv"
    return None


def _uv_versions(text: str | None) -> dict[str, str]:
    """Return ``{package name: version}`` of a ``uv.lock`` (empty when absent or unreadable)."""
    try:
        packages = tomllib.loads(text or "").get("package", [])
    except tomllib.TOMLDecodeError:
        return {}
    return {
        str(p["name"]): str(p["version"])
        for p in packages
        if isinstance(p, dict) and "name" in p and "version" in p
    }


def _upgrades(base_text: str | None, lock_text: str | None) -> list[str]:
    """Return ``--upgrade-package name==version`` for each locked version that moved.

    That is how a bump made with ``uv lock -P`` (a person, Dependabot, Renovate) is replayed. The
    hashes and sources still come from the index, so a hand-edited hash does not reproduce.
    """
    before, after = _uv_versions(base_text), _uv_versions(lock_text)
    moved = sorted(n for n, v in after.items() if n in before and before[n] != v)
    return [arg for n in moved for arg in ("--upgrade-package", f"{n}=={after[n]}")]


def _commands(
    project: Project, lock_text: str | None, network: bool, base_text: str | None = None
) -> tuple[list[str] | None, list[str] | None]:
    """Return (check argv or None, lock argv or None: the replay cannot be known)."""
    if project.manager == "uv":
        offline = [] if network else ["--offline"]
        upgrades = _upgrades(base_text, lock_text)
        return ["uv", "lock", "--check", *offline], ["uv", "lock", *offline, *upgrades]
    if project.manager == "poetry":
        return ["poetry", "check", "--lock"], ["poetry", "lock"]
    command = pip_compile_command(lock_text)
    return None, shlex.split(command) if command else None


class _Outcome:
    """What one project's verification found: status, sentences, facts for ``details``.

    ``timed_out`` is True when a manager command reached its time budget.
    """

    def __init__(self, project: Project) -> None:
        self.status: Status = "passed"
        self.reasons: list[str] = []
        self.timed_out = False
        self.facts: dict[str, Any] = {
            "manager": project.manager,
            "manifest": project.manifest,
            "lockfile": project.lockfile,
        }

    def fail(self, status: Status, reason: str) -> None:
        if status == "failed" or self.status == "passed":
            self.status = status
        self.reasons.append(reason)


def _first_difference(expected: bytes, got: bytes) -> str:
    a = expected.decode("utf-8", "replace").splitlines()
    b = got.decode("utf-8", "replace").splitlines()
    changes = [
        line
        for line in difflib.unified_diff(a, b, "replayed", "candidate", n=0, lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return " | ".join(changes[:4])


def _run(
    argv: list[str], tree: Path, out: _Outcome, policy: SandboxPolicy, *, replay: bool
) -> bool:
    """Run one manager command in ``tree``; record why it failed. True when it succeeded.

    An unreachable index or a timeout is ``error``; otherwise a failing check mode is ``failed``
    (the lockfile disagrees with the manifest) and a failing replay ``error`` (nothing to compare).
    """
    what = f"{shlex.join(argv)} ({'replay from the base lockfile' if replay else 'check mode'})"
    result = sandbox.run(argv, tree, policy)
    out.facts.setdefault("commands", []).append({"argv": argv, "returncode": result.returncode})
    if result.ok:
        return True
    out.timed_out |= result.timed_out
    if result.timed_out or looks_like_network_failure(result.stderr):
        out.fail("error", describe_failure(f"{what}, index unreachable: unverified", result))
    else:
        out.fail("error" if replay else "failed", describe_failure(what, result))
    return False


def _verify(
    project: Project,
    base: Path,
    candidate: Path,
    lock: Lockfile | None,
    policy: SandboxPolicy,
    cache: LockCache | None,
) -> _Outcome:
    out = _Outcome(project)
    if lock is not None and lock.allow_new is not None:
        allowed = {normalise_name(n) for n in lock.allow_new}
        new = declared_names(candidate, project.manifest) - declared_names(base, project.manifest)
        out.facts["new_dependencies"] = sorted(new)
        for name in sorted(new - allowed):
            out.fail("failed", f"new dependency {name!r} is not in the contract's allow_new list")
    try:  # the candidate's tree: a lockfile (or a folder on its way) that is a link is refused
        cand_bytes = read_bytes_nofollow(candidate, project.lockfile)
        base_bytes = read_bytes_nofollow(base, project.lockfile)
    except OSError as exc:
        out.fail("failed", f"{project.lockfile} is not a regular file ({exc.strerror})")
        return out
    if cand_bytes is None:
        if base_bytes is not None:
            out.fail("failed", f"{project.lockfile} was deleted")
        else:
            out.fail("error", f"{project.lockfile} does not exist at the base or the candidate")
        return out
    program = _PROGRAM[project.manager]
    if shutil.which(program, path=system_path(policy.env)) is None:
        out.fail(
            "error", f"lock manager {project.manager} is not installed ({program} not on PATH)"
        )
        return out
    try:
        builds = _builds_candidate(candidate, project)
    except OSError as exc:
        builds = f"{project.manifest} is not a regular file ({exc.strerror})"
    if builds is not None:
        out.fail(
            "error",
            f"{project.lockfile} unverified: {builds}; checking it would run the candidate's build "
            "backend, which the harness never does",
        )
        return out
    lock_text = cand_bytes.decode("utf-8", "replace")
    base_text = base_bytes.decode("utf-8", "replace") if base_bytes is not None else None
    check, replay = _commands(project, lock_text, policy.network, base_text)
    with tempfile.TemporaryDirectory(prefix="repogate-lock-") as tmp:
        try:
            uv_cache, out.facts["lock_cache"] = _private_cache(
                cache, base, project, policy, Path(tmp)
            )
        except (OSError, shutil.Error) as exc:
            out.fail("error", f"the harness's lock cache cannot be prepared: {exc}")
            return out
        # the harness's cache wins over any the caller granted: the user's never reaches a replay
        env = {**policy.env, "UV_CACHE_DIR": str(uv_cache), "UV_PYTHON_DOWNLOADS": "never"}
        grant = granted(policy.model_copy(update={"env": env}), network=policy.network)
        tree = Path(tmp) / "tree"
        shutil.copytree(candidate, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        folder = tree / project.folder
        if check is not None and not _run(check, folder, out, grant, replay=False):
            return out
        if replay is None:
            out.fail("error", f"{project.lockfile}: cannot tell how {project.manager} wrote it")
            return out
        try:  # the candidate's tree, where the manager runs: no link is followed
            if base_bytes is not None:
                write_bytes_nofollow(tree, project.lockfile, base_bytes)
            else:
                unlink_nofollow(tree, project.lockfile)
            if not _run(replay, folder, out, grant, replay=True):
                return out
            expected, got = read_bytes_nofollow(tree, project.lockfile) or b"", cand_bytes
        except OSError as exc:
            out.fail("failed", f"{project.lockfile} in the replay tree: {exc}")
            return out
    out.facts["replay_reproduced"] = expected == got
    if expected != got:
        out.fail(
            "failed",
            f"replaying {shlex.join(replay)} from the base {project.lockfile} does not reproduce "
            f"the candidate's (edited by hand?): {_first_difference(expected, got)}",
        )
    return out


def _no_project(unlocked: list[str]) -> Observation:
    """``passed``: no project's lockfile to verify (``unlocked``: changed manifests without one)."""
    detail = (
        f"manifest changed without a lockfile to check: {', '.join(unlocked)}"
        if unlocked
        else "no manifest or lockfile changed"
    )
    details = {"projects": [], "manifests_without_lockfile": unlocked}
    return Observation(checks=(Check(name=CHECK, status="passed", detail=detail),), details=details)


def check_dependency_policy(
    trees: Callable[[], tuple[Path, Path]],
    lock: Lockfile | None,
    changed: Sequence[ChangedPath],
    policy: SandboxPolicy,
    cache: LockCache | None = None,
) -> Observation:
    """Decide ``dependency_policy_passed`` for one candidate (hermetic and lifecycle profiles).

    Args:
        trees: makes (or returns) clean checkouts of the base tree (base lockfile and manifest)
            and of the candidate tree (copied, never written); called only when the patch
            touches a manifest or a lockfile (:func:`touches_dependencies`).
        lock: the contract's ``oracles.lockfile`` (manager, manifest, lockfile, ``allow_new``);
            None still checks lockfiles the patch touches, found by name.
        changed: the patch's changed paths.
        policy: timeout and environment for the manager's commands; ``network`` lets the lock
            command reach the index (without it uv works from its cache, ``--offline``).
        cache: the harness's lock cache (:class:`LockCache`); each uv verification runs on a
            throwaway copy of it. None starts every verification from an empty cache, never the
            user's (an offline replay then resolves only what needs no index).

    Returns:
        One check. ``passed`` with the reason when no manifest or lockfile changed, or every
        touched project verified; ``failed`` naming the lockfile and the first differing lines;
        ``error`` when a manager is missing or the index unreachable. ``details["projects"]``
        lists each project with its commands and findings.
    """
    if not touches_dependencies(changed, lock):
        return _no_project([])
    base, candidate = trees()
    projects, unlocked = touched_projects(changed, lock, base, candidate)
    if not projects:
        return _no_project(unlocked)
    details: dict[str, Any] = {"projects": [], "manifests_without_lockfile": unlocked}
    outcomes = [_verify(p, base, candidate, lock, policy, cache) for p in projects]
    details["projects"] = [{**o.facts, "status": o.status, "reasons": o.reasons} for o in outcomes]
    statuses = {o.status for o in outcomes}
    status: Status = next((s for s in ("failed", "error") if s in statuses), "passed")
    if status == "passed":
        detail = "; ".join(f"{o.facts['lockfile']} reproduced by its manager" for o in outcomes)
    else:
        detail = "; ".join(f"{o.facts['lockfile']}: {r}" for o in outcomes for r in o.reasons)
    if status == "error":
        kind: ErrorKind = (
            "timeout" if any(o.timed_out for o in outcomes) else "other evaluator error"
        )
        return Observation(checks=(Check.error(CHECK, detail, kind),), details=details)
    return Observation(checks=(Check(name=CHECK, status=status, detail=detail),), details=details)
