"""Search/replace edits: parsed from a model's reply, applied exactly, undone on request.

The format (Aider's and Agentless's)::

    path/to/file.py
    <<<<<<< SEARCH
    lines exactly as they are in the file
    =======
    the lines that replace them
    >>>>>>> REPLACE

The path line may start with ``#`` marks and be followed by a code fence line. An edit applies
only when its SEARCH text occurs exactly once in the file (an empty SEARCH creates a file that
does not exist); any other edit is rejected with the reason, and a reply holding a rejected edit
is rejected whole (every file it touched restored). Files are read and written without following
a link (:func:`repogate._files.read_bytes_nofollow`): the sandboxed commands that ran in the
workspace may have planted one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from repogate._files import read_bytes_nofollow, unlink_nofollow, write_bytes_nofollow
from repogate.models.trajectory import EditStep

_BLOCK = re.compile(
    r"^[#\s]*(?P<path>[\w./@+-]+)[ \t]*\n(?:```[\w+-]*[ \t]*\n)?"
    r"<<<<<<< SEARCH[ \t]*\n(?P<search>(?:.*?\n)??)=======[ \t]*\n"
    r"(?P<replace>(?:.*?\n)??)>>>>>>> REPLACE",
    re.MULTILINE | re.DOTALL,
)
MAX_EDITED_FILE_BYTES = 8 * 1024 * 1024
"""Bytes of a file an edit reads at most (a larger one is rejected)."""


@dataclass(frozen=True)
class Edit:
    """One search/replace edit of ``path`` (relative to the workspace)."""

    path: str
    search: str
    replace: str


def parse_edits(reply: str) -> list[Edit]:
    """Return the search/replace edits in ``reply``, in order (empty when it holds none)."""
    return [
        Edit(m.group("path"), m.group("search"), m.group("replace")) for m in _BLOCK.finditer(reply)
    ]


def _problem(path: str) -> str | None:
    parts = Path(path).parts
    if Path(path).is_absolute() or ".." in parts or ".git" in parts or not parts:
        return f"{path!r} is not a path inside the workspace"
    return None


class EditSession:
    """Applies edits to a workspace and can undo them all (one repair sample's edits).

    Args:
        workspace: the agent's workspace.
    """

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._originals: dict[str, bytes | None] = {}

    def apply(self, edit: Edit) -> EditStep:
        """Apply ``edit`` when its SEARCH text occurs exactly once; say why not otherwise."""
        problem = _problem(edit.path)
        if problem is not None:
            return EditStep(path=edit.path, applied=False, detail=problem)
        try:
            data = read_bytes_nofollow(self.workspace, edit.path, MAX_EDITED_FILE_BYTES)
        except (OSError, ValueError) as exc:
            return EditStep(path=edit.path, applied=False, detail=f"cannot be read ({exc})")
        if data is None:
            if edit.search:
                return EditStep(path=edit.path, applied=False, detail="no such file")
            new = edit.replace
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return EditStep(path=edit.path, applied=False, detail="not UTF-8 text")
            count = text.count(edit.search) if edit.search else -1
            if count != 1:
                found = "the file exists" if count == -1 else f"SEARCH occurs {count} times"
                return EditStep(path=edit.path, applied=False, detail=f"{found}, not once")
            new = text.replace(edit.search, edit.replace, 1)
        self._originals.setdefault(edit.path, data)
        write_bytes_nofollow(self.workspace, edit.path, new.encode("utf-8"), make_parents=True)
        return EditStep(path=edit.path, applied=True)

    def apply_all(self, edits: list[Edit]) -> tuple[list[EditStep], bool]:
        """Apply ``edits`` in order; on the first rejected one undo them all.

        Returns:
            The steps (applied ones and the rejected one), and whether all applied.
        """
        steps = []
        for edit in edits:
            step = self.apply(edit)
            steps.append(step)
            if not step.applied:
                self.undo()
                return steps, False
        return steps, True

    def undo(self) -> None:
        """Restore every file this session changed (remove those it created)."""
        for path, data in self._originals.items():
            if data is None:
                unlink_nofollow(self.workspace, path)
            else:
                write_bytes_nofollow(self.workspace, path, data, make_parents=True)
        self._originals.clear()

    @property
    def changed(self) -> tuple[str, ...]:
        """Paths this session changed."""
        return tuple(self._originals)
