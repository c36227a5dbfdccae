"""What an untrusted command sees of the file system under bubblewrap: an allowlist.

The command starts from an empty root and sees only:

- **system folders**, read-only: ``/usr``, ``/bin``, ``/sbin``, ``/lib*`` and a few files of ``/etc``
  that programs need to start, resolve names and check TLS (:data:`ETC_ENTRIES`; never
  ``/etc/shadow``, never the system's git or pip configuration);
- **its runtime**, read-only: the folders on its ``PATH`` outside the system ones, the virtual
  environments they belong to and the interpreter each was made from (``home`` in
  ``pyvenv.cfg``: a pyenv or uv-managed Python under the user's home), the program's own folder
  and, when it is a link, the installation it points into;
- what the policy grants: folders to read, folders to write, the private HOME and TMPDIR;
- a fresh ``/dev``, a ``/proc`` of its own PID namespace (the harness's ``/proc/<pid>/environ``
  is not there) and an empty ``/tmp``.

Nothing else of the user's file system exists for it: no home folder, no ``~/.pgpass``, no
tokens, no shell history, no sibling run folders.

**An image's root file system** (``root``): the unpacked image's top-level entries take the place
of the system folders and ``/etc`` (each bound read-only, its links recreated as links), so the
command sees the image as ``/`` and nothing of this machine's system; its runtime is the image's
and what the policy grants (no program is looked up on this machine's ``PATH``). The granted
folders keep their paths: where one lies inside an image folder (a run folder under ``/root``),
that folder becomes an empty file system holding the image's entries again, bound one by one, and
is made read-only after the grants are mounted in it. Folders the policy hides, and the user's
credential stores (:data:`SECRET_PATHS`), are covered with an empty folder wherever a granted
folder would show them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from repogate._toolchain import TRUST_VARS

SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Read-only system folders (a link such as ``/bin -> usr/bin`` is recreated as a link)."""

ETC_ENTRIES = (
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf",
    "services", "protocols", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives",
    "localtime", "timezone", "locale.alias", "mime.types", "magic", "os-release",
    "ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
)  # fmt: skip
"""The entries of ``/etc`` a command sees (read-only): users, name service, libraries, locale, TLS."""

# Credential stores of the user running repogate, files and folders relative to HOME: never
# visible to untrusted commands. Cloud and cluster tools; git and forges; package registries
# (npm, yarn, cargo, pip, gem, maven); secret managers (Vault, 1Password, keyrings, pass);
# databases, model hubs and shell histories.
SECRET_PATHS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".docker", ".kube", ".config/gcloud", ".terraform.d",
    ".netrc", ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub",
    ".pypirc", ".config/pip", ".pip", ".npmrc", ".yarnrc", ".yarnrc.yml", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml",
    ".vault-token", ".config/op", ".local/share/keyrings", ".password-store",
    ".pgpass", ".my.cnf", ".cache/huggingface", ".huggingface", ".bash_history",
    ".zsh_history", ".python_history", ".psql_history",
)  # fmt: skip

_WRITABLE_ENV = ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "UV_CACHE_DIR")
"""Folders an install command writes, named by its environment (writable only when the policy
names no writable folders)."""


def _system(path: Path) -> bool:
    return any(path == Path(f) or path.is_relative_to(f) for f in SYSTEM_FOLDERS)


def _venv_home(venv: Path) -> Path | None:
    """Return ``home`` from ``venv/pyvenv.cfg`` (the interpreter's folder), or None."""
    try:
        text = (venv / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "home" and value.strip():
            return Path(value.strip())
    return None


def _installation(folder: Path) -> Path:
    """``<prefix>/bin`` -> ``<prefix>``: where an interpreter keeps its standard library."""
    return folder.parent if folder.name == "bin" else folder


class _Found:
    """Folders collected once each, never a system folder, never the user's home or above it."""

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self._home = Path.home().resolve()

    def add(self, path: Path) -> None:
        if not path.is_absolute() or not path.exists() or _system(path) or path in self.paths:
            return
        if self._home.is_relative_to(path):  # the home folder itself, or a folder above it
            return
        self.paths.append(path)

    def add_bin(self, folder: Path) -> None:
        """A folder of programs, and the venv and interpreter it belongs to."""
        self.add(folder)
        home = _venv_home(folder.parent)
        if home is not None:
            self.add(folder.parent)
            self.add(_installation(home.resolve()))


def _named_paths(word: str) -> list[Path]:
    """The absolute paths one command-line word names that exist as a regular file or a folder.

    The word itself, an option's ``=value``, a ``file://`` URL; never a FIFO or a device.
    """
    values = [word, word.partition("=")[2] if word.startswith("-") else ""]
    paths = [Path(v.removeprefix("file://")) for v in values if v.startswith(("/", "file:///"))]
    return [p for p in paths if p.is_file() or p.is_dir()]


def named_paths(argv: Sequence[str]) -> list[Path]:
    """Return the files and folders the words of ``argv`` after the first name by absolute path.

    A word itself, an option's ``=value`` or a ``file://`` URL, existing as a regular file or a
    folder; never a system folder, the user's home or a folder above it.
    """
    found = _Found()
    for word in argv[1:]:
        for named in _named_paths(word):
            found.add(named)
    return found.paths


def runtime_folders(argv: Sequence[str], env: Mapping[str, str]) -> list[Path]:
    """Return the folders and files the command ``argv`` needs, read-only, to start under ``env``.

    Args:
        argv: the command line (chosen by the user, the contract or the harness, never by
            untrusted code): its first word is a name looked up on ``PATH`` or a path.
        env: the command's environment (its ``PATH``, ``VIRTUAL_ENV`` and TLS variables).

    Returns:
        Absolute paths outside the system folders: each ``PATH`` folder, the venv it belongs to
        and that venv's interpreter installation; the program file (and a link's target) with,
        when it lies in a ``bin`` folder, that installation; ``VIRTUAL_ENV``; the TLS trust files named; and each file or
        folder the command line names by absolute path, as a word, an option's ``=value`` or a
        ``file://`` URL (a script: the file, not its folder; ``--find-links /srv/wheels``: the
        folder). Never a system folder, the user's home or a folder above it.
    """
    program = argv[0]
    found = _Found()
    for named in named_paths(argv):
        found.add(named)
    search = env.get("PATH", os.defpath)
    for entry in search.split(os.pathsep):
        found.add_bin(Path(entry))
    where = program if "/" in program else shutil.which(program, path=search)
    if where:  # the program file; its folder only when it is a ``bin`` (an installation's)
        exe = Path(where).absolute()
        real = exe.resolve()
        for file in (exe, real):
            found.add(file)
            if file.parent.name == "bin":
                found.add_bin(file.parent)
                found.add(_installation(file.parent))
    for key in ("VIRTUAL_ENV", *TRUST_VARS):
        if env.get(key):
            found.add(Path(env[key]))
    return found.paths


def install_folders(env: Mapping[str, str]) -> list[Path]:
    """Return the folders an install command writes, as its environment names them."""
    return [Path(env[k]) for k in _WRITABLE_ENV if env.get(k) and Path(env[k]).is_absolute()]


def _system_mounts() -> list[str]:
    args: list[str] = []
    for name in SYSTEM_FOLDERS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    for entry in ETC_ENTRIES:
        path = Path("/etc") / entry
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return [*args, *_FRESH]


_FRESH = ("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")  # noqa: S108 (a fresh tmpfs)
"""A fresh ``/dev``, the command's own ``/proc`` and an empty ``/tmp``, whatever the root."""


def _image_mounts(root: Path, granted: Sequence[Path]) -> tuple[list[str], list[str]]:
    """Return the mounts showing the image ``root`` as ``/``, and the folders to make read-only.

    Each top-level entry of ``root`` is bound read-only at ``/<name>`` (a link recreated as a
    link, never followed), except ``dev``, ``proc`` and ``tmp`` (:data:`_FRESH`). An image folder
    on the way to a granted path becomes a tmpfs holding its entries bound one by one, so the
    grant's mount point can be made in it; those folders are returned to be remounted read-only
    once everything is mounted.
    """
    args: list[str] = []
    remount: list[str] = []

    def show(folder: Path, at: Path) -> None:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda e: e.name)
        for entry in entries:
            inside = at / entry.name
            if at == Path("/") and entry.name in ("dev", "proc", "tmp"):
                continue
            if entry.is_symlink():
                args.extend(["--symlink", str(Path(entry.path).readlink()), str(inside)])
            elif entry.is_dir(follow_symlinks=False):
                if any(p != inside and p.is_relative_to(inside) for p in granted):
                    args.extend(["--tmpfs", str(inside)])
                    remount.append(str(inside))
                    show(Path(entry.path), inside)
                elif inside not in granted:
                    args.extend(["--ro-bind", entry.path, str(inside)])
            elif entry.is_file(follow_symlinks=False):
                args.extend(["--ro-bind", entry.path, str(inside)])

    show(root, Path("/"))
    return [*args, *_FRESH], remount


def under_any(path: Path, folders: Iterable[Path]) -> bool:
    """True when ``path`` is one of ``folders`` or lies inside one."""
    return any(path == f or path.is_relative_to(f) for f in folders)


def mount_arguments(
    readable: Iterable[Path],
    writable: Iterable[Path],
    hidden: Iterable[Path],
    root: Path | None = None,
    shown: Mapping[Path, Path] | None = None,
) -> list[str]:
    """Return bubblewrap's mount arguments for the allowlist, in order.

    Mounts are made parents first (a folder's mount would cover its children's), and at one
    depth read-only before hidden before writable, so a writable workspace inside a hidden run
    folder stays visible and a hidden folder inside a granted one is covered.

    Args:
        readable: folders (or files) bound read-only; missing ones are left out.
        writable: folders bound read-write; missing ones are left out.
        hidden: folders (or files) shown empty where a granted folder would show them; the
            user's credential stores (:data:`SECRET_PATHS`) are added.
        root: an unpacked image's root file system to show as ``/`` in place of this machine's
            system folders (see the module's notes), or None.
        shown: file -> harness file shown read-only in its place, bound last (over the granted
            folder holding it); a file that does not exist is left out (binding it would make it
            in the real folder).
    """
    granted_rw = [p for p in dict.fromkeys(writable) if p.exists()]
    # Inside a writable folder a path is writable with it; inside a readable one, shown by it.
    candidates = [p for p in dict.fromkeys(readable) if p.exists() and not under_any(p, granted_rw)]
    granted_ro = [p for p in candidates if not under_any(p, [q for q in candidates if q != p])]
    granted = [*granted_ro, *granted_rw]
    secrets = [Path.home() / name for name in SECRET_PATHS]
    covered = [p for p in dict.fromkeys([*hidden, *secrets]) if under_any(p, granted)]
    plan = [(p, 0) for p in granted_ro] + [(p, 1) for p in covered] + [(p, 2) for p in granted_rw]
    plan.sort(key=lambda item: (len(item[0].parts), item[1]))
    args, remount = _image_mounts(root, granted) if root is not None else (_system_mounts(), [])
    for path, kind in plan:
        if kind == 0:
            args += ["--ro-bind", str(path), str(path)]
        elif kind == 2:
            args += ["--bind", str(path), str(path)]
        elif path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    for path, source in (shown or {}).items():
        if path.is_file() and not path.is_symlink() and source.is_file():
            args += ["--ro-bind", str(source), str(path)]
    for folder in reversed(remount):
        args += ["--remount-ro", folder]
    return [*args, "--remount-ro", "/"]  # the mount points bwrap made are not writable either
