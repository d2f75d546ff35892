"""The model contract: chat completion, log-likelihood scoring, usage accounting."""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, NamedTuple

#: A chat message: ``{"role": "system"|"user"|"assistant", "content": str | list[part]}``
Message = dict[str, Any]


@dataclass(frozen=True)
class GenParams:
    """Sampling parameters of one completion request.

    ``choices``: when given, the reply must be one of ``prefix + choice`` (constrained
    decoding where the backend can do it; otherwise the agent maps the free reply onto a
    choice). ``seed`` makes sampling replayable and is part of the cache key.
    """

    temperature: float = 0.2
    top_p: float = 0.95
    max_tokens: int = 64
    stop: tuple[str, ...] = ()
    seed: int | None = None
    choices: tuple[str, ...] | None = None
    choice_prefix: str = ""
    #: a JSON schema (as JSON text) the reply must follow: structured output
    #: (``response_format`` on OpenAI-compatible servers: vLLM, Ollama, llama.cpp accept it)
    json_schema: str | None = None
    #: ask the model to use its own reasoning mode (Qwen3 / DeepSeek-R1 thinking, OpenAI
    #: reasoning models); its reasoning comes back as a leading ``<think>...</think>`` block
    reasoning: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not self.reasoning:  # requests made before this field existed keep their keys
            d.pop("reasoning")
        d["stop"] = list(self.stop)
        d["choices"] = list(self.choices) if self.choices is not None else None
        return d


@dataclass(frozen=True)
class Usage:
    """Tokens of one model call (or a sum of calls: ``a + b``), in and out."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


@dataclass(frozen=True)
class Completion:
    """One model reply: its ``text``, token ``usage``, ``latency`` in seconds, whether it came
    from the response cache (``cached``), the ``logprobs`` of its tokens when asked for, and
    ``flags`` naming what the model wrapper changed on the way in (``reply-cut``, ``redacted``,
    ``usage-replaced``; empty for a reply taken as it came), and ``decoding``: how a reply to
    ``GenParams.choices`` was held to them (``trie``: the local constrained choice; a
    server's form: ``grammar``, ``choice``, ``regex``, ``json_schema``, ``json_object``;
    ``unenforced``: asked, but free text; ``logprob``: chosen by scores (by the agent);
    ``score``: chosen by scores by the backend (openai-compat's ``constrain=score``); empty: free
    generation, no choices asked).

    A reply from the response cache spent no model time: its ``latency`` is 0, and the
    latency of the call that first answered it is kept apart, in ``original_latency`` (None
    for a reply the model gave now)."""

    text: str
    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0
    cached: bool = False
    logprobs: list[float] | None = None
    flags: tuple[str, ...] = ()
    decoding: str = ""
    #: what the call cost in US dollars, from the provider's price table where the backend
    #: knows the model (LiteLLM's); ``None`` where unknown (never guessed)
    cost: float | None = None
    #: of ``usage.input_tokens``, those the provider served from its prompt cache (priced
    #: at its cached rate; not stored: the call's ``cost`` is)
    cached_input: int = 0
    #: for a reply from the response cache, the latency of the call that first answered it
    original_latency: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The reply as a cache row keeps it: ``latency`` is the model's, the first call's."""
        first = self.original_latency
        d: dict[str, Any] = {
            "text": self.text,
            "usage": [self.usage.input_tokens, self.usage.output_tokens],
            "latency": self.latency if first is None else first,
            "logprobs": self.logprobs,
        }
        if self.flags:  # replies taken as they came keep the cache rows they always had
            d["flags"] = list(self.flags)
        if self.decoding:  # so do free replies
            d["decoding"] = self.decoding
        if self.cost is not None:
            d["cost"] = self.cost
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], cached: bool = False) -> Completion:
        """A reply from :meth:`to_dict`'s row; ``cached``: answered from the cache now, so
        it took no model time (its row's latency becomes ``original_latency``)."""
        latency = float(d.get("latency", 0.0))
        return cls(
            text=d["text"],
            usage=Usage(*d["usage"]),
            latency=0.0 if cached else latency,
            original_latency=latency if cached else None,
            cached=cached,
            logprobs=d.get("logprobs"),
            flags=tuple(d.get("flags", ())),
            decoding=str(d.get("decoding") or ""),
            cost=_cost(d.get("cost")),
        )


def _cost(value: object) -> float | None:
    """A stored cost, or ``None`` for anything that is not a finite, non-negative number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    v = float(value)
    return v if v >= 0 and v < float("inf") else None


class CompleteRequest(NamedTuple):
    """One item of :meth:`LLM.complete_many`: a chat and its sampling parameters."""

    messages: list[Message]
    params: GenParams


class ScoreRequest(NamedTuple):
    """One item of :meth:`LLM.score_many`: a chat and the continuations to score after it."""

    messages: list[Message]
    continuations: list[str]


class ModelError(RuntimeError):
    """A model call failed. A backend classifies it: ``retryable`` (the model wrapper may
    try again), ``retry_after`` (seconds the server asked for) and ``kind`` (a word the
    retry policy and the messages use); raised past the wrapper, it failed for good."""

    kind: str = "model"
    retryable: bool = False
    retry_after: float | None = None


class LLM(abc.ABC):
    """A language model backend. One backend per file in :mod:`statelab.llm`."""

    #: stable identity of the model, part of every cache key (no secrets in it)
    model_id: str = "unknown"
    #: requests this backend serves at once (a local CPU model: 1)
    max_concurrency: int = 1
    #: whether batches (:meth:`complete_many`, :meth:`score_many`) from concurrent callers
    #: are merged into one by the backend itself (``hf:``), so the model wrapper lets every
    #: caller's batch through at once instead of ``max_concurrency`` of them
    merges_batches: bool = False
    #: whether :meth:`complete` honours ``GenParams.choices`` by constrained decoding
    constrained: bool = False
    #: whether message contents may carry image parts
    vision: bool = False
    #: the tokens a request may span (prompt and reply), where the backend knows it
    context_tokens: int | None = None
    #: the spec options (:class:`statelab.llm.ModelOptions` names) this backend honours
    #: beyond the model wrapper's own; a spec setting another is refused when it is read
    honours: ClassVar[frozenset[str]] = frozenset()
    #: the options the backend's own spelling parser reads, declared once as (name, allowed,
    #: help): what its parser accepts and ``statelab list model --long`` prints
    own_options: ClassVar[tuple[tuple[str, str, str], ...]] = ()
    #: the model's name in LiteLLM's price table, where its calls are billed by it (the
    #: model wrapper prices each call by it); ``None``: calls cost nothing known
    price_as: str | None = None

    @classmethod
    def price_name(cls, arg: str) -> str | None:
        """:attr:`price_as` of the backend a spec's argument builds, known without building
        it (``None``: its calls are not priced)."""
        return None

    @abc.abstractmethod
    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        """One chat completion."""

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        """Log-likelihood of each continuation as the assistant's reply to ``messages``."""
        raise ModelError(f"{self.model_id} cannot score continuations")

    async def complete_many(self, requests: list[CompleteRequest]) -> list[Completion]:
        """One completion per request, in order: a backend that batches generation answers
        them together (each reply as :meth:`complete` gives it: sampling is per request's
        seed, never per batch); by default one :meth:`complete` after another."""
        return [await self.complete(m, p) for m, p in requests]

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        """:meth:`score` of each request, in order: a backend that batches scoring runs them
        in one padded pass; by default one :meth:`score` after another."""
        return [await self.score(m, c) for m, c in requests]

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` by the model's tokenizer where available (else an estimate)."""
        return max(1, len(text) // 4)

    def for_episode(self, key: str) -> LLM:
        """This model as one episode sees it (``key`` names the episode: run, seed, rollout).

        A backend is stateless across requests, so this is the backend itself; a stateful
        stand-in (the scripted model) starts every episode afresh, so that a resumed or
        concurrent run replays exactly like an uninterrupted one."""
        return self

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources (connections, model memory)."""
