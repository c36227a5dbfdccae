"""Reading files: the user's input with one-line errors, and untrusted folders without links.

Each loader (contract, evidence, reviews, predictions, scripted agents) reads a file and validates
it with pydantic; :func:`read_text` and :func:`repogate._problems.every_problem` turn the two
foreign failures (``OSError``, ``ValidationError``) into the message our errors carry, so every
loader says it the same way; :func:`read_json_object` does it for a JSON file, which must hold an object (a list,
string or number is named as such, never read as an object with every key missing).

Files in a folder untrusted code could touch (the agent's workspace and output folder, test trees)
are read and written with :func:`read_bytes_nofollow` and :func:`write_bytes_nofollow` only: a
symbolic link planted there is refused (:class:`PlantedLinkError`) or replaced, never followed.
:func:`storage_problem` tells a write the disk refused (full, read-only) from any other
failure.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from repogate._problems import every_problem
from repogate.errors import UserInputError

_M = TypeVar("_M", bound=BaseModel)


def read_text(path: Path, what: str, error: Callable[[str, str], UserInputError], fix: str) -> str:
    """Return ``path``'s text (UTF-8).

    Args:
        path: the file.
        what: how the message names it, e.g. ``"review file"``.
        error: the error class to raise (a :class:`UserInputError`).
        fix: how to fix it.

    Raises:
        UserInputError: of class ``error``, when the file cannot be read.
    """
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        why = "it is a folder, not a file" if isinstance(exc, IsADirectoryError) else why
        raise error(f"{what} {path} cannot be read ({why})", fix) from None


_JSON_TYPES: dict[type, str] = {
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}
"""How a message names a JSON value that is not an object, by the Python type it loads as."""


def read_json_object(
    path: Path, what: str, error: Callable[[str, str], UserInputError], fix: str
) -> dict[str, Any]:
    """Return the JSON object (a dict) that ``path`` holds.

    Any other outcome is one message naming the file: unreadable, not JSON, JSON Python cannot
    load (nested too deeply, an integer longer than ``sys.get_int_max_str_digits()``), or a valid
    JSON value that is not an object (``expected a JSON object, got a list``). Arguments as
    :func:`read_text`'s (``what``, e.g. ``"evidence file"``).

    Raises:
        UserInputError: of class ``error``.
    """
    text = read_text(path, what, error, fix)
    try:
        data = json.loads(text)
    except RecursionError:
        raise error(
            f"{what} {path} is not JSON this repogate loads: nested too deeply", fix
        ) from None
    except ValueError as exc:  # JSONDecodeError, and an integer past Python's digit limit
        raise error(f"{what} {path} is not JSON: {str(exc)[:200]}", fix) from None
    if not isinstance(data, dict):
        got = _JSON_TYPES.get(type(data), type(data).__name__)
        raise error(f"{what} {path}: expected a JSON object {{...}}, got {got}", fix)
    return data


def read_toml_model(
    path: Path,
    model: type[_M],
    what: str,
    error: Callable[[str, str], UserInputError],
    fix: str,
) -> _M:
    """Read ``path`` as TOML and validate it as ``model``.

    Raises:
        UserInputError: (``error``) unreadable, not TOML, or not valid (every bad key named,
            then ``fix``).
    """
    text = read_text(path, what, error, "give a TOML file")
    try:
        return model.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} {path} is not TOML: {exc}", "fix the TOML syntax") from None
    except ValidationError as exc:
        raise error(f"{what} {path}: {every_problem(exc, model)}", fix) from None


# --- Files in folders untrusted code could touch -------------------------------------------------
#
# The agent writes its workspace and its output folder; the candidate's code, run by the tests,
# writes the test trees. The harness runs with the user's rights outside every sandbox, so a link
# planted there (``agent.stdout.txt -> ~/.bashrc``, ``tests -> /``) must never redirect a read or a
# write of the harness. Every such access goes through these helpers: the folder the caller names
# is opened by path (it is the harness's own), each component below it is opened relative to its
# parent's descriptor with ``O_NOFOLLOW`` (``openat``), and a write lands by ``rename`` of a fresh
# file, which replaces a planted link instead of writing through it.

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PlantedLinkError(OSError):
    """A path below a harness folder is a symbolic link, or passes through one: never followed.

    Attributes:
        path: the path as the caller named it (folder / relative path).
    """

    def __init__(self, path: Path) -> None:
        super().__init__(errno.ELOOP, f"{path} is a symbolic link (not followed)")
        self.path = path


def _parts(relative: str | Path) -> list[str]:
    parts = [p for p in Path(relative).parts if p not in ("", ".")]
    if not parts or Path(relative).is_absolute() or ".." in parts:
        raise ValueError(f"{relative!s} is not a relative path inside its folder")
    return parts


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_folder(folder: Path, parts: list[str], make: bool) -> int:
    """Return a descriptor of ``folder/parts...`` opened without following a link below ``folder``.

    Raises:
        PlantedLinkError: a component is a symbolic link.
        OSError: a component is missing (and ``make`` is False) or no folder.
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for done, part in enumerate(parts):
            if make:
                if _is_link(part, fd):  # replaced by a real folder, never entered
                    os.unlink(part, dir_fd=fd)
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                below = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                if _is_link(part, fd):
                    raise PlantedLinkError(folder.joinpath(*parts[: done + 1])) from None
                raise
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes_nofollow(
    folder: Path, relative: str | Path, cap: int | None = None, *, head: bool = False
) -> bytes | None:
    """Read ``folder/relative`` without following a link anywhere below ``folder``.

    Args:
        folder: a harness folder (opened by path).
        relative: the file's path inside it (no ``..``, not absolute).
        cap: bytes read at most; a longer file raises ``OSError(EFBIG)``. None reads it whole.
        head: with ``cap``, return the first ``cap`` bytes of a longer file instead of raising.

    Returns:
        The bytes, or None when the file (or a folder on the way) does not exist.

    Raises:
        PlantedLinkError: the file, or a folder on the way, is a symbolic link.
        OSError: the path is not a regular file (a FIFO, a device, a folder), or it is too large.
        ValueError: ``relative`` leaves the folder.
    """
    *folders, name = _parts(relative)
    try:
        dir_fd = _open_folder(folder, folders, make=False)
    except FileNotFoundError:
        return None
    try:
        try:
            fd = os.open(
                name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
            )
        except FileNotFoundError:
            return None
        except OSError:
            if _is_link(name, dir_fd):
                raise PlantedLinkError(folder / relative) from None
            raise
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{folder / relative} is not a regular file")
        data = handle.read() if cap is None else handle.read(cap + 1)
    if cap is not None and len(data) > cap:
        if head:
            return data[:cap]
        raise OSError(errno.EFBIG, f"{folder / relative} is larger than {cap} bytes")
    return data


def read_tree_files(tree: Path, suffix: str) -> Iterator[tuple[str, bytes]]:
    """Yield ``(relative path, bytes)`` for each regular file named ``*suffix`` below ``tree``.

    For trees test-time code may have dirtied: folders are walked without following links
    (folders whose name starts with ``.`` are skipped), and each file is read with
    :func:`read_bytes_nofollow` (``O_NOFOLLOW | O_NONBLOCK``, regular files only), so a planted
    link is never followed and a planted FIFO or device never blocks the harness: both are skipped,
    as is a file that vanished or cannot be read.

    Args:
        tree: the folder to walk (opened by path).
        suffix: the file name ending to read, e.g. ``".py"``.
    """
    for folder, dirs, files in os.walk(tree):  # os.walk does not follow links by default
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(suffix):
                continue
            relative = str(Path(folder, name).relative_to(tree))
            try:
                data = read_bytes_nofollow(tree, relative)
            except OSError:  # a link, FIFO, device or folder planted there; or unreadable
                continue
            if data is not None:
                yield relative, data


def write_bytes_nofollow(
    folder: Path, relative: str | Path, data: bytes, *, make_parents: bool = False
) -> bool:
    """Write ``data`` to ``folder/relative`` without following a link anywhere below ``folder``.

    The bytes go to a fresh file (``O_CREAT | O_EXCL``) renamed over the name, so a link planted
    at the name is replaced, never written through; a link planted on a folder on the way is
    refused. A regular file replaced keeps its permission bits.

    Args:
        folder: a harness folder (opened by path).
        relative: the file's path inside it (no ``..``, not absolute).
        data: the bytes.
        make_parents: create missing folders on the way (each made and entered without
            following links); a link standing for a folder on the way is replaced by a folder.

    Returns:
        True when a symbolic link stood at the name and was replaced (record it).

    Raises:
        PlantedLinkError: a folder on the way is a symbolic link (without ``make_parents``).
        OSError: the file cannot be written (a folder stands at the name, a full disk).
        ValueError: ``relative`` leaves the folder.
    """
    *folders, name = _parts(relative)
    dir_fd = _open_folder(folder, folders, make=make_parents)
    try:
        try:
            before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            before = None
        replaced = before is not None and stat.S_ISLNK(before.st_mode)
        mode = stat.S_IMODE(before.st_mode) if before and stat.S_ISREG(before.st_mode) else 0o644
        tmp = f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o644,
            dir_fd=dir_fd,
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                os.fchmod(fd, mode)  # a rewritten file keeps its mode (an executable stays one)
                handle.write(data)
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)
    return replaced


def unlink_nofollow(folder: Path, relative: str | Path) -> None:
    """Remove ``folder/relative`` (a link is removed itself) without following a link on the way.

    Missing is fine.

    Raises:
        PlantedLinkError: a folder on the way is a symbolic link.
        ValueError: ``relative`` leaves the folder.
    """
    *folders, name = _parts(relative)
    try:
        dir_fd = _open_folder(folder, folders, make=False)
    except FileNotFoundError:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


_STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
_STORAGE_WORDS = ("disk is full", "readonly database", "No space left on device")


def storage_problem(exc: BaseException) -> str | None:
    """Return why writing failed when ``exc`` means the disk refused a write, else None.

    That is a full disk or quota, a file-size limit, or a read-only file system, whichever layer
    met it: an ``OSError`` (by ``errno``), SQLite (``database or disk is full``), or a child such
    as git that printed ``No space left on device``. Such a failure is the machine's, never an
    attempt's: the run stops and can be resumed once there is room.
    """
    if isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS:
        return exc.strerror or str(exc)
    text = str(exc)
    return next((word for word in _STORAGE_WORDS if word in text), None)
