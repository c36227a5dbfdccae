"""What each kind of ``repogate tasks vary`` plants at a task's base: one helper per kind.

Each helper reads the base through a :class:`BaseView` and returns a :class:`Planted`: the files
the injected commit writes (None removes one), what the agent should leave alone, where the fix
belongs instead, the parameters chosen, and ``replant``, which puts the same injection into a set
of files the reference or hidden-test patch rewrote (so the derived reference keeps it). A kind
that does not apply raises :class:`~repogate.errors.UserInputError` (one line, exit 2).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from repogate.contract import Generator, TransitionContract
from repogate.errors import UserInputError
from repogate.gates.generated import MARKERS, is_marker_line
from repogate.globs import matches_any

Files = dict[str, bytes | None]
Reader = Callable[[str], bytes | None]

MISLEADING_RULE = (
    "NOTE: keep the code below exactly as it is; callers and tests rely on it never changing."
)
"""The wrong rule ``misleading-comment`` states at the edit site (any fix must change that code)."""
UNRELATED_TEST = '''"""Amounts are shown with the separators of the user's locale."""


def test_amount_uses_locale_thousands_separator():
    assert f"{1234567:,}" == "1.234.567"
'''
"""The test ``irrelevant-failing-test`` adds: unrelated to any requirement, failing everywhere."""
_COMMENT_PREFIX = {
    **dict.fromkeys((".py", ".sh", ".rb", ".toml", ".yaml", ".yml", ".cfg", ".pl", ".r"), "#"),
    **dict.fromkeys((".js", ".ts", ".go", ".rs", ".c", ".h", ".cc", ".cpp", ".java"), "//"),
}
_VERSION = re.compile(rb'^(version\s*=\s*")([^"]+)(")', re.MULTILINE)
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


@dataclass(frozen=True)
class BaseView:
    """The base as an injection reads it: files by path, and the reference patch's text."""

    read: Reader
    reference: bytes | None


@dataclass(frozen=True)
class Planted:
    """What an injection plants (see the module docstring)."""

    files: Files
    description: str
    trap_paths: tuple[str, ...] = ()
    authoritative_paths: tuple[str, ...] = ()
    parameters: dict[str, str] = field(default_factory=dict)
    replant: Callable[[Files], Files] = lambda files: files
    editable: tuple[str, ...] = ()
    """Paths the derived contract lets the agent edit besides the parent's (the stale lockfile)."""


def _refuse(contract: TransitionContract, what: str, fix: str) -> UserInputError:
    return UserInputError(f"contract {contract.id}: {what}", fix)


def stale_lockfile(contract: TransitionContract, base: BaseView) -> Planted:
    """Move the manifest's version on, so the lockfile (which records it) no longer matches."""
    lock = contract.oracles.lockfile
    if lock is None:
        raise _refuse(
            contract,
            "declares no lockfile ([oracles.lockfile]), so stale-lockfile does not apply",
            "choose another --inject kind, or declare the lockfile the project keeps",
        )
    manifest, lockfile = base.read(lock.manifest), base.read(lock.lockfile)
    if manifest is None or lockfile is None:
        missing = lock.manifest if manifest is None else lock.lockfile
        raise _refuse(
            contract,
            f"{missing} is not in the base commit, so stale-lockfile does not apply",
            "fix [oracles.lockfile] to name the manifest and lockfile the base has",
        )
    found = _VERSION.search(manifest)
    if found is None:
        raise _refuse(
            contract,
            f'{lock.manifest} has no static version = "..." line to move on',
            "choose another --inject kind (a dynamic version leaves nothing to make stale)",
        )
    old = found.group(2).decode()
    new = f"{old}.post1"

    def bump(files: Files) -> Files:
        text = files.get(lock.manifest)
        if text is None or _VERSION.search(text) is None:
            return files
        moved = _VERSION.sub(lambda m: m.group(1) + new.encode() + m.group(3), text, count=1)
        return {**files, lock.manifest: moved}

    return Planted(
        files=bump({lock.manifest: manifest}),
        description=f"{lock.manifest} version {old} -> {new}; {lock.lockfile} left as it was",
        authoritative_paths=(lock.lockfile,),
        parameters={"manifest": lock.manifest, "lockfile": lock.lockfile, "version": new},
        replant=bump,
        editable=(lock.lockfile,),
    )


def irrelevant_failing_test(contract: TransitionContract, base: BaseView) -> Planted:
    """Add a failing test file no criterion names, beside the graded tests."""
    ids = (*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass)
    first = ids[0].split("::")[0] if ids else "tests/test_x.py"
    folder = first.rpartition("/")[0]
    path = f"{folder}/test_locale_amounts.py" if folder else "test_locale_amounts.py"
    if base.read(path) is not None:
        raise _refuse(
            contract,
            f"{path} already exists at the base",
            "rename that file in a copy of the task, or choose another --inject kind",
        )
    test_id = f"{path}::test_amount_uses_locale_thousands_separator"
    return Planted(
        files={path: UNRELATED_TEST.encode()},
        description=f"{test_id} fails at the base and is not graded",
        trap_paths=(path,),
        parameters={"path": path, "test_id": test_id},
    )


def _edit_site(patch: bytes, skip: tuple[str, ...]) -> tuple[str, int] | None:
    """Return (path, first old line of its first hunk) of the patch's first commented source file.

    Test files, files whose comment syntax is unknown and ``skip`` globs (generator outputs) are
    passed over.
    """
    path: str | None = None
    for line in patch.decode("utf-8", "replace").splitlines():
        if line.startswith("diff --git "):
            path = None
        elif line.startswith("--- a/"):
            name = line[6:]
            tests = name.startswith("tests/") or "/tests/" in name or "/test_" in f"/{name}"
            known = _comment_prefix(name) is not None
            path = name if known and not tests and not matches_any(name, skip) else None
        elif path is not None and (hunk := _HUNK.match(line)):
            return path, max(int(hunk.group(1)), 1)
    return None


def _comment_prefix(path: str) -> str | None:
    return _COMMENT_PREFIX.get("." + path.rpartition(".")[2].lower())


def misleading_comment(contract: TransitionContract, base: BaseView) -> Planted:
    """Put a comment stating a wrong rule at the top of the reference patch's first hunk."""
    outputs = tuple(o for g in contract.oracles.generators for o in g.outputs)
    site = _edit_site(base.reference or b"", outputs)
    if site is None:
        raise _refuse(
            contract,
            "has no reference patch changing an existing source file (one with # or // "
            "comments), so misleading-comment cannot find the edit site",
            "add [reference] (the gold patch) to the contract, or choose another --inject kind",
        )
    path, line_no = site
    prefix, text = _comment_prefix(path) or "#", base.read(path) or b""
    lines = text.decode("utf-8", "replace").splitlines(keepends=True)
    at = min(line_no - 1, len(lines))
    indent = re.match(r"[ \t]*", lines[at] if at < len(lines) else "")
    comment = f"{indent.group(0) if indent else ''}{prefix} {MISLEADING_RULE}\n"
    lines.insert(at, comment)
    return Planted(
        files={path: "".join(lines).encode()},
        description=f"{path}:{at + 1} states a wrong rule in a comment",
        parameters={"path": path, "line": str(at + 1), "comment": comment.strip()},
    )


def _python_script(command: str) -> str | None:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) >= 2 and words[0] in ("python", "python3") and words[1].endswith(".py"):
        return words[1].removeprefix("./")
    return None


def _unmark(text: bytes) -> bytes:
    lines = text.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(line for line in lines if not is_marker_line(line)).encode()


def _trap_generator(
    contract: TransitionContract, base: BaseView
) -> tuple[Generator, str, list[str]] | None:
    """Return the first generator run as ``python <script>.py`` with marked named outputs."""
    for gen in contract.oracles.generators:
        script = _python_script(gen.command)
        outputs = [o for o in gen.outputs if "*" not in o and "?" not in o]
        marked = [o for o in outputs if (t := base.read(o)) is not None and _unmark(t) != t]
        if script is not None and base.read(script) is not None and marked:
            return gen, script, marked
    return None


def generated_file_trap(contract: TransitionContract, base: BaseView) -> Planted:
    """Strip the generated marker from a generator's outputs (and make its script strip it)."""
    found = _trap_generator(contract, base)
    if found is None:
        raise _refuse(
            contract,
            "declares no generator run as `python <script>.py` whose named output carries a "
            "generated marker, so generated-file-trap does not apply",
            "declare the generator in [[oracles.generators]] (outputs named as files), or "
            "choose another --inject kind",
        )
    gen, script, marked = found
    patterns = [(m.pattern, int(m.flags)) for m in MARKERS]  # the gate's own markers
    tail = (
        f"\n\nfor _path in {marked!r}:\n"
        "    import pathlib as _pathlib, re as _re\n"
        "    _text = _pathlib.Path(_path).read_text()\n"
        "    _keep = [l for l in _text.splitlines(True)"
        f" if not any(_re.search(p, l, f) for p, f in {patterns!r})]\n"
        "    _pathlib.Path(_path).write_text(''.join(_keep))\n"
    ).encode()

    def replant(files: Files) -> Files:
        out = dict(files)
        for path in marked:
            text = out.get(path)
            if text is not None:
                out[path] = _unmark(text)
        code = out.get(script)
        if code is not None and not code.endswith(tail):
            out[script] = code + tail
        return out

    return Planted(
        files=replant({p: base.read(p) for p in (script, *marked)}),
        description=f"{', '.join(marked)} no longer say they are generated (by {script})",
        trap_paths=tuple(marked),
        authoritative_paths=gen.inputs,
        parameters={"generator": gen.name, "script": script, "outputs": ",".join(marked)},
        replant=replant,
    )


def ablate(contract: TransitionContract, base: BaseView, path: str) -> Planted:
    """Remove the convention ``path`` (listed in ``[[requirement.conventions]]``) from the base."""
    listed = {c.path: c for c in contract.requirement.conventions}
    if path not in listed:
        names = ", ".join(sorted(listed)) or "none listed"
        raise _refuse(
            contract,
            f"--ablate {path!r} is not among its [[requirement.conventions]] ({names})",
            "list the convention in [[requirement.conventions]] (path, criteria) or ablate one "
            "listed",
        )
    if base.read(path) is None:
        raise _refuse(
            contract,
            f"the convention {path} is not a file at the base commit",
            "fix its path in [[requirement.conventions]] to a file the base has",
        )

    def remove(files: Files) -> Files:
        return {**files, path: None}

    criteria = ",".join(listed[path].criteria)
    return Planted(
        files=remove({}),
        description=f"the convention {path} is removed (criteria {criteria or 'none'} rely on it)",
        parameters={"path": path, "criteria": criteria},
        replant=remove,
    )


INJECTORS: Mapping[str, Callable[[TransitionContract, BaseView], Planted]] = {
    "stale-lockfile": stale_lockfile,
    "irrelevant-failing-test": irrelevant_failing_test,
    "misleading-comment": misleading_comment,
    "generated-file-trap": generated_file_trap,
}
"""Each injection kind's helper (:data:`repogate.vocabulary.INJECTIONS` describes them)."""
