"""Built-in scenarios: small real git repositories built from files shipped in the package.

A scenario is a folder ``scenarios/<name>/`` holding::

    scenario.toml     [[commit]] tables, in order: label, message, tree (a folder under files/
                      whose files are written over the previous state), delete (paths to remove).
                      Optional [[variant]] tables: name, contract (a contract file in this folder).
    files/<tree>/...  the overlay trees
    contract.toml     the task contract; "{{commit:<label>}}" is replaced with that commit's SHA and
                      "{{repo}}" with the built repository's path relative to the contract
                      (``repo``), so a run folder holding them can be moved or copied and resume
    agents/<n>.toml   scripted agents (see repogate.agents.scripted)
    reviews/, hidden/ optional folders copied beside the rendered contracts as they are (review
                      evidence, ``reviews/{agent}.json``; hidden test patches), since a contract's
                      relative paths are resolved against its own folder

Building writes a real git repository (fixed author and dates, so SHAs are reproducible), the branch
``main`` at the last commit, and each rendered contract beside it.
"""

from __future__ import annotations

import shutil
import tomllib
from importlib import resources
from pathlib import Path

from pydantic import Field

from repogate import git
from repogate._model import FrozenModel
from repogate.errors import UserInputError
from repogate.vocabulary import InjectionKind

SCENARIO_ROOT = "scenarios"
SIDE_FOLDERS = ("reviews", "hidden")
REPO_DIR = "repo"
"""The built repository, beside the rendered contracts."""


class ScenarioCommit(FrozenModel):
    """One commit of a scenario's history: its overlay tree and the paths it deletes."""

    label: str
    message: str
    tree: str | None = None
    delete: tuple[str, ...] = ()


class ScenarioVariant(FrozenModel):
    """A further contract of the same scenario repository (a second task on the same history)."""

    name: str
    contract: str
    agents: tuple[str, ...] | None = None


class ScenarioInjection(FrozenModel):
    """An injected variant of a scenario's contract (``repogate tasks vary``) and its agents."""

    kind: InjectionKind
    contract: str = "contract"
    agents: tuple[str, ...]


class ScenarioSpec(FrozenModel):
    """A scenario's ``scenario.toml``: its commits, contract variants and injected variants."""

    description: str = ""
    agents: tuple[str, ...] | None = None
    commit: tuple[ScenarioCommit, ...]
    variant: tuple[ScenarioVariant, ...] = ()
    injected: tuple[ScenarioInjection, ...] = ()

    def contract_files(self) -> tuple[tuple[str, str], ...]:
        """(stem, source file) of each contract a build writes: ``contract`` first, then variants.

        The build writes each as ``<stem>.toml``; an injection's ``contract`` names its stem.
        """
        return (("contract", "contract.toml"), *((v.name, v.contract) for v in self.variant))


def read_spec(name: str) -> tuple[Path, ScenarioSpec]:
    """Return scenario ``name``'s shipped folder and its parsed ``scenario.toml``.

    Raises:
        UserInputError: no scenario of that name.
    """
    folder = _source(name)
    return folder, ScenarioSpec.model_validate(
        tomllib.loads((folder / "scenario.toml").read_text())
    )


def shipped_ids(name: str) -> dict[str, str]:
    """Return the id of each contract :func:`build_scenario` writes for ``name``, by stem.

    Read from the shipped contract files (their ``id`` is never a placeholder), so nothing is
    built: no repository, no file written.

    Raises:
        UserInputError: no scenario of that name.
    """
    folder, spec = read_spec(name)
    return {
        stem: str(tomllib.loads((folder / file).read_text())["id"])
        for stem, file in spec.contract_files()
    }


class BuiltScenario(FrozenModel):
    """A built scenario: the repository, commit SHAs by label, contracts, and scripted agent files."""

    name: str
    repo: Path
    commits: dict[str, str]
    contracts: tuple[Path, ...]
    agents: tuple[Path, ...]
    pairings: dict[str, tuple[str, ...] | None] = Field(default_factory=dict)


def _root() -> Path:
    return Path(str(resources.files("repogate.tasks"))) / SCENARIO_ROOT


def scenario_names() -> tuple[str, ...]:
    """Return the names of the built-in scenarios, sorted."""
    return tuple(sorted(p.name for p in _root().iterdir() if (p / "scenario.toml").is_file()))


def _source(name: str) -> Path:
    folder = _root() / name
    if not (folder / "scenario.toml").is_file():
        raise UserInputError(
            f"unknown scenario {name!r}", f"choose one of: {', '.join(scenario_names())}"
        )
    return folder


def _overlay(src: Path, dest: Path) -> None:
    for path in sorted(src.rglob("*")):
        target = dest / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            if path.name.endswith((".sh", ".py")) and path.stat().st_mode & 0o111:
                target.chmod(0o755)


def _render(text: str, commits: dict[str, str]) -> str:
    for label, sha in commits.items():
        text = text.replace("{{commit:" + label + "}}", sha)
    return text.replace("{{repo}}", REPO_DIR)


def build_scenario(name: str, dest: Path) -> BuiltScenario:
    """Build scenario ``name`` under ``dest`` (``dest/repo`` plus rendered contracts).

    Raises:
        UserInputError: no scenario of that name.
        GitError: git failed while building.
    """
    folder, spec = read_spec(name)
    dest = dest.resolve()
    if dest.exists():
        shutil.rmtree(dest)
    repo = dest / REPO_DIR
    git.init_repo(repo)
    commits: dict[str, str] = {}
    for commit in spec.commit:
        if commit.tree is not None:
            _overlay(folder / "files" / commit.tree, repo)
        for path in commit.delete:
            (repo / path).unlink()
        commits[commit.label] = git.commit_all(repo, commit.message)
    contracts = spec.contract_files()
    pairings = {"contract": spec.agents} | {v.name: v.agents for v in spec.variant}
    written = []
    for stem, file in contracts:
        out = dest / f"{stem}.toml"
        out.write_text(_render((folder / file).read_text(), commits))
        written.append(out)
    agents_dir = dest / "agents"
    agents = []
    if (folder / "agents").is_dir():
        agents_dir.mkdir(exist_ok=True)
        for agent in sorted((folder / "agents").glob("*.toml")):
            shutil.copyfile(agent, agents_dir / agent.name)
            agents.append(agents_dir / agent.name)
    for side in SIDE_FOLDERS:
        if (folder / side).is_dir():
            shutil.copytree(folder / side, dest / side, dirs_exist_ok=True)
    return BuiltScenario(
        name=name,
        repo=repo,
        commits=commits,
        contracts=tuple(written),
        agents=tuple(agents),
        pairings={str(dest / f"{stem}.toml"): pairings[stem] for stem, _ in contracts},
    )


def default_agents(
    built: BuiltScenario, contract: Path, contract_has_reference: bool
) -> tuple[str, ...]:
    """Return the agent specs the embedded default runs on one of a scenario's contracts.

    ``agents`` in ``scenario.toml`` (or in a ``[[variant]]``) names them: ``gold``, ``null`` and
    scripted agent file stems; without it, gold (when the contract has a reference), null and
    every scripted agent run.
    """
    scripted = {path.stem: f"scripted:{path}" for path in built.agents}
    named = built.pairings.get(str(contract))
    if named is None:
        gold = ("gold",) if contract_has_reference else ()
        return (*gold, "null", *scripted.values())
    return tuple(scripted.get(name, name) for name in named)
