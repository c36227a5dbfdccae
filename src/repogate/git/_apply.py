"""Apply a prediction's patch the way SWE-bench's harness does: a ladder of three commands.

SWE-bench (``swebench/harness/run_evaluation.py``, ``GIT_APPLY_CMDS``) tries, in order, until one
exits 0:

1. ``git apply --verbose``: exact context (offsets allowed), all or nothing;
2. ``git apply --verbose --reject``: applies the hunks that fit and leaves ``.rej`` files; it exits 0
   only when every hunk applied;
3. ``patch --batch --fuzz=5 -p1 -i``: GNU patch, ignoring up to 5 context lines per hunk (fuzz).

Here each step starts from the untouched tree: step 1 is :func:`repogate.git.apply_patch` (paths
checked first, ``--check`` before writing); steps 2 and 3 run on a scratch copy of the files the
patch names (after the same path check), in the sandbox with only that copy writable, and their
result is copied back only when the step exits 0. So a failed step leaves nothing behind (in
SWE-bench a partial ``--reject`` is left for ``patch`` to trip over), and ``patch`` runs with
``--no-backup-if-mismatch`` so no ``.orig`` file reaches the candidate. A patch whose last line
lacks its newline (common in model output; git calls it corrupt) gets one before step 1, recorded.

The result records which step applied the patch and every hunk GNU patch moved or fuzzed, so the
receipt shows how far the patch was from the base.
"""

from __future__ import annotations

import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Literal

from repogate import sandbox
from repogate._model import FrozenModel
from repogate.errors import PatchApplyError
from repogate.git._diff import apply_patch, patch_paths
from repogate.git._run import _exec
from repogate.git._safety import check_patch_paths

ApplyStep = Literal["git apply --verbose", "git apply --verbose --reject", "patch --batch --fuzz=5"]
"""The ladder's steps, in SWE-bench's order."""

LADDER: tuple[ApplyStep, ...] = (
    "git apply --verbose",
    "git apply --verbose --reject",
    "patch --batch --fuzz=5",
)
_HUNK = re.compile(
    r"Hunk #(\d+) succeeded at (\d+)(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?\."
)
_FILE = re.compile(r"^patching file (.+)$")
_TIMEOUT_S = 60.0


class PatchApplication(FrozenModel):
    """How a patch was applied.

    Attributes:
        step: the ladder step that applied it (see the module docstring).
        newline_added: the patch lacked its final newline and got one.
        fuzz: the largest fuzz (context lines ignored) of any hunk; 0 when none was needed.
        hunks: every hunk GNU patch did not apply exactly where the patch said, e.g.
            ``calc/__init__.py #1 at 4: fuzz 2, offset 1``.
    """

    step: ApplyStep
    newline_added: bool = False
    fuzz: int = 0
    hunks: tuple[str, ...] = ()


def apply_ladder(repo: Path, patch: bytes) -> PatchApplication:
    """Apply ``patch`` to the work tree of ``repo`` with SWE-bench's ladder (module docstring).

    Args:
        repo: a repository with a work tree (the agent's workspace at the base).
        patch: the patch bytes; empty is a no-op applied by step 1.

    Returns:
        Which step applied it, and the fuzz and offsets GNU patch needed.

    Raises:
        PatchApplyError: no step applies it, or it names a forbidden path (absolute, ``..``,
            ``.git``, through a symbolic link); the message gives each step's reason.
    """
    fixed = patch + b"\n" if patch.strip() and not patch.endswith(b"\n") else patch
    added = fixed is not patch
    try:
        apply_patch(repo, fixed)
        return PatchApplication(step=LADDER[0], newline_added=added)
    except PatchApplyError as exc:
        first = str(exc)
    paths = patch_paths(fixed)  # readable: step 1 checked it
    check_patch_paths(repo, paths)
    why = [f"{LADDER[0]}: {first}"]
    for step in LADDER[1:]:
        done, detail = _in_scratch(repo, fixed, paths, step)
        if done is not None:
            return done.model_copy(update={"newline_added": added})
        why.append(f"{step}: {detail}")
    raise PatchApplyError("no step of the apply ladder applies it; " + "; ".join(why))


def _in_scratch(
    repo: Path, patch: bytes, paths: tuple[str, ...], step: ApplyStep
) -> tuple[PatchApplication | None, str]:
    """Run ``step`` on a copy of ``paths``; copy the result back when it exits 0."""
    with tempfile.TemporaryDirectory(prefix="repogate-apply-") as tmp:
        scratch, patch_file = Path(tmp) / "tree", Path(tmp) / "patch.diff"
        scratch.mkdir()
        patch_file.write_bytes(patch)
        for path in paths:
            source = repo / path
            if source.is_file() and not source.is_symlink():
                (scratch / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, scratch / path)
        if step == "git apply --verbose --reject":
            _exec(["init", "-q"], scratch)  # a repository of its own: git never looks above it
            done = _exec(["apply", "--verbose", "--reject", "--whitespace=nowarn"], scratch, patch)
            code, output = done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")
        else:
            ran = sandbox.run(
                [
                    "patch",
                    "--batch",
                    "--fuzz=5",
                    "-p1",
                    "--no-backup-if-mismatch",
                    "-i",
                    str(patch_file),
                ],
                scratch,
                sandbox.SandboxPolicy(timeout_s=_TIMEOUT_S, writable=(scratch,)),
            )
            code, output = ran.returncode, ran.stdout + ran.stderr
        if code != 0:
            return None, _last_line(output) or f"exit {code}"
        _copy_back(scratch, repo, paths)
        hunks = _moved_hunks(output) if step.startswith("patch") else ()
        fuzz = max((int(m) for h in hunks for m in re.findall(r"fuzz (\d+)", h)), default=0)
        return PatchApplication(step=step, fuzz=fuzz, hunks=hunks), ""


def _copy_back(scratch: Path, repo: Path, paths: tuple[str, ...]) -> None:
    """Copy each of ``paths`` from ``scratch`` to ``repo`` as the step left it, following no link.

    A step makes the links a patch asks for (GNU patch makes ``new file mode 120000`` entries,
    to any target): one is copied as a link, never as the bytes of what it names (the harness's
    files), and gate I refuses it. Whatever stands at the name in ``repo`` is removed first, so
    a link there (the base's) is replaced, never written through. A name the step left absent,
    or as anything but a file or a link, is removed.
    """
    for path in paths:
        result, target = scratch / path, repo / path
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            target.unlink()
        try:
            kind = result.lstat().st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISREG(kind) or stat.S_ISLNK(kind):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(result, target, follow_symlinks=False)


def _moved_hunks(output: str) -> tuple[str, ...]:
    """Hunks GNU patch applied with fuzz or at an offset, from its report."""
    hunks: list[str] = []
    current = ""
    for line in output.splitlines():
        if found := _FILE.match(line.strip()):
            current = found.group(1).strip("'")
        elif hunk := _HUNK.search(line):
            number, at, fuzz, offset = hunk.groups()
            parts = [f"fuzz {fuzz}"] if fuzz else []
            parts += [f"offset {offset}"] if offset else []
            hunks.append(f"{current} #{number} at {at}: {', '.join(parts)}")
    return tuple(hunks)


def _last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""
