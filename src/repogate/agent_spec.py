"""Agent specs: the ``--agent`` text, parsed once, at the command line, into a typed value.

======================  ==================  ===============================================
text                    value               agent
======================  ==================  ===============================================
``gold``                :class:`GoldSpec`   applies the contract's reference patch
``null``                :class:`NullSpec`   changes nothing
``predictions:FILE``    :class:`PredSpec`   SWE-bench predictions; ``FILE#MODEL`` picks one
                                            ``model_name_or_path`` of a file holding several
``cmd:COMMAND``         :class:`CmdSpec`    any command-line agent, split as a shell splits
                                            words (no shell runs it)
``scripted:FILE``       :class:`ScriptSpec` canned edits from a TOML file
``baseline:MODEL``      :class:`ModelSpec`  localise, repair, validate with MODEL
                                            (``baseline:MODEL:CONFIG.toml`` sets sampling)
``mini:MODEL``          :class:`ModelSpec`  mini-swe-agent's loop with MODEL, actions in
                                            the sandbox (``mini:MODEL:CONFIG.yaml``)
``commit:SHA``          :class:`CommitSpec` proposes commit SHA's tree (a pull request's head;
                                            what ``repogate gate`` evaluates)
======================  ==================  ===============================================

A model-driven agent's MODEL is the name sent to the OpenAI-compatible endpoint
(``OPENAI_BASE_URL``), or ``@FILE``: replay the replies of a recorded trajectory.

:data:`AgentSpec` is their union, told apart by ``kind``. :func:`parse_agent_spec` is the one
place the text is read; everything after it (the runner, the store's attempt ids, the agents'
factories, the tables' labels) takes the value. ``text`` is what the store records and what
rebuilds the value; a file named relative to the folder repogate was started in is resolved
there, once (``file``, ``argv``), while ``text`` keeps what the user wrote.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from repogate._model import FrozenModel
from repogate.errors import AgentSpecError

KINDS_HINT = (
    "use one of: gold, null, predictions:FILE, cmd:'COMMAND', scripted:FILE, baseline:MODEL, "
    "mini:MODEL, commit:SHA"
)
_CONFIG_SUFFIXES = {"baseline": (".toml",), "mini": (".yaml", ".yml")}
_BARE_KINDS = ("gold", "null")
"""Agent kinds written alone, with no argument."""
_ARGUMENT_KINDS = ("predictions", "cmd", "scripted", "baseline", "mini", "commit")
"""Agent kinds written ``KIND:ARGUMENT``."""


class GoldSpec(FrozenModel):
    """``gold``: the contract's reference (gold) patch."""

    kind: Literal["gold"] = "gold"

    @property
    def text(self) -> str:
        """The spec as written (``gold``)."""
        return "gold"

    @property
    def name(self) -> str:
        """The short name tables and review-file paths use (``gold``)."""
        return "gold"

    def files(self) -> tuple[Path, ...]:
        """Files the agent reads (none)."""
        return ()


class NullSpec(FrozenModel):
    """``null``: no change, the floor every task's oracles must reject."""

    kind: Literal["null"] = "null"

    @property
    def text(self) -> str:
        """The spec as written (``null``)."""
        return "null"

    @property
    def name(self) -> str:
        """The short name (``null``)."""
        return "null"

    def files(self) -> tuple[Path, ...]:
        """Files the agent reads (none)."""
        return ()


class PredSpec(FrozenModel):
    """``predictions:FILE`` or ``predictions:FILE#MODEL``.

    Attributes:
        arg: what followed ``predictions:``, as written.
        file: the predictions file (JSON or JSONL).
        model: the ``model_name_or_path`` it picks, or None (the file's only model).
        require_all: ``run --require-all-predictions``: a contract the file has no row for is
            bad input, refused before anything runs; otherwise that attempt is the agent's empty
            patch (status ``no_prediction``), as SWE-bench counts it.
    """

    kind: Literal["predictions"] = "predictions"
    arg: str
    file: Path
    model: str | None = None
    require_all: bool = False

    @property
    def text(self) -> str:
        """The spec as written."""
        return f"predictions:{self.arg}"

    @property
    def name(self) -> str:
        """The model it picks, else the file's stem (``preds``)."""
        return self.model if self.model is not None else self.file.stem

    def files(self) -> tuple[Path, ...]:
        """The predictions file."""
        return (self.file,)

    def with_model(self, model: str) -> PredSpec:
        """This file with ``model`` picked (``predictions:FILE#MODEL``)."""
        return self.model_copy(update={"arg": f"{self.arg}#{model}", "model": model})


def _script_word(words: Sequence[str]) -> str | None:
    """The first word naming a script (a path, or a file name with a suffix), or ``-m``'s module."""
    for place, word in enumerate(words):
        if word == "-m" and place + 1 < len(words):
            return words[place + 1]
        if not word.startswith("-") and (
            "/" in word or re.fullmatch(r"\.[A-Za-z]\w*", Path(word).suffix)
        ):
            return word
    return None


class CmdSpec(FrozenModel):
    """``cmd:COMMAND``: a command line split into words as a POSIX shell splits them.

    Attributes:
        arg: the command as written.
        argv: its words; a word naming a file relative to the folder repogate was started in
            (``./fix.sh``, ``sh fix.sh``) is made absolute, as the command runs in the agent's
            workspace, where that file is not.
    """

    kind: Literal["cmd"] = "cmd"
    arg: str
    argv: tuple[str, ...]

    @property
    def text(self) -> str:
        """The spec as written."""
        return f"cmd:{self.arg}"

    @property
    def name(self) -> str:
        """``cmd:`` and the base name of the script the command runs (``cmd:fix.sh``).

        The script is the first later word that names a file (holds a ``/`` or ends in a
        suffix such as ``.py``) or the module after ``-m``; else the first word itself:
        ``cmd:python3 agents/fix.py --fast`` is ``cmd:fix.py``, ``cmd:python3 -m agent``
        ``cmd:agent``, ``cmd:sleep 30`` ``cmd:sleep`` (an interpreter names no agent).
        """
        words = shlex.split(self.arg)
        script = _script_word(words[1:]) or words[0]
        return f"cmd:{Path(script).name or script}"

    def files(self) -> tuple[Path, ...]:
        """The words of the command that name files (its scripts)."""
        return tuple(Path(word) for word in self.argv if Path(word).is_absolute())


class ScriptSpec(FrozenModel):
    """``scripted:FILE``: canned edits (the format is in :mod:`repogate.agents.scripted`).

    Attributes:
        arg: the path as written (or, for the embedded default, relative to the run folder).
        file: the script file.
    """

    kind: Literal["scripted"] = "scripted"
    arg: str
    file: Path

    @property
    def text(self) -> str:
        """The spec as written."""
        return f"scripted:{self.arg}"

    @property
    def name(self) -> str:
        """The script's stem (``edits-tests``)."""
        return Path(self.arg).stem

    def files(self) -> tuple[Path, ...]:
        """The script file."""
        return (self.file,)


class ModelSpec(FrozenModel):
    """``baseline:MODEL[:CONFIG]`` or ``mini:MODEL[:CONFIG]``: a model-driven agent.

    Attributes:
        kind: ``baseline`` (:mod:`repogate.agents.baseline`) or ``mini``
            (:mod:`repogate.agents.mini`).
        arg: what followed the kind, as written.
        model: the model name sent to the endpoint (``@FILE`` for a replay, as written).
        replay: the recorded trajectory a replay answers from, else None.
        config: the agent's configuration file (TOML for the baseline, mini-swe-agent's YAML for
            mini), else None (the defaults).
    """

    kind: Literal["baseline", "mini"]
    arg: str
    model: str
    replay: Path | None = None
    config: Path | None = None

    @property
    def text(self) -> str:
        """The spec as written."""
        return f"{self.kind}:{self.arg}"

    @property
    def name(self) -> str:
        """``baseline:MODEL`` (a replay: ``baseline:@STEM``); ``--baseline`` takes it."""
        model = f"@{self.replay.stem}" if self.replay is not None else self.model
        return f"{self.kind}:{model}"

    def files(self) -> tuple[Path, ...]:
        """The configuration file and the recording, when given."""
        return tuple(p for p in (self.config, self.replay) if p is not None)


class CommitSpec(FrozenModel):
    """``commit:SHA``: no agent; the candidate is commit SHA's tree (a pull request's head).

    Attributes:
        arg: the commit as written (7-40 hex digits).
    """

    kind: Literal["commit"] = "commit"
    arg: str = Field(pattern=r"^[0-9a-f]{7,40}$")

    @property
    def text(self) -> str:
        """The spec as written."""
        return f"commit:{self.arg}"

    @property
    def name(self) -> str:
        """``commit:`` and the commit's first 12 digits."""
        return f"commit:{self.arg[:12]}"

    def files(self) -> tuple[Path, ...]:
        """Files the agent reads (none)."""
        return ()


AgentSpec = Annotated[
    GoldSpec | NullSpec | PredSpec | CmdSpec | ScriptSpec | ModelSpec | CommitSpec,
    Field(discriminator="kind"),
]
"""One agent spec, told apart by ``kind``."""


def split_command(arg: str) -> list[str]:
    """Split ``arg`` into words as a POSIX shell would (``shlex``), without running a shell.

    Raises:
        AgentSpecError: an unterminated quote or escape, or no word at all.
    """
    try:
        argv = shlex.split(arg)
    except ValueError as exc:
        raise AgentSpecError(
            f"agent command {arg!r} cannot be split into words ({exc})",
            "close the quote, e.g. --agent \"cmd:python agent.py 'two words'\"",
        ) from None
    if not argv:
        raise AgentSpecError(f"agent command {arg!r} is empty", "write it as cmd:COMMAND")
    return argv


def _absolute_if_file(word: str) -> str:
    """Return ``word`` as an absolute path when it names a file from the start folder, else as is."""
    try:
        path = Path.cwd() / word
        return str(path.resolve()) if word and path.is_file() else word
    except (OSError, ValueError):  # a name too long for the filesystem, or holding a NUL
        return word


def _predictions(arg: str) -> PredSpec:
    """``FILE#MODEL`` picks a model; a path that is itself a file is never split."""
    path, sep, model = arg.rpartition("#")
    if sep and not Path(arg).is_file():
        return PredSpec(arg=arg, file=Path(path), model=model)
    return PredSpec(arg=arg, file=Path(arg))


def _model_spec(kind: Literal["baseline", "mini"], arg: str) -> ModelSpec:
    """``MODEL`` or ``MODEL:CONFIG`` (CONFIG ends in the kind's suffix); ``@FILE`` replays."""
    model, sep, config = arg.rpartition(":")
    if not (sep and model and config.endswith(_CONFIG_SUFFIXES[kind])):
        model, config = arg, ""
    replay = Path(model[1:]) if model.startswith("@") and len(model) > 1 else None
    return ModelSpec(
        kind=kind, arg=arg, model=model, replay=replay, config=Path(config) if config else None
    )


def _did_you_mean(kind: str, arg: str) -> str:
    """`` (did you mean 'gold'?)`` naming the agent kind closest to a misspelt ``kind``, or ``""``.

    The kind is matched without case (``Gold``), by :func:`difflib.get_close_matches`; the
    suggestion keeps the argument written (``predictons:p.json`` gives ``predictions:p.json``),
    and a kind that takes one and was given none is shown with ``...``.
    """
    close = difflib.get_close_matches(kind.lower(), _BARE_KINDS + _ARGUMENT_KINDS, n=1)
    if not close:
        return ""
    if close[0] in _BARE_KINDS:
        return f" (did you mean {close[0]!r}?)"
    return f" (did you mean {close[0] + ':' + (arg or '...')!r}?)"


def parse_agent_spec(text: str) -> AgentSpec:
    """Parse one ``--agent`` value.

    Args:
        text: ``gold``, ``null``, ``predictions:FILE[#MODEL]``, ``cmd:COMMAND``,
            ``scripted:FILE`` or ``commit:SHA``.

    Returns:
        The typed spec. Files are not read here (see :func:`repogate.agents.resolve_specs`).

    Raises:
        AgentSpecError: an unknown kind, a missing or unexpected argument, or a command that
            cannot be split into words; the message lists the valid kinds, and names the
            closest one for a misspelt kind (``gld``: ``did you mean 'gold'?``).
    """
    kind, sep, arg = text.partition(":")
    if kind in _BARE_KINDS:
        if sep:
            raise AgentSpecError(f"agent {text!r} takes no argument", f"write it as {kind}")
        return GoldSpec() if kind == "gold" else NullSpec()
    if kind not in _ARGUMENT_KINDS:
        raise AgentSpecError(f"unknown agent {text!r}{_did_you_mean(kind, arg)}", KINDS_HINT)
    if not arg:
        raise AgentSpecError(f"agent {text!r} needs an argument", f"write it as {kind}:...")
    if kind == "predictions":
        return _predictions(arg)
    if kind == "scripted":
        return ScriptSpec(arg=arg, file=Path(arg))
    if kind in ("baseline", "mini"):
        return _model_spec(kind, arg)  # type: ignore[arg-type]
    if kind == "commit":
        if re.fullmatch(r"[0-9a-f]{7,40}", arg) is None:
            raise AgentSpecError(
                f"agent {text!r} names no commit", "write it as commit:SHA (7-40 hex digits)"
            )
        return CommitSpec(arg=arg)
    return CmdSpec(arg=arg, argv=tuple(_absolute_if_file(w) for w in split_command(arg)))


def attempt_tag(spec: AgentSpec) -> str:
    """Return the filesystem-safe agent part of an attempt id.

    A readable tag (kind and the argument's last path part, without ``.toml``/``.json[l]``, at
    most 40 characters) and a digest of the whole spec text, so specs sharing a long prefix
    never collide.
    """
    arg = getattr(spec, "arg", "")
    tail = arg.rsplit("/", 1)[-1].removesuffix(".toml").removesuffix(".jsonl").removesuffix(".json")
    readable = f"{spec.kind}-{tail}" if arg else spec.kind
    tag = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in readable)
    return f"{tag[:40]}-{hashlib.sha256(spec.text.encode()).hexdigest()[:8]}"


def label_of(text: str) -> str:
    """Return the short name of a recorded spec text; the text itself if it does not parse."""
    try:
        return parse_agent_spec(text).name
    except AgentSpecError:
        return text


def agent_labels(texts: Iterable[str], width: int | None = None) -> dict[str, str]:
    """Return a label per recorded spec text for tables: its short name, unless two share it.

    Two specs whose short names agree (``cmd:python3 a.py`` and ``cmd:python3 b.py`` are both
    ``cmd:python3``; two ``fix.toml`` scripts in different folders) are labelled by their full
    text, so no table shows two agents alike. With ``width`` (a table column's), such a text is
    cut in its middle (``cmd:py…n3 a.py``): two specs differ at their end as often as at their
    start, and a column's right-hand ellipsis would make them look alike again.
    """
    short = {text: label_of(text) for text in dict.fromkeys(texts)}
    taken: dict[str, int] = {}
    for name in short.values():
        taken[name] = taken.get(name, 0) + 1
    return {
        text: name if taken[name] == 1 else middle_cut(text, width) for text, name in short.items()
    }


def middle_cut(text: str, width: int | None) -> str:
    """``text`` cut in its middle to ``width`` characters (``payme…compat``); whole when it fits."""
    if width is None or len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]
