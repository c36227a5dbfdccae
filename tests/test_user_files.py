"""Every file a user (or an agent) writes takes a boolean as a boolean.

pydantic's lax mode turns the strings "yes", "on", "1" and the numbers 0 and 1 into booleans, so
``tls = "yes"`` in a contract was read as true. TOML and JSON have real booleans: every boolean
field of a model such a file is validated as must be strict. This walks each such file's model,
so a boolean field added later without :data:`pydantic.StrictBool` fails here.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from repogate.agents.scripted import Script
from repogate.contract import TransitionContract
from repogate.decision import Evidence
from repogate.environments.agent_recipe import AgentRecipe
from repogate.gates.authority import ReviewEvidence
from repogate.report.policy import Policy
from repogate.tasks.recipe import EnvMap

USER_FILES: dict[str, type[BaseModel]] = {
    "contract TOML": TransitionContract,
    "env map TOML (--env-map)": EnvMap,
    "report policy TOML (--policy)": Policy,
    "scripted agent TOML": Script,
    "agent's environment.toml": AgentRecipe,
    "review evidence JSON (--reviews)": ReviewEvidence,
    "evidence JSON (repogate decide)": Evidence,
}


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in getattr(annotation, "__args__", ()) for m in _models(arg)]


def _lax_booleans(root: type[BaseModel]) -> list[str]:
    found: list[str] = []
    seen: set[type[BaseModel]] = set()
    todo = [root]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, field in model.model_fields.items():
            if _is_bool(field) and not _strict(field):
                found.append(f"{model.__name__}.{name}")
            todo.extend(_models(field.annotation))
    return sorted(found)


def _is_bool(field: FieldInfo) -> bool:
    annotation = field.annotation
    return annotation is bool or bool in getattr(annotation, "__args__", ())


def _strict(field: FieldInfo) -> bool:
    return any(getattr(m, "strict", False) for m in field.metadata)


@pytest.mark.parametrize("what", sorted(USER_FILES))
def test_every_boolean_of_a_user_file_is_strict(what: str) -> None:
    assert _lax_booleans(USER_FILES[what]) == []
