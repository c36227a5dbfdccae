"""The one base of repogate's records: frozen, and strict about keys.

:class:`FrozenModel` is every record's base. :class:`ForeignModel`, its one variant, is for the few
records whose shape a third party defines and extends (SWE-bench's instance rows and prediction
files, GitHub's REST JSON, an agent program's ``agent.json``): still frozen, but keys it does not
name are ignored.

A file a user or an agent writes (a contract, an env map, a policy, a scripted agent, review
evidence) holds real booleans, TOML's and JSON's ``true`` and ``false``: the boolean fields of
its models are :data:`pydantic.StrictBool`, so ``tls = "yes"`` or ``runner_under_test = 1`` is
an error naming the key (:mod:`repogate._problems`), not read as true as pydantic's lax mode
would. It holds real numbers too: its integer fields are :data:`pydantic.StrictInt` (``"120"``,
``true`` and ``2.5`` are refused, and so is ``2.0``) and its number fields
:data:`pydantic.StrictFloat`, which takes an integer (``alpha = 1``, as TOML users write ``0``
for ``0.0``) but not a string or a boolean. ``tests/test_user_files.py`` walks those models for
a plain ``bool``, ``int`` or ``float``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic_core import PydanticCustomError


class FrozenModel(BaseModel):
    """A pydantic model that cannot be changed after validation and refuses unknown keys.

    Every record repogate reads or writes (contracts, receipts, decisions, agent files) derives
    from it, so a misspelt key is an error wherever it is read, never silently dropped.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class ForeignModel(FrozenModel):
    """A :class:`FrozenModel` of a shape someone else defines: unknown keys are ignored, not refused.

    For input repogate reads but does not own, whose owner adds keys without asking: SWE-bench's
    dataset rows and prediction files (``SWE-bench/SWE-bench``'s harness reads them by key and
    ignores the rest), GitHub's REST responses (documented as growing new fields), and the
    ``agent.json`` an agent program leaves (documented in ``docs/agents.md`` as "other keys
    ignored"). Refusing an unknown key there would refuse valid input; the keys the record does
    name are still validated, and the record is frozen. Use it nowhere else.
    """

    model_config = ConfigDict(extra="ignore")


READ_VERSIONS: tuple[int, ...] = (1,)
"""The format versions this repogate reads (:data:`SchemaVersion`), named when another is found."""


def _written_as_an_integer(value: object) -> object:
    """Refuse a version written wrong, or one this repogate does not read.

    ``true`` and ``1.0`` are refused before the literal compares them (``True == 1 == 1.0``); a
    version not read is named with the ones read.

    Raises:
        PydanticCustomError: ``int_type`` (a boolean, a string), ``int_from_float`` (a float), so
            :mod:`repogate._problems` says it as any number written wrong; ``schema_version``
            for an integer not in :data:`READ_VERSIONS` (``version 99 is not one this repogate
            reads (it reads 1): write 1, or use a repogate that reads version 99``).
    """
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    if isinstance(value, float):
        raise PydanticCustomError("int_from_float", "Input should be a valid integer")
    if isinstance(value, str):  # "1": said as any number written in quotes
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    if isinstance(value, int) and value not in READ_VERSIONS:
        reads = " or ".join(str(v) for v in READ_VERSIONS)
        raise PydanticCustomError(
            "schema_version",
            "version {found} is not one this repogate reads (it reads {reads}): write {reads}, "
            "or use a repogate that reads version {found}",
            {"found": value, "reads": reads},
        )
    return value


SchemaVersion = Annotated[Literal[1], BeforeValidator(_written_as_an_integer)]
"""A record's format version, 1, written as the integer ``1``.

pydantic's ``Literal[1]`` compares by equality, so ``schema_version = true`` and ``1.0`` loaded
as version 1; a literal cannot be made strict (pydantic refuses ``strict`` on it), so this type
refuses a boolean or a float first. Every record's ``schema_version`` (and a policy's
``version``) is this type, files a user writes or not. Another integer (``schema_version = 99``,
a file from a newer repogate) is refused naming the version found and those read
(:data:`READ_VERSIONS`), not as pydantic's "Input should be 1".
"""
