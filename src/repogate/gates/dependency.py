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
the base install's; without it uv runs ``--offline`` (its cache only). The manager never builds
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
import os
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


def _uv_cache_grant() -> dict[str, str]:
    """Share the caller's uv cache (the sandbox's private HOME would start an empty one)."""
    cache = os.environ.get("UV_CACHE_DIR")
    if not cache:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        cache = str(Path(xdg) / "uv")
    return {"UV_CACHE_DIR": cache, "UV_PYTHON_DOWNLOADS": "never"}


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
    project: Project, base: Path, candidate: Path, lock: Lockfile | None, policy: SandboxPolicy
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
    grant = granted(policy, network=policy.network, extra=_uv_cache_grant())
    lock_text = cand_bytes.decode("utf-8", "replace")
    base_text = base_bytes.decode("utf-8", "replace") if base_bytes is not None else None
    check, replay = _commands(project, lock_text, policy.network, base_text)
    with tempfile.TemporaryDirectory(prefix="repogate-lock-") as tmp:
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
    outcomes = [_verify(p, base, candidate, lock, policy) for p in projects]
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
