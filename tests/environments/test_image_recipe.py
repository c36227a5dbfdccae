"""The image backend's recipe fields and the sandbox's image root, without building an image."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import requires_bwrap
from repogate import sandbox
from repogate.contract import load_contract
from repogate.environments import BuildRequest, build
from repogate.errors import ContractError, EnvironmentBuildError, IsolationError

CONTRACT = """
id = "t"
repo = "repo"
base_commit = "{sha}"

[requirement]
statement = "s"

[environment]
{environment}

[oracles]
fail_to_pass = ["tests/test_a.py::test_a"]
"""


def _load(tmp_path: Path, environment: str) -> Path:
    path = tmp_path / "tasks" / "c.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(CONTRACT.format(sha="a" * 40, environment=environment), encoding="utf-8")
    return path


def test_a_relative_image_is_read_from_the_task_set(tmp_path: Path) -> None:
    contract = load_contract(_load(tmp_path, 'backend = "image"\nimage = "images/debian.tar"'))
    assert contract.environment.image_archive() == tmp_path / "tasks" / "images" / "debian.tar"
    absolute = load_contract(_load(tmp_path, 'backend = "image"\nimage = "/srv/i.tar"'))
    assert absolute.environment.image_archive() == Path("/srv/i.tar")


@pytest.mark.parametrize(
    ("environment", "said"),
    [
        ('backend = "image"', 'backend "image" needs image = '),
        ('image = "debian.tar"', 'image is read by backend "image" only; add backend = "image"'),
        ('backend = "uv"\nimage = "debian.tar"', 'image is read by backend "image" only'),
    ],
)
def test_an_image_without_its_backend_or_a_backend_without_its_image_is_refused(
    tmp_path: Path, environment: str, said: str
) -> None:
    with pytest.raises(ContractError, match=said) as info:
        load_contract(_load(tmp_path, environment))
    assert "\n" not in str(info.value).strip()


def test_the_image_joins_the_contract_digest_only_when_set(tmp_path: Path) -> None:
    plain = load_contract(_load(tmp_path, "")).policy_digest()
    one = load_contract(_load(tmp_path, 'backend = "image"\nimage = "a.tar"')).policy_digest()
    other = load_contract(_load(tmp_path, 'backend = "image"\nimage = "b.tar"')).policy_digest()
    assert len({plain, one, other}) == 3


def test_an_image_root_is_refused_without_bubblewrap_even_when_weak_isolation_is_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(sandbox.SANDBOX_ENV, "none")
    root = sandbox.RootFilesystem(path=tmp_path, image="sha256:" + "0" * 64)
    policy = sandbox.SandboxPolicy(root=root)
    with (
        sandbox.allowing_weak_isolation("a test"),
        pytest.raises(IsolationError, match="an image's root file system needs bubblewrap"),
    ):
        sandbox.run(["true"], tmp_path, policy)


@requires_bwrap
@pytest.mark.parametrize("program", ["python3", "/usr/bin/env", "sh"])
def test_in_an_empty_image_nothing_of_this_machine_is_there(tmp_path: Path, program: str) -> None:
    """This machine's programs are not in the image: not found (127), as a shell says."""
    empty = tmp_path / "root"
    empty.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    policy = sandbox.SandboxPolicy(root=sandbox.RootFilesystem(path=empty, image="sha256:e"))
    result = sandbox.run([program, "--version"], work, policy)
    assert result.returncode == 127
    assert "No such file or directory" in result.stderr
    assert result.isolation.root == "sha256:e"
    assert "root file system: image sha256:e, read-only" in result.isolation.detail


def test_a_missing_image_archive_is_a_build_error_saying_how_to_fix(tmp_path: Path) -> None:
    contract = load_contract(_load(tmp_path, 'backend = "image"\nimage = "nowhere.tar"'))
    with pytest.raises(EnvironmentBuildError, match=r"nowhere\.tar is not a file; give"):
        build(
            BuildRequest(
                recipe=contract.environment,
                base_checkout=tmp_path,
                cache_dir=tmp_path / "cache",
                policy=sandbox.SandboxPolicy(),
            )
        )
