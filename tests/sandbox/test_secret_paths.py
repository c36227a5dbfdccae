"""The user's credential stores are hidden from every untrusted command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import requires_bwrap
from repogate import sandbox
from repogate.sandbox import SandboxPolicy

# Package registries, language toolchains, cloud and password managers: files and folders.
CREDENTIAL_FILES = (
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".cargo/credentials", ".cargo/credentials.toml",
    ".gem/credentials", ".m2/settings.xml", ".config/git/credentials", ".vault-token",
    ".config/hub",
)  # fmt: skip
CREDENTIAL_FOLDERS = (
    ".config/pip", ".pip", ".terraform.d", ".config/op", ".local/share/keyrings",
    ".password-store",
)  # fmt: skip

READ_ALL = (
    "import pathlib, sys\n"
    "for path in sorted(pathlib.Path(sys.argv[1]).rglob('*')):\n"
    "    if path.is_file():\n"
    "        print(path.relative_to(sys.argv[1]), path.read_text())\n"
)


@requires_bwrap
def test_credential_stores_are_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Threat: an agent reads the user's registry tokens (npm, cargo, pip, gem, maven), a git
    credential file, a Vault or 1Password token, or a password store, and leaks or uses them."""
    home = tmp_path / "home"
    for name in CREDENTIAL_FILES:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"token-of {name}\n")
    for name in CREDENTIAL_FOLDERS:
        (home / name).mkdir(parents=True)
        (home / name / "secret").write_text(f"token-of {name}\n")
    (home / "notes.txt").write_text("not a secret\n")
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    policy = SandboxPolicy(timeout_s=20, writable=(work,))
    unseen = sandbox.run([sys.executable, "-c", READ_ALL, str(home)], work, policy)
    assert unseen.ok, unseen.stderr
    assert unseen.stdout == ""  # not granted: the home folder does not exist for the command
    # Granted a folder holding them (a repository under the home folder), they stay hidden.
    granted = policy.model_copy(update={"readable": (home,)})
    result = sandbox.run([sys.executable, "-c", READ_ALL, str(home)], work, granted)
    assert result.ok, result.stderr
    assert "notes.txt not a secret" in result.stdout  # the test does read the home folder
    leaked = [line for line in result.stdout.splitlines() if "token-of" in line]
    assert leaked == []
