"""Unpacking a saved image or a root tarball into the cache: layers, whiteouts, refusals.

Small archives are built here with ``tarfile``, in the forms ``docker save`` (``manifest.json``)
and an OCI image layout (``index.json``, ``blobs/sha256``) write, and as a bare root tarball.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import multiprocessing
import stat
import tarfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from repogate.environments._oci import image_digest, unpack_image
from repogate.errors import EnvironmentBuildError

Entry = tuple[str, str, str | bytes]
"""(name, kind, content): kind ``file`` (content the bytes), ``dir``, ``sym``/``hard`` (content
the target), ``chr`` (a device node), ``suid`` (a set-user-ID file)."""


def layer(entries: Sequence[Entry]) -> bytes:
    """Return an uncompressed tar holding ``entries`` in order."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, content in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 1_700_000_000
            data = content.encode() if isinstance(content, str) else content
            if kind in ("file", "suid"):
                info.size = len(data)
                info.mode = 0o4755 if kind == "suid" else 0o644
                tar.addfile(info, io.BytesIO(data))
                continue
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
            elif kind == "sym":
                info.type, info.linkname = tarfile.SYMTYPE, str(content)
            elif kind == "hard":
                info.type, info.linkname = tarfile.LNKTYPE, str(content)
            elif kind == "chr":
                info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
            tar.addfile(info)
    return out.getvalue()


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def config_of(layers: Sequence[bytes]) -> bytes:
    return json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "rootfs": {"type": "layers", "diff_ids": [sha(b) for b in layers]},
        }
    ).encode()


def write_tar(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def docker_archive(path: Path, layers: Sequence[bytes], config: bytes | None = None) -> Path:
    """Write ``layers`` as ``docker save`` does: ``<id>/layer.tar``, ``<id>.json``, manifest."""
    config = config_of(layers) if config is None else config
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    names = [f"{hashlib.sha256(b).hexdigest()}/layer.tar" for b in layers]
    manifest = [{"Config": config_name, "RepoTags": ["t:1"], "Layers": names}]
    files = {config_name: config, **dict(zip(names, layers, strict=True))}
    return write_tar(path, {**files, "manifest.json": json.dumps(manifest).encode()})


def oci_archive(path: Path, layers: Sequence[bytes]) -> Path:
    """Write ``layers`` gzip-compressed as an OCI image layout in a tar."""
    config = config_of(layers)
    blobs = [gzip.compress(b, mtime=0) for b in layers]
    media = "application/vnd.oci.image.layer.v1.tar+gzip"
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": sha(config), "size": len(config)},
            "layers": [{"mediaType": media, "digest": sha(b), "size": len(b)} for b in blobs],
        }
    ).encode()  # fmt: skip
    index = {"schemaVersion": 2, "manifests": [{"digest": sha(manifest), "size": len(manifest)}]}
    files = {f"blobs/sha256/{sha(b)[7:]}": b for b in [config, manifest, *blobs]}
    files |= {"oci-layout": b'{"imageLayoutVersion": "1.0.0"}'}
    return write_tar(path, {**files, "index.json": json.dumps(index).encode()})


BASE: list[Entry] = [
    ("usr", "dir", ""),
    ("usr/bin", "dir", ""),
    ("usr/bin/tool", "file", "v1"),
    ("bin", "sym", "usr/bin"),
    ("etc", "dir", ""),
    ("etc/localtime", "sym", "/usr/share/zoneinfo/UTC"),
    ("etc/gone", "file", "old"),
    ("opt", "dir", ""),
    ("opt/old-a", "file", "a"),
    ("opt/sub", "dir", ""),
    ("opt/sub/old-b", "file", "b"),
]
TOP: list[Entry] = [
    ("etc/.wh.gone", "file", ""),
    ("opt/.wh..wh..opq", "file", ""),
    ("opt/sub", "dir", ""),
    ("opt/sub/new", "file", "n"),
    ("usr/bin/tool", "file", "v2"),
    ("usr/bin/tool-link", "hard", "usr/bin/tool"),
]


def tree(root: Path) -> dict[str, str]:
    """Every entry below ``root``: files by content, links by target, folders as ``/``."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "-> " + str(path.readlink())
        elif path.is_dir():
            found[rel] = "/"
        else:
            found[rel] = path.read_text()
    return found


EXPECTED = {
    "bin": "-> usr/bin",
    "etc": "/",
    "etc/localtime": "-> /usr/share/zoneinfo/UTC",
    "opt": "/",
    "opt/sub": "/",
    "opt/sub/new": "n",
    "usr": "/",
    "usr/bin": "/",
    "usr/bin/tool": "v2",
    "usr/bin/tool-link": "v2",
}


def test_docker_archive_layers_apply_in_order_with_whiteouts(tmp_path: Path) -> None:
    layers = [layer(BASE), layer(TOP)]
    archive = docker_archive(tmp_path / "img.tar", layers)
    image = unpack_image(archive, tmp_path / "cache")
    assert image.kind == "docker-archive"
    assert image.layers == 2
    assert image.digest == sha(config_of(layers))  # the image ID docker prints
    assert image.rootfs == tmp_path / "cache" / "images" / image.digest[7:] / "rootfs"
    assert tree(image.rootfs) == EXPECTED
    # hard link: one file; the absolute link is kept as written, never resolved here
    tool = image.rootfs / "usr/bin/tool"
    assert tool.stat().st_ino == (image.rootfs / "usr/bin/tool-link").stat().st_ino
    assert image_digest(archive) == image.digest


def test_oci_layout_of_the_same_image_has_the_same_digest_and_root(tmp_path: Path) -> None:
    layers = [layer(BASE), layer(TOP)]
    docker = unpack_image(docker_archive(tmp_path / "d.tar", layers), tmp_path / "c1")
    oci = unpack_image(oci_archive(tmp_path / "o.tar", layers), tmp_path / "c2")
    assert oci.kind == "oci-layout"
    assert oci.digest == docker.digest
    assert tree(oci.rootfs) == EXPECTED


def test_root_tarball_is_keyed_by_its_bytes_and_unpacked_once(tmp_path: Path) -> None:
    data = layer([*BASE, ("dev", "dir", ""), ("dev/null", "chr", "")])
    archive = tmp_path / "root.tar"
    archive.write_bytes(data)
    first = unpack_image(archive, tmp_path / "cache")
    assert first.kind == "rootfs"
    assert first.digest == sha(data)
    assert first.skipped_devices == 1  # the sandbox mounts its own /dev
    assert not (first.rootfs / "dev/null").exists()
    assert (first.rootfs / "etc/gone").read_text() == "old"  # one layer: nothing whited out
    (first.rootfs / "marker").write_text("kept")
    again = unpack_image(archive, tmp_path / "cache")
    assert again == first
    assert (again.rootfs / "marker").read_text() == "kept"  # reused, not unpacked again


def test_an_archive_rewritten_in_place_is_read_afresh(tmp_path: Path) -> None:
    """The digest remembered for a file is dropped when the file changes (size, time, inode)."""
    archive = tmp_path / "root.tar"
    archive.write_bytes(layer(BASE))
    first = unpack_image(archive, tmp_path / "cache")
    archive.write_bytes(layer([*BASE, ("etc/added", "file", "new")]))
    second = unpack_image(archive, tmp_path / "cache")
    assert second.digest == sha(archive.read_bytes()) != first.digest
    assert (second.rootfs / "etc/added").read_text() == "new"
    assert not (first.rootfs / "etc/added").exists()


def test_set_user_id_bits_are_dropped(tmp_path: Path) -> None:
    archive = tmp_path / "root.tar"
    archive.write_bytes(layer([("usr", "dir", ""), ("usr/su", "suid", "x")]))
    mode = (unpack_image(archive, tmp_path / "cache").rootfs / "usr/su").stat().st_mode
    assert stat.S_IMODE(mode) == 0o755


REFUSED: dict[str, tuple[list[Entry], str]] = {
    "climbs out": ([("../escaped", "file", "x")], "climbs out"),
    "climbs out deeper": ([("usr", "dir", ""), ("usr/../../escaped", "file", "x")], "climbs out"),
    "absolute": ([("/escaped", "file", "x")], "is absolute"),
    "device node": ([("usr", "dir", ""), ("usr/null", "chr", "")], "device node"),
    "write through an absolute link": (
        [("out", "sym", "OUTSIDE"), ("out/escaped", "file", "x")],
        "behind a link",
    ),
    "write through a relative link": (
        [("usr", "dir", ""), ("usr/up", "sym", "../../../.."), ("usr/up/escaped", "file", "x")],
        "behind a link",
    ),
    "hard link out by ..": ([("h", "hard", "../outside/secret")], "outside the root"),
    "hard link to an absolute path": ([("h", "hard", "OUTSIDE/secret")], "outside the root"),
    "hard link through a planted link": (
        [("out", "sym", "OUTSIDE"), ("h", "hard", "out/secret")],
        "behind a link",
    ),
    "hard link to a link": (
        [("s", "sym", "OUTSIDE/secret"), ("h", "hard", "s")],
        "not a regular file",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_member_leaving_the_root_is_refused_and_nothing_is_kept(
    tmp_path: Path, case: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("host file")
    entries, why = REFUSED[case]
    fixed = [
        (n, k, c.replace("OUTSIDE", str(outside)) if isinstance(c, str) else c)
        for n, k, c in entries
    ]
    archive = tmp_path / "root.tar"
    archive.write_bytes(layer(fixed))
    cache = tmp_path / "cache"
    with pytest.raises(EnvironmentBuildError, match=why):
        unpack_image(archive, cache)
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert (outside / "secret").stat().st_nlink == 1
    assert not (tmp_path / "escaped").exists()
    assert [p.name for p in (cache / "images").iterdir() if not p.name.endswith(".lock")] == []
    assert not (cache / "images" / "by-file").exists()


def test_a_layer_that_is_not_what_its_config_says_is_refused(tmp_path: Path) -> None:
    layers = [layer(BASE)]
    lying = config_of([layer(TOP)])
    archive = docker_archive(tmp_path / "img.tar", layers, config=lying)
    with pytest.raises(EnvironmentBuildError, match=r"not sha256:.* as its config says"):
        unpack_image(archive, tmp_path / "cache")


def test_an_archive_of_two_images_is_refused_with_how_to_fix(tmp_path: Path) -> None:
    one = layer(BASE)
    archive = docker_archive(tmp_path / "img.tar", [one])
    with tarfile.open(archive) as tar:
        files = {
            m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
        }
    entry = json.loads(files["manifest.json"])[0]
    files["manifest.json"] = json.dumps([entry, entry]).encode()
    write_tar(archive, files)
    with pytest.raises(EnvironmentBuildError, match="lists 2 images; save exactly one image"):
        unpack_image(archive, tmp_path / "cache")


def test_not_a_tar_is_refused_with_how_to_fix(tmp_path: Path) -> None:
    archive = tmp_path / "img.tar"
    archive.write_bytes(b"not a tar at all" * 100)
    with pytest.raises(
        EnvironmentBuildError,
        match=r"^image img.tar: cannot be read as a tar archive \(.*invalid header.*\); give [^\n]*$",
    ):
        unpack_image(archive, tmp_path / "cache")


def test_a_zstd_layer_is_refused_with_how_to_fix(tmp_path: Path) -> None:
    """This Python reads gzip, bzip2 and xz layers; zstd ones (podman's option) are named."""
    plain = layer(BASE)
    archive = docker_archive(tmp_path / "img.tar", [b"\x28\xb5\x2f\xfd" + plain[4:]])
    with pytest.raises(
        EnvironmentBuildError, match=r"zstd-compressed.*; save the image uncompressed"
    ):
        unpack_image(archive, tmp_path / "cache")


def _unpack_in_child(archive: str, cache: str) -> str:
    return unpack_image(Path(archive), Path(cache)).model_dump_json()


def test_two_builds_of_one_image_at_once_unpack_it_once(tmp_path: Path) -> None:
    """The second waits on the first's lock and finds the entry made; nothing is left over."""
    archive = docker_archive(tmp_path / "img.tar", [layer(BASE), layer(TOP)])
    cache = tmp_path / "cache"
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        made = pool.starmap(_unpack_in_child, [(str(archive), str(cache))] * 2)
    assert made[0] == made[1]  # one record: the same unpack_seconds, so one unpacking
    names = sorted(p.name for p in (cache / "images").iterdir())
    hex_ = json.loads(made[0])["digest"][7:]
    assert names == [hex_, f"{hex_}.lock", "by-file"]
    assert tree(cache / "images" / hex_ / "rootfs") == EXPECTED


# Red team 2026-12-02: a folder the image made, then a link put where its parent was. The
# folder's mode and time were set at the end through ``root / rel``, following the link: a host
# folder (the user's ``~/.ssh``) got the image's mode and time.
FOLDER_THEN_LINK: dict[str, list[list[Entry]]] = {
    "link in the same layer": [[("a", "dir", ""), ("a/x", "dir", ""), ("a", "sym", "VICTIM")]],
    "link in a later layer": [
        [("a", "dir", ""), ("a/x", "dir", "")],
        [("a", "sym", "../../../../victim")],
    ],
    "whiteout, then a link": [
        [("a", "dir", ""), ("a/x", "dir", ""), ("a/.wh.x", "file", "")],
        [(".wh.a", "file", ""), ("a", "sym", "VICTIM")],
    ],
}


@pytest.mark.parametrize("case", sorted(FOLDER_THEN_LINK))
def test_a_folder_behind_a_later_link_never_changes_a_host_folder(
    tmp_path: Path, case: str
) -> None:
    victim = tmp_path / "victim" / "x"
    victim.mkdir(parents=True)
    victim.chmod(0o700)
    before = victim.stat()
    layers = [
        layer(
            [
                (n, k, c.replace("VICTIM", str(victim.parent)) if isinstance(c, str) else c)
                for n, k, c in entries
            ]
        )
        for entries in FOLDER_THEN_LINK[case]
    ]
    archive = docker_archive(tmp_path / "img.tar", layers)
    image = unpack_image(archive, tmp_path / "cache")
    after = victim.stat()
    assert (stat.S_IMODE(after.st_mode), after.st_mtime_ns) == (
        stat.S_IMODE(before.st_mode),
        before.st_mtime_ns,
    )
    assert (image.rootfs / "a").is_symlink()


# A whiteout names one entry of its folder: ``.wh.``, ``.wh..`` and ``.wh...`` named the folder
# itself and its parent (``<root>/..``, the staging folder above the root), which were removed.
@pytest.mark.parametrize("name", [".wh...", ".wh..", ".wh.", "usr/.wh...", "usr/.wh..", "usr/.wh."])
def test_a_whiteout_of_dot_or_dot_dot_is_refused(tmp_path: Path, name: str) -> None:
    archive = tmp_path / "root.tar"
    archive.write_bytes(layer([("usr", "dir", ""), ("usr/f", "file", "v"), (name, "file", "")]))
    cache = tmp_path / "cache"
    with pytest.raises(EnvironmentBuildError, match="is a whiteout of"):
        unpack_image(archive, cache)
    assert [p.name for p in (cache / "images").iterdir() if not p.name.endswith(".lock")] == []
