"""The image backend end to end: a real contract judged in a Debian root file system, no daemon.

The image is a root file system tarball made from Debian's packages with ``mmdebstrap``
(``python3``, ``python3-venv``, ``python3-pytest``), built once and kept in pytest's cache folder
(``.pytest_cache/d/image-backend``) so reruns reuse it. Without ``mmdebstrap`` the tests skip
here and fail in CI (``.ci/run`` installs it).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from _task import make_task, verdicts
from conftest import requires_bwrap, run_json
from repogate import sandbox
from repogate.contract import EnvironmentRecipe
from repogate.environments import BuildRequest, build
from repogate.environments._oci import unpack_image
from repogate.environments.image import ImageEnvironment
from repogate.errors import EnvironmentBuildError
from repogate.store import Store

PACKAGES = "python3,python3-venv,python3-pytest"
SUITE = "bookworm"
MMDEBSTRAP = shutil.which("mmdebstrap")

needs_mmdebstrap = pytest.mark.skipif(
    MMDEBSTRAP is None and not os.environ.get("CI"),
    reason="mmdebstrap is not installed here (CI installs it: .ci/run)",
)


@pytest.fixture(scope="session")
def debian_root(request: pytest.FixtureRequest) -> Path:
    """A Debian root file system tarball with Python and pytest, built once and cached."""
    folder = request.config.cache.mkdir("image-backend")
    tarball = folder / f"{SUITE}-{PACKAGES.replace(',', '-')}.tar"
    if tarball.is_file():
        return tarball
    assert MMDEBSTRAP is not None, "mmdebstrap is missing (CI installs it: .ci/run)"
    # mmdebstrap reads the output's format from its name unless told: a name not ending in
    # `.tar` made a folder (one run's `.x.tar.<pid>`), so the format is named and the name ends so
    fresh = folder / f".{os.getpid()}-{tarball.name}"
    excluded = [f"--dpkgopt=path-exclude=/usr/share/{d}/*" for d in ("doc", "man", "info")]
    argv = [MMDEBSTRAP, "--quiet", "--variant=essential", "--format=tar", f"--include={PACKAGES}"]
    argv += ["--skip=output/dev", *excluded, SUITE, str(fresh)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"mmdebstrap failed:\n{done.stderr[-3000:]}"
    fresh.replace(tarball)
    return tarball


@pytest.fixture(scope="session")
def unpacked_cache(debian_root: Path, request: pytest.FixtureRequest) -> Path:
    """An environment cache (under pytest's cache folder) holding the image unpacked once."""
    cache = request.config.cache.mkdir("image-backend-envs")
    unpack_image(debian_root, cache)
    return cache


@pytest.fixture(scope="session")
def saved_image(debian_root: Path, request: pytest.FixtureRequest) -> Path:
    """The Debian root as ``docker save`` writes an image: its layer, then one that adds a file
    and whites out a folder (``.wh.``) and empties another (``.wh..wh..opq``); cached."""
    folder = request.config.cache.mkdir("image-backend")
    archive = folder / "saved-image.tar"
    if archive.is_file():
        return archive
    top = io.BytesIO()
    with tarfile.open(fileobj=top, mode="w") as tar:
        for name, data in (
            ("opt/marker", b"second layer"),
            ("usr/share/.wh.common-licenses", b""),
            ("etc/apt/.wh..wh..opq", b""),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    layers = [debian_root.read_bytes(), top.getvalue()]
    ids = ["sha256:" + hashlib.sha256(b).hexdigest() for b in layers]
    config = json.dumps({"os": "linux", "rootfs": {"type": "layers", "diff_ids": ids}}).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    names = [f"{i[7:]}/layer.tar" for i in ids]
    manifest = json.dumps([{"Config": config_name, "RepoTags": ["t:1"], "Layers": names}])
    fresh = folder / f".saved-image.{os.getpid()}"
    with tarfile.open(fresh, "w") as tar:
        for name, data in [*zip(names, layers, strict=True), (config_name, config),
                           ("manifest.json", manifest.encode())]:  # fmt: skip
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    fresh.replace(archive)
    return archive


def _cache_with_image(tmp_path: Path, unpacked_cache: Path) -> Path:
    """A fresh run cache whose environment cache shares the unpacked images (keyed by digest)."""
    envs = tmp_path / "cache" / "envs"
    envs.mkdir(parents=True)
    (envs / "images").symlink_to(unpacked_cache / "images")
    return tmp_path / "cache"


BUGGY = "def add(a, b):\n    return a - b\n\n\ndef neg(a):\n    return -a\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n"


@pytest.mark.slow
@requires_bwrap
@needs_mmdebstrap
def test_a_contract_is_judged_in_the_image_end_to_end(
    tmp_path: Path,
    debian_root: Path,
    unpacked_cache: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Gold is accepted and null rejected, every test run in the image; receipts name it."""
    monkeypatch.setenv("REPOGATE_CACHE", str(_cache_with_image(tmp_path, unpacked_cache)))
    (tmp_path / "debian.tar").symlink_to(debian_root)  # the image, relative to the task set
    contract, _, _ = make_task(
        tmp_path,
        {
            "calc/__init__.py": BUGGY,
            "tests/test_neg.py": "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n",
        },
        {
            "calc/__init__.py": FIXED,
            "tests/test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
        install=[],
        fail_to_pass=["tests/test_add.py::test_add"],
        pass_to_pass=["tests/test_neg.py::test_neg"],
        editable=["calc/**"],
        environment='backend = "image"\nimage = "debian.tar"',
    )
    out = tmp_path / "run"
    _code, rows = run_json(
        capsys, str(contract), "--agent", "gold", "--agent", "null", "--out", str(out)
    )
    assert verdicts(rows) == {"gold": "accepted", "null": "rejected"}
    digest = unpack_image(debian_root, unpacked_cache).digest
    with Store.open(out) as store:
        for attempt in store.attempts():
            receipts = store.receipts(attempt.attempt_id)
            environment = next(r for r in receipts if r.gate == "E").details["environment"]
            assert environment["backend"] == "image"
            assert environment["image"] == digest
            assert environment["toolchain"]["python"].startswith("3.11.")
            assert any(p.startswith("pytest==") for p in environment["packages"])
            runs = [run for r in receipts if r.gate == "V" for run in r.details["runs"]]
            assert runs  # every test run's isolation: bubblewrap, the image as its root
            assert {(run["isolation"], run.get("root")) for run in runs} == {("bwrap", digest)}
        manifest = store.manifest()
    assert manifest is not None
    (entry,) = manifest.contracts
    assert (entry.environment_backend, entry.image) == ("image", "debian.tar")


@pytest.fixture
def under_var_tmp() -> Iterator[Path]:
    """A checkout folder inside a folder the image has too (``/var``), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="repogate-image-test-", dir="/var/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


@pytest.mark.slow
@requires_bwrap
@needs_mmdebstrap
def test_commands_see_the_image_as_root_read_only_and_no_network(
    under_var_tmp: Path, debian_root: Path, unpacked_cache: Path
) -> None:
    """The image's own os-release and python; /, /var and the venv unwritable; the checkout
    writable at its own path, even inside ``/var`` (the image's ``/var`` still shown)."""
    checkout = under_var_tmp
    recipe = EnvironmentRecipe(backend="image", image=str(debian_root), python="3.11")
    env = build(
        BuildRequest(
            recipe=recipe,
            base_checkout=checkout,
            cache_dir=unpacked_cache,
            policy=sandbox.SandboxPolicy(),
        )
    )
    assert isinstance(env, ImageEnvironment)
    script = (
        "import os, socket, sys\n"
        "print(open('/etc/os-release').read().splitlines()[0])\n"
        "print(sys.version.split()[0])\n"
        "print(os.path.isdir('/var/lib/dpkg'))\n"
        "for path in ('/usr/planted', '/var/planted', os.environ['VIRTUAL_ENV'] + '/planted'):\n"
        "    try:\n"
        "        open(path, 'w')\n"
        "        print('wrote', path)\n"
        "    except OSError as exc:\n"
        "        print(exc.strerror)\n"
        "open('written', 'w').write('ok')\n"
        "try:\n"
        "    socket.create_connection(('deb.debian.org', 80), timeout=5)\n"
        "    print('network')\n"
        "except OSError:\n"
        "    print('no network')\n"
    )
    policy = sandbox.SandboxPolicy(writable=(), writable_cwd=True)
    result = env.run([*env.python_argv(), "-c", script], checkout, policy)
    assert result.ok, result.stderr
    assert result.stdout.splitlines() == [
        'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"',
        env.toolchain.python,
        "True",
        "Read-only file system",
        "Read-only file system",
        "Read-only file system",
        "no network",
    ]
    assert (checkout / "written").read_text() == "ok"
    assert result.isolation.root == env.image
    assert result.isolation.network_off


@pytest.mark.slow
@requires_bwrap
@needs_mmdebstrap
def test_a_saved_image_of_two_layers_runs_with_its_whiteouts_applied(
    tmp_path: Path, saved_image: Path, unpacked_cache: Path
) -> None:
    """A ``docker save`` archive: its config's digest names it; the top layer's files are there."""
    recipe = EnvironmentRecipe(backend="image", image=str(saved_image))
    env = build(
        BuildRequest(
            recipe=recipe,
            base_checkout=tmp_path,
            cache_dir=unpacked_cache,
            policy=sandbox.SandboxPolicy(),
        )
    )
    assert isinstance(env, ImageEnvironment)
    assert env.image_kind == "docker-archive"
    with tarfile.open(saved_image) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert env.image == "sha256:" + manifest[0]["Config"].removesuffix(".json")
    script = (
        "import os\n"
        "print(open('/opt/marker').read())\n"
        "print(os.path.exists('/usr/share/common-licenses'), sorted(os.listdir('/etc/apt')))\n"
        "import pytest\n"
        "print('pytest', pytest.__version__ != '')\n"
    )
    result = env.run([*env.python_argv(), "-c", script], tmp_path, sandbox.SandboxPolicy())
    assert result.ok, result.stderr
    assert result.stdout.splitlines() == ["second layer", "False []", "pytest True"]
    assert result.isolation.root == env.image


@pytest.mark.slow
@requires_bwrap
@needs_mmdebstrap
def test_a_recipe_python_the_image_lacks_is_a_build_error(
    tmp_path: Path, debian_root: Path, unpacked_cache: Path
) -> None:
    recipe = EnvironmentRecipe(backend="image", image=str(debian_root), python="3.9")
    with pytest.raises(EnvironmentBuildError, match=r"the image's python3 is 3\.11\.\d+, not 3\.9"):
        build(
            BuildRequest(
                recipe=recipe,
                base_checkout=tmp_path,
                cache_dir=unpacked_cache,
                policy=sandbox.SandboxPolicy(),
            )
        )
