"""Any OpenAI-compatible chat-completions endpoint, through the ``openai`` package.

The endpoint is ``OPENAI_BASE_URL`` (the OpenAI client's own variable; unset: OpenAI's), the key
``OPENAI_API_KEY``, both read from the harness's environment when a call is made. The key is held
in memory only, by the one client an attempt's model makes (never pickled), and never written to
a file or a log or passed to the sandbox; an error message that quotes it has it replaced by
``<key>``. The client's exceptions are translated here, once,
into :class:`~repogate.errors.ModelError`.

Cost: a response's ``usage.cost`` when the endpoint reports one (OpenRouter and LiteLLM proxies
do), else tokens times the configured prices per million tokens (0 when none is configured).
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Sequence
from typing import Any

import openai
from pydantic import Field

from repogate._model import FrozenModel
from repogate.errors import AgentSpecError, ModelError
from repogate.protocols import ChatMessage, ModelReply, Usage

BASE_URL_ENV = "OPENAI_BASE_URL"
KEY_ENV = "OPENAI_API_KEY"


class Sampling(FrozenModel):
    """Sampling and call settings, recorded in the run manifest.

    Attributes:
        max_tokens: completion tokens at most per call (None: the endpoint's default).
        top_p: nucleus sampling (None: the endpoint's default).
        seed: the sampling seed sent with each call (None: none sent).
        timeout_s: seconds one HTTP request may take.
        max_retries: the client's retries of a failed request (connection errors, 429, 5xx).
        price_prompt_per_mtok: US dollars per million prompt tokens (when the endpoint reports
            no cost).
        price_completion_per_mtok: US dollars per million completion tokens (likewise).
    """

    max_tokens: int | None = Field(default=4096, gt=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    price_prompt_per_mtok: float = Field(default=0.0, ge=0)
    price_completion_per_mtok: float = Field(default=0.0, ge=0)


def require_key() -> None:
    """Check that ``OPENAI_API_KEY`` is set, before anything is written.

    Raises:
        AgentSpecError: it is unset or empty (the CLI prints one line and exits 2).
    """
    if not os.environ.get(KEY_ENV, "").strip():
        raise AgentSpecError(
            f"{KEY_ENV} is not set: a model-driven agent needs its endpoint's key",
            f"export {KEY_ENV}=... (and {BASE_URL_ENV} for an endpoint other than OpenAI's)",
        )


def endpoint() -> str:
    """The endpoint's base URL (``OPENAI_BASE_URL``, else the client's default), for the client.

    It may carry credentials (``https://user:secret@host/v1``, ``?api-key=...``): record
    :func:`shown_endpoint` instead.
    """
    return os.environ.get(BASE_URL_ENV) or "https://api.openai.com/v1"


def shown_endpoint() -> str:
    """:func:`endpoint` as it may be recorded: scheme, host, port and path only.

    The user information, the query and the fragment are dropped (RFC 3986 section 3: any of
    them may hold a credential a proxy reads), so a key written into the URL reaches no manifest,
    decision, trajectory or message.
    """
    parts = urllib.parse.urlsplit(endpoint())
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port is not None else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class OpenAIModel:
    """A model behind an OpenAI-compatible endpoint (:class:`~repogate.protocols.ChatModel`).

    Args:
        name: the model name sent with each call.
        sampling: the sampling and call settings.
    """

    def __init__(self, name: str, sampling: Sampling) -> None:
        self.name = name
        self.sampling = sampling
        self._made: tuple[str, str, openai.OpenAI] | None = None

    def _client(self, key: str) -> openai.OpenAI:
        """The client for this key and endpoint, made once (making one costs ~0.1 s)."""
        url = endpoint()
        if self._made is None or self._made[:2] != (key, url):
            client = openai.OpenAI(
                api_key=key,
                base_url=url,
                timeout=self.sampling.timeout_s,
                max_retries=self.sampling.max_retries,
            )
            self._made = (key, url, client)
        return self._made[2]

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its client (which holds the key): a worker makes its own."""
        return {**self.__dict__, "_made": None}

    def complete(self, messages: Sequence[ChatMessage], temperature: float) -> ModelReply:
        """Send one chat completion; see :meth:`repogate.protocols.ChatModel.complete`.

        Raises:
            ModelError: no key, unreachable endpoint, an HTTP error status, or no choice.
        """
        key = os.environ.get(KEY_ENV, "")
        if not key:
            raise ModelError(f"{KEY_ENV} is not set")
        extra: dict[str, Any] = {}
        if self.sampling.max_tokens is not None:
            extra["max_tokens"] = self.sampling.max_tokens
        if self.sampling.top_p is not None:
            extra["top_p"] = self.sampling.top_p
        if self.sampling.seed is not None:
            extra["seed"] = self.sampling.seed
        try:
            response = self._client(key).chat.completions.create(
                model=self.name,
                messages=[{"role": m.role, "content": m.content} for m in messages],  # type: ignore[misc]
                temperature=temperature,
                **extra,
            )
        except openai.OpenAIError as exc:
            raise ModelError(_redacted(f"{type(exc).__name__}: {exc}", key)) from None
        if not response.choices:
            raise ModelError(f"the endpoint answered with no choices (model {response.model!r})")
        choice = response.choices[0]
        return ModelReply(
            text=choice.message.content or "",
            model=response.model or "",
            finish_reason=choice.finish_reason or "",
            usage=self._usage(response.usage),
            fingerprint=response.system_fingerprint,
        )

    def reported(self) -> dict[str, Any]:
        """What the endpoint says of this model (``GET /models/{name}``), or why it said nothing.

        One request, no retry, at most 10 s: the run manifest records it; an unreachable
        endpoint is recorded, never raised (the attempts then end as the agent's failure).
        """
        key = os.environ.get(KEY_ENV, "")
        try:
            with openai.OpenAI(
                api_key=key, base_url=endpoint(), timeout=10.0, max_retries=0
            ) as client:
                info = client.models.retrieve(self.name)
        except openai.OpenAIError as exc:
            return {"error": _redacted(f"{type(exc).__name__}: {exc}", key)}
        return {"id": info.id, "created": info.created, "owned_by": info.owned_by}

    def _usage(self, usage: Any) -> Usage:
        if usage is None:
            return Usage()
        prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
        reported = (usage.model_extra or {}).get("cost")
        if isinstance(reported, int | float) and reported >= 0:
            cost = float(reported)
        else:
            cost = (
                prompt * self.sampling.price_prompt_per_mtok
                + completion * self.sampling.price_completion_per_mtok
            ) / 1e6
        return Usage(tokens=usage.total_tokens or prompt + completion, cost_usd=cost)

    def describe(self) -> dict[str, Any]:
        """Kind, model name, endpoint (never the key), sampling settings."""
        return {
            "kind": "openai",
            "model": self.name,
            "endpoint": shown_endpoint(),
            "sampling": self.sampling.model_dump(mode="json"),
        }


def _redacted(text: str, key: str) -> str:
    """``text`` without the key, and with the endpoint's URL as :func:`shown_endpoint` gives it."""
    text = text.replace(key, "<key>") if key else text
    text = text.replace(endpoint(), shown_endpoint())
    parts = urllib.parse.urlsplit(endpoint())  # the URL quoted another way (a path appended)
    for secret in (parts.password, parts.username, parts.query, parts.fragment):
        text = text.replace(secret, "<redacted>") if secret else text
    return text
