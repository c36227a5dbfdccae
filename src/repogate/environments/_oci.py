"""Unpack a container image into the environment cache, once per image digest, safely.

Three inputs are read (:func:`unpack_image`):

- **a saved image archive**, as ``docker save`` and ``podman save`` write it: ``manifest.json``
  naming the config file and the layer tars, in order (Docker's image archive format; also the
  ``docker-archive`` of containers/image);
- **an OCI image layout** in a tar: ``index.json`` and ``blobs/sha256/<hex>`` (OCI Image Layout
  Specification 1.0: image-layout.md, image-index.md, manifest.md); an index of several platforms
  is resolved to this machine's (``linux`` and its architecture);
- **a root file system tarball** (``mmdebstrap ... out.tar``, ``docker export``): one layer.

Layers may be uncompressed, gzip, bzip2 or xz (zstd is refused with how to fix). Each layer's
uncompressed bytes are hashed while they are unpacked and must match the config's
``rootfs.diff_ids`` (OCI image-spec config.md), and an OCI blob must match its digest, so the
image digest names what was unpacked.

**Image digest.** The sha256 of the image's config (what ``docker images --no-trunc`` shows as its
ID, the same for both archive forms of one image), or of the whole tarball for a root file system.

**Safety.** The unpacker writes only below the new root and never follows a link the image
planted: a member whose name is absolute or holds ``..`` is refused, as is one whose parent
folder in the root is a symbolic link; hard links must name an earlier regular file of the root
by the same rules; device nodes are never made (those under ``dev/`` are skipped, since the
sandbox mounts its own ``/dev``; elsewhere they are refused); set-user-ID, set-group-ID bits and
ownership are dropped. Symbolic links are written as they are, whatever their target: they are
resolved only inside the sandbox, where the root is ``/``, and the harness never resolves a path
inside the root on the host. OCI whiteouts (image-spec layer.md) are applied layer by layer:
``.wh.<name>`` removes ``<name>`` of the layers below, ``.wh..wh..opq`` empties its folder of
them; a whiteout of ``''``, ``.`` or ``..`` is refused. Folders get their modes and times last,
each reached from the root without following a link. Python's ``tarfile`` extraction filters
are not used: the ``data`` filter refuses the absolute symbolic links every Debian root holds
(``/etc/localtime``).

**Cache.** ``<cache>/images/<hex>/rootfs``, with ``image.json`` (an :class:`UnpackedImage`) beside
it; made in a temporary folder and renamed into place under a file lock, so two builds never
unpack one image at once and a reader never sees half of one. ``images/by-file/<key>`` remembers
the digest of an archive file as it was (path, inode, size, modification time), so a later build
neither hashes nor scans it again.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import json
import lzma
import os
import platform
import shutil
import stat
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal

from pydantic import ValidationError

from repogate import clock
from repogate._counted import counted
from repogate._locks import locked, write_atomic
from repogate._model import FrozenModel
from repogate.errors import EnvironmentBuildError

__all__ = ["ImageKind", "UnpackedImage", "image_digest", "unpack_image"]

ImageKind = Literal["docker-archive", "oci-layout", "rootfs"]

_WHITEOUT = ".wh."
_OPAQUE = ".wh..wh..opq"
_CHUNK = 1024 * 1024
_INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
_UNREADABLE = (tarfile.TarError, EOFError, lzma.LZMAError, zlib.error, gzip.BadGzipFile)
"""What reading a damaged or foreign archive raises (``OSError`` from writing is not one)."""
_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le"}


class UnpackedImage(FrozenModel):
    """An image unpacked in the cache.

    Attributes:
        digest: ``sha256:<hex>`` of the image's config (or of the root file system tarball).
        kind: which input form it was read from.
        rootfs: the unpacked root, ``<cache>/images/<hex>/rootfs``.
        layers: how many layers were applied (1 for a root file system tarball).
        skipped_devices: device nodes under ``dev/`` left out.
        unpack_seconds: wall seconds the unpacking took (when it was made).
    """

    digest: str
    kind: ImageKind
    rootfs: Path
    layers: int
    skipped_devices: int = 0
    unpack_seconds: float


@dataclass
class _Plan:
    """What to unpack: the image digest and, per layer, how to open its bytes."""

    kind: ImageKind
    digest: str
    layers: list[_Layer]


@dataclass
class _Layer:
    name: str
    diff_id: str | None  # sha256:<hex> of the uncompressed tar, None for a root tarball
    blob_digest: str | None = None  # sha256:<hex> of the (maybe compressed) blob, OCI layout


def _refuse(archive: Path, what: str, fix: str) -> EnvironmentBuildError:
    """One line: ``image <name>: <what>; <how to fix>`` (a library's message folded onto it)."""
    return EnvironmentBuildError(f"image {archive.name}: {' '.join(what.split())}; {fix}")


def _member_name(name: str) -> str | None:
    """Return a member's name relative to the archive's top, or None when it is not one."""
    if name.startswith("/"):
        return None
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None
    return "/".join(parts)


def _outer_json(tar: tarfile.TarFile, name: str, archive: Path) -> Any:
    data = _outer_bytes(tar, name, archive)
    try:
        return json.loads(data)
    except ValueError as exc:
        raise _refuse(archive, f"{name} is not JSON ({exc})", "save the image again") from None


def _outer_bytes(tar: tarfile.TarFile, name: str, archive: Path) -> bytes:
    try:
        handle = tar.extractfile(name)
    except KeyError:
        handle = None
    if handle is None:
        raise _refuse(archive, f"{name} is missing or not a file", "save the image again")
    with handle:
        return handle.read()


def _names(tar: tarfile.TarFile) -> dict[str, str]:
    """Normalised member name -> the name as stored (``./manifest.json`` -> ``manifest.json``)."""
    names: dict[str, str] = {}
    for member in tar.getmembers():
        clean = _member_name(member.name)
        if clean is not None:
            names.setdefault(clean, member.name)
    return names


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def _diff_ids(config: Any, count: int, archive: Path) -> list[str]:
    ids = config.get("rootfs", {}).get("diff_ids") if isinstance(config, dict) else None
    if not isinstance(ids, list) or len(ids) != count or not all(isinstance(i, str) for i in ids):
        raise _refuse(
            archive,
            f"the config's rootfs.diff_ids do not list its {counted(count, 'layer')}",
            "save it again",
        )
    return ids


def _docker_plan(tar: tarfile.TarFile, names: dict[str, str], archive: Path) -> _Plan:
    manifest = _outer_json(tar, names["manifest.json"], archive)
    if not isinstance(manifest, list) or len(manifest) != 1 or not isinstance(manifest[0], dict):
        count = len(manifest) if isinstance(manifest, list) else "no"
        raise _refuse(archive, f"manifest.json lists {count} images", "save exactly one image")
    entry = manifest[0]
    config_name, layers = entry.get("Config"), entry.get("Layers")
    if not isinstance(config_name, str) or not isinstance(layers, list):
        raise _refuse(archive, "manifest.json has no Config or Layers", "save the image again")
    clean = _member_name(config_name)
    if clean is None or clean not in names:
        raise _refuse(archive, f"config {config_name} is not in the archive", "save it again")
    config_bytes = _outer_bytes(tar, names[clean], archive)
    ids = _diff_ids(json.loads(config_bytes), len(layers), archive)
    planned = []
    for layer, diff_id in zip(layers, ids, strict=True):
        name = _member_name(layer) if isinstance(layer, str) else None
        if name is None or name not in names:
            raise _refuse(archive, f"layer {layer} is not in the archive", "save the image again")
        planned.append(_Layer(names[name], diff_id))
    return _Plan("docker-archive", _sha256(config_bytes), planned)


def _blob_name(digest: object, names: dict[str, str], archive: Path) -> str:
    if not isinstance(digest, str) or not digest.startswith("sha256:"):
        raise _refuse(archive, f"blob digest {digest!r} is not sha256", "save the image again")
    hex_ = digest.removeprefix("sha256:")
    if len(hex_) != 64 or any(c not in "0123456789abcdef" for c in hex_):
        raise _refuse(archive, f"blob digest {digest!r} is malformed", "save the image again")
    name = f"blobs/sha256/{hex_}"
    if name not in names:
        raise _refuse(archive, f"blob {digest} is missing", "save the image again")
    return names[name]


def _blob_json(tar: tarfile.TarFile, digest: object, names: dict[str, str], archive: Path) -> Any:
    data = _outer_bytes(tar, _blob_name(digest, names, archive), archive)
    if _sha256(data) != digest:
        raise _refuse(archive, f"blob {digest} does not match its digest", "save the image again")
    return json.loads(data)


def _pick(manifests: object, archive: Path) -> dict[str, Any]:
    if not isinstance(manifests, list) or not manifests:
        raise _refuse(archive, "the index lists no manifest", "save the image again")
    if len(manifests) == 1 and isinstance(manifests[0], dict):
        return manifests[0]
    arch = _ARCH.get(platform.machine(), platform.machine())
    for candidate in manifests:
        plat = candidate.get("platform", {}) if isinstance(candidate, dict) else {}
        if plat.get("os") == "linux" and plat.get("architecture") == arch:
            return dict(candidate)
    raise _refuse(archive, f"the index has no linux/{arch} image", "save this platform's image")


def _oci_plan(tar: tarfile.TarFile, names: dict[str, str], archive: Path) -> _Plan:
    descriptor = _pick(_outer_json(tar, names["index.json"], archive).get("manifests"), archive)
    for _ in range(4):  # an index may point at an index (one per platform)
        if descriptor.get("mediaType") not in _INDEX_TYPES:
            break
        nested = _blob_json(tar, descriptor.get("digest"), names, archive)
        descriptor = _pick(nested.get("manifests"), archive)
    manifest = _blob_json(tar, descriptor.get("digest"), names, archive)
    config_desc, layers = manifest.get("config", {}), manifest.get("layers")
    if not isinstance(layers, list) or not isinstance(config_desc, dict):
        raise _refuse(archive, "the image manifest has no config or layers", "save it again")
    config_digest = config_desc.get("digest")
    config = _blob_json(tar, config_digest, names, archive)
    ids = _diff_ids(config, len(layers), archive)
    planned = [
        _Layer(_blob_name(layer.get("digest"), names, archive), diff_id, layer.get("digest"))
        for layer, diff_id in zip(layers, ids, strict=True)
    ]
    return _Plan("oci-layout", str(config_digest), planned)


def _plan(archive: Path, tar: tarfile.TarFile) -> _Plan:
    names = _names(tar)
    if "manifest.json" in names:
        return _docker_plan(tar, names, archive)
    if "index.json" in names and "oci-layout" in names:
        return _oci_plan(tar, names, archive)
    return _Plan("rootfs", _file_digest(archive), [_Layer("", None)])


@contextlib.contextmanager
def _open_archive(archive: Path) -> Iterator[tarfile.TarFile]:
    try:
        with tarfile.open(archive, "r:*") as tar:
            yield tar
    except (*_UNREADABLE, OSError) as exc:
        raise _refuse(
            archive, f"cannot be read as a tar archive ({exc})", "give a saved image or a tarball"
        ) from None


def image_digest(archive: Path) -> str:
    """Return the image digest of ``archive`` (``sha256:<hex>``) without unpacking it.

    Raises:
        EnvironmentBuildError: not a tar archive, or a saved image whose manifest is broken.
    """
    with _open_archive(archive) as tar:
        return _plan(archive, tar).digest


class _Hashing:
    """A read-only stream that hashes what passes through it."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.hash = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.hash.update(data)
        return data

    def drain(self) -> str:
        while self.read(_CHUNK):
            pass
        return "sha256:" + self.hash.hexdigest()


def _decompressed(raw: IO[bytes], archive: Path) -> IO[bytes]:
    head = raw.read(6)
    raw.seek(0)
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if head.startswith(b"BZh"):
        return bz2.BZ2File(raw)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(raw)
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        raise _refuse(
            archive,
            "a layer is zstd-compressed, which this Python cannot read",
            "save the image uncompressed (docker save, or skopeo copy --dest-compress=false)",
        )
    return raw


@dataclass
class _Unpacker:
    """Applies layers to ``root``; paths are relative to it, with ``/`` between parts."""

    root: Path
    archive: Path
    layer_paths: set[str] = field(default_factory=set)
    kept_parents: set[str] = field(default_factory=set)
    folders: dict[str, tuple[int, float]] = field(default_factory=dict)
    skipped_devices: int = 0

    def refuse(self, member: str, why: str) -> EnvironmentBuildError:
        return _refuse(self.archive, f"member {member!r} {why}", "rebuild the image without it")

    def parent(self, rel: str, member: str) -> Path:
        """Return the folder holding ``rel``, making missing folders, never through a link."""
        folder = self.root
        parts = rel.split("/")[:-1]
        for i, part in enumerate(parts):
            folder = folder / part
            try:
                st = folder.lstat()
            except FileNotFoundError:
                folder.mkdir(mode=0o755)
                self.layer_paths.add("/".join(parts[: i + 1]))
                continue
            if stat.S_ISLNK(st.st_mode):
                raise self.refuse(member, "lies behind a link the image planted")
            if not stat.S_ISDIR(st.st_mode):
                raise self.refuse(member, "lies below something that is not a folder")
            self.kept_parents.add("/".join(parts[: i + 1]))
        return folder

    def clear(self, path: Path) -> None:
        """Remove whatever ``path`` is (a folder with its contents), never following a link."""
        try:
            st = path.lstat()
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            _remove_tree(path)
        else:
            path.unlink()

    def opaque(self, folder: Path, rel: str) -> None:
        """Empty ``folder`` of what the layers below put there (OCI ``.wh..wh..opq``)."""
        with os.scandir(folder) as entries:
            children = list(entries)
        for child in children:
            child_rel = f"{rel}/{child.name}" if rel else child.name
            if child_rel in self.layer_paths or child_rel in self.kept_parents:
                if child.is_dir(follow_symlinks=False):
                    self.opaque(Path(child.path), child_rel)
                continue
            self.clear(Path(child.path))

    def apply(self, tar: tarfile.TarFile) -> None:
        """Apply one layer's members, in order."""
        self.layer_paths = set()
        self.kept_parents = set()
        for member in tar:
            rel = _member_name(member.name)
            if rel is None:
                raise self.refuse(member.name, "is absolute or climbs out with '..'")
            if not rel:
                continue  # the archive's top folder itself
            folder = self.parent(rel, member.name)
            base = rel.rsplit("/", 1)[-1]
            if base == _OPAQUE:
                self.opaque(folder, rel.rpartition("/")[0])
                continue
            if base.startswith(_WHITEOUT):
                hidden = base.removeprefix(_WHITEOUT)
                if hidden in ("", ".", ".."):  # the folder itself, or the one above the root
                    raise self.refuse(member.name, f"is a whiteout of {hidden!r}, not of an entry")
                self.clear(folder / hidden)
                continue
            self.member(tar, member, rel, folder / base)

    def member(self, tar: tarfile.TarFile, member: tarfile.TarInfo, rel: str, path: Path) -> None:
        if member.ischr() or member.isblk():
            if rel.startswith("dev/"):
                self.skipped_devices += 1
                return
            raise self.refuse(member.name, "is a device node")
        self.layer_paths.add(rel)
        if member.isdir():
            if not (path.is_dir() and not path.is_symlink()):
                self.clear(path)
                path.mkdir(mode=0o755)
            self.folders[rel] = (member.mode, member.mtime)
            return
        self.clear(path)
        self.folders.pop(rel, None)
        if member.issym():
            path.symlink_to(member.linkname)
        elif member.islnk():
            self.hard_link(member, path)  # shares its target's mode and time
            return
        elif member.isfifo():
            os.mkfifo(path, 0o600)
            path.chmod(_file_mode(member.mode))  # made just now by this unpacker: no link
        elif member.isreg():
            source = tar.extractfile(member)
            if source is None:
                raise self.refuse(member.name, "cannot be read")
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            fd = os.open(path, flags, 0o600)
            with source, os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(source, out, _CHUNK)
                os.fchmod(out.fileno(), _file_mode(member.mode))
        else:
            raise self.refuse(
                member.name, f"has a tar type this unpacker refuses ({member.type!r})"
            )
        os.utime(path, (member.mtime, member.mtime), follow_symlinks=False)

    def hard_link(self, member: tarfile.TarInfo, path: Path) -> None:
        target = _member_name(member.linkname)
        if not target:
            raise self.refuse(member.name, f"links to {member.linkname!r}, outside the root")
        source = self.parent(target, member.name) / target.rsplit("/", 1)[-1]
        try:
            st = source.lstat()
        except FileNotFoundError:
            raise self.refuse(
                member.name, f"links to {member.linkname!r}, not in the root"
            ) from None
        if not stat.S_ISREG(st.st_mode):
            raise self.refuse(member.name, f"links to {member.linkname!r}, not a regular file")
        os.link(source, path, follow_symlinks=False)

    def finish(self) -> None:
        """Give folders their modes and times, deepest first (writing into one changes its time).

        Each folder is reached from the root one part at a time without following a link: a
        later member may have put a link where a parent of it was (red team 2026-12-02: the
        mode and time went through it, to a folder of this machine).
        """
        for rel in sorted(self.folders, key=lambda r: r.count("/"), reverse=True):
            mode, mtime = self.folders[rel]
            fd = _open_folder(self.root, rel)
            if fd is None:
                continue  # no longer a folder of the root (removed, or a link now)
            try:
                os.fchmod(fd, (mode & 0o1777) | 0o700)
                os.utime(fd, (mtime, mtime))
            finally:
                os.close(fd)


def _open_folder(root: Path, rel: str) -> int | None:
    """Open ``root/rel`` as a folder, following no link on the way; None when it is not one."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for part in rel.split("/"):
        try:
            nxt = os.open(part, flags, dir_fd=fd)
        except OSError:  # ELOOP (a link), ENOTDIR, ENOENT
            os.close(fd)
            return None
        os.close(fd)
        fd = nxt
    return fd


def _file_mode(mode: int) -> int:
    """Keep permission bits, drop set-user-ID and set-group-ID, keep the owner's read and write."""
    return (mode & 0o777) | 0o600


def _remove_tree(path: Path) -> None:
    """``rm -rf`` of a tree this module made (its folders are always the owner's to write)."""
    shutil.rmtree(path)


def _apply_layers(archive: Path, plan: _Plan, root: Path) -> _Unpacker:
    unpacker = _Unpacker(root, archive)
    with _open_archive(archive) as outer:
        for layer in plan.layers:
            raw = archive.open("rb") if not layer.name else outer.extractfile(layer.name)
            if raw is None:
                raise _refuse(archive, f"layer {layer.name} is not a file", "save it again")
            with raw:
                if layer.blob_digest is not None:
                    blob = hashlib.sha256()
                    while chunk := raw.read(_CHUNK):
                        blob.update(chunk)
                    if "sha256:" + blob.hexdigest() != layer.blob_digest:
                        raise _refuse(
                            archive, f"blob {layer.blob_digest} does not match", "save it again"
                        )
                    raw.seek(0)
                hashing = _Hashing(_decompressed(raw, archive))
                try:
                    with tarfile.open(fileobj=hashing, mode="r|") as tar:  # type: ignore[call-overload]
                        unpacker.apply(tar)
                except _UNREADABLE as exc:
                    what = f"layer {layer.name or 'tarball'} cannot be unpacked ({exc})"
                    raise _refuse(archive, what, "save the image again") from None
                got = hashing.drain()
            if layer.diff_id is not None and got != layer.diff_id:
                raise _refuse(
                    archive,
                    f"layer {layer.name} is {got}, not {layer.diff_id} as its config says",
                    "save the image again",
                )
    unpacker.finish()
    return unpacker


def unpack_image(archive: Path, cache_dir: Path) -> UnpackedImage:
    """Unpack ``archive`` into ``cache_dir/images/<hex>/rootfs``, or find it unpacked there.

    Args:
        archive: a saved image (``docker save``/``podman save``: Docker archive or OCI layout),
            or a root file system tarball; plain or gzip/bzip2/xz-compressed.
        cache_dir: the environment cache (created when absent).

    Returns:
        The unpacked image; ``unpack_seconds`` is the time it took when this call made it.

    Raises:
        EnvironmentBuildError: the archive is unreadable, a saved image's manifest, config or
            a layer's digest is wrong, or a member is refused (see the module's Safety).
    """
    archive = archive.resolve()
    images = cache_dir.resolve() / "images"
    memo = images / "by-file" / _file_key(archive)
    with contextlib.suppress(OSError, ValueError):
        found = _load(images / memo.read_text(encoding="ascii").strip())
        if found is not None:
            return found
    with _open_archive(archive) as tar:
        plan = _plan(archive, tar)
    hex_ = plan.digest.removeprefix("sha256:")
    entry = images / hex_
    with locked(images / f"{hex_}.lock"):
        found = _load(entry)
        if found is not None:
            write_atomic(memo, hex_)
            return found
        start = clock.monotonic()
        staging = images / f"{hex_}.tmp-{os.getpid()}"
        if staging.exists():
            _remove_tree(staging)
        (staging / "rootfs").mkdir(parents=True)
        try:
            unpacker = _apply_layers(archive, plan, staging / "rootfs")
            image = UnpackedImage(
                digest=plan.digest,
                kind=plan.kind,
                rootfs=entry / "rootfs",
                layers=len(plan.layers),
                skipped_devices=unpacker.skipped_devices,
                unpack_seconds=round(clock.monotonic() - start, 3),
            )
            (staging / "image.json").write_text(image.model_dump_json(indent=2), encoding="utf-8")
            if entry.exists():  # a half-removed entry without its record
                _remove_tree(entry)
            staging.rename(entry)
        except BaseException:
            _remove_tree(staging)
            raise
        write_atomic(memo, hex_)
    return image


def _file_key(archive: Path) -> str:
    """The archive file as it is now (path, device, inode, size, modification time), hashed.

    Remembers which image a file held, so a later build finds it unpacked without reading the
    whole archive again; a file rewritten or replaced gets a new key and is read afresh.
    """
    st = archive.stat()
    facts = f"{archive}\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}"
    return hashlib.sha256(facts.encode("utf-8", "surrogateescape")).hexdigest()


def _load(entry: Path) -> UnpackedImage | None:
    try:
        return UnpackedImage.model_validate_json((entry / "image.json").read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None
