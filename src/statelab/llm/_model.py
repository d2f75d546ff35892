"""The one wrapper every backend goes through, as inspect_ai's ``Model`` wraps a ``ModelAPI``.

A backend (a :class:`Provider`) only generates, scores and classifies its errors
(:class:`~statelab.core.ModelError`'s ``retryable``, ``retry_after`` and ``kind``), and
declares what it can do as class attributes. :class:`Model` adds, for every backend alike:

* a limit on requests in flight (the backend's ``max_concurrency``), per event loop;
* retries with exponential backoff (:class:`RetryPolicy`), honouring ``Retry-After``;
* the reply's guard: every secret the backend names masked (:class:`~statelab.llm._safe.
  Redactor`, in replies and error texts alike), the text cut at ``max_reply`` characters,
  token counts a server cannot have meant (negative, or past :data:`MAX_TOKENS`) replaced
  by the tokenizer's count; each such change is marked in ``Completion.flags``;
* the constraint checked on every reply to a choice: a reply a backend says it held to the
  choices (``trie``, a server's ``grammar`` ...) that is not ``prefix + choice`` is marked
  ``decoding="violated"`` (:func:`statelab.llm._constrain.held`).

The response cache (:class:`~statelab.llm.cache.CachedLLM`) wraps a :class:`Model`, and
:class:`TimedLLM` wraps the model one episode sees; :func:`statelab.llm.make_llm` is where
all of them are put together.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from statelab.core import (
    LLM,
    CompleteRequest,
    Completion,
    GenParams,
    Message,
    ModelError,
    ScoreRequest,
    Usage,
)
from statelab.llm._constrain import NONE, VIOLATED, held
from statelab.llm._options import MAX_REPLY, ModelOptions
from statelab.llm._pricing import with_cost
from statelab.llm._safe import Redactor
from statelab.llm.cache import CACHE_SECONDS

__all__ = [
    "MAX_TOKENS",
    "Model",
    "Provider",
    "RetryPolicy",
    "Role",
    "TimedLLM",
    "render_messages",
    "requests_in_flight",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: model requests being answered now, over every model of the process (live progress)
_IN_FLIGHT = [0]


def requests_in_flight() -> int:
    """Model requests being answered now (past their model's limit on requests in flight)."""
    return _IN_FLIGHT[0]


#: the most tokens a server may claim for one request; more (or fewer than 0) is not a count
#: (the response cache holds rows to the same bound: :data:`statelab.llm.cache._MAX_TOKENS`)
MAX_TOKENS = 10**9


class Role(str, Enum):
    """What a model is used for in a run: each role's model is built by the same wrapper.

    In an episode (seed 003's wiring): ``ACTING`` decides (the reader agent's model),
    ``WRITER`` writes the memory state, ``COMPRESSOR`` writes the read-time oracle's
    hindsight compressions, ``SCORER`` scores them (the reader's NLL of a*). ``READER`` is
    the frozen reader of a training job. Which model serves each role in a run is the run's
    ``model``, ``writer``, ``compressor`` and ``scorer`` axes (:func:`statelab.llm.
    serving`)."""

    ACTING = "acting"
    WRITER = "writer"
    READER = "reader"
    SCORER = "scorer"
    COMPRESSOR = "compressor"


class Provider(LLM):
    """A backend: generates, scores, classifies its errors, and declares its capabilities.

    The class attributes are known without building it (from the spec's backend name)."""

    #: whether requests may carry image parts at all (a server decides for itself)
    takes_images: ClassVar[bool] = True
    #: whether :meth:`score` gives log-likelihoods
    scores: ClassVar[bool] = False
    #: whether requests go to a server elsewhere (its endpoint bounds what is in flight)
    served: ClassVar[bool] = False

    @classmethod
    def spec_options(cls, arg: str) -> ModelOptions:
        """The options the spec's argument sets for itself (none, for most backends)."""
        return ModelOptions()

    @classmethod
    def weights(cls, arg: str) -> list[Path]:
        """The files holding the model a spec names (their hashes are its provenance)."""
        return []

    def secrets(self) -> tuple[str, ...]:
        """Credentials this backend sends (read now), for :class:`Model` to mask."""
        return ()


@dataclass(frozen=True)
class RetryPolicy:
    """How a failed request is retried: ``retries`` times at most, waiting ``backoff * 2**n``
    seconds (at most ``max_sleep``, or the server's ``Retry-After``). Some kinds of error
    are retried less, whatever ``retries`` says (``kind_retries``: a server that twice kept
    us waiting is not answering), or sooner (``kind_sleep``: a refused connection)."""

    retries: int = 5
    backoff: float = 1.0
    max_sleep: float = 30.0
    kind_retries: Mapping[str, int] = field(default_factory=lambda: {"timeout": 1, "malformed": 2})
    kind_sleep: Mapping[str, float] = field(default_factory=lambda: {"connect": 0.5})

    def wait(self, error: ModelError, attempt: int) -> float:
        """Seconds to wait before retry ``attempt + 1``."""
        kind = error.kind
        after = error.retry_after
        wait = after if after is not None and kind not in self.kind_sleep else None
        if wait is None:
            wait = min(self.backoff * 2**attempt, self.kind_sleep.get(kind, self.max_sleep))
        return min(wait, self.max_sleep)


class _Limit:
    """A semaphore of ``n`` per event loop (a backend may be used across loops)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._loop is not loop:
            self._sem, self._loop = asyncio.Semaphore(self.n), loop
        return self._sem


@functools.lru_cache(maxsize=64)
def _redactor(secrets: tuple[str, ...]) -> Redactor:
    return Redactor(secrets)


class Model(LLM):
    """A backend with the wrappers every backend shares (see the module): bounded requests
    in flight, retries with backoff, and the reply's guard. ``model_id`` and capabilities
    are the backend's, so cache keys do not change."""

    def __init__(
        self,
        inner: LLM,
        policy: RetryPolicy | None = None,
        *,
        max_reply: int | None = None,
        role: Role = Role.ACTING,
        _limit: _Limit | None = None,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self.max_reply = max_reply or MAX_REPLY
        self.role = role
        self.model_id = inner.model_id
        self.max_concurrency = inner.max_concurrency
        self.constrained = inner.constrained
        self.vision = inner.vision
        self.context_tokens = inner.context_tokens
        self._limit = _limit or _Limit(max(1, inner.max_concurrency))

    def __repr__(self) -> str:
        return f"Model({self.inner!r})"

    def for_episode(self, key: str) -> Model:
        inner = self.inner.for_episode(key)
        if inner is self.inner:
            return self
        return Model(inner, self.policy, max_reply=self.max_reply, role=self.role,
                     _limit=self._limit)  # fmt: skip

    def redact(self, text: str) -> str:
        """``text`` with the backend's secrets masked (see :class:`Redactor`)."""
        secrets = self.inner.secrets() if isinstance(self.inner, Provider) else ()
        return _redactor(tuple(s for s in secrets if s))(text) if secrets else text

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        done = await self._retry(lambda: self.inner.complete(messages, params))
        return self._finish(messages, params, done)

    def _finish(self, messages: list[Message], params: GenParams, done: Completion) -> Completion:
        if params.choices and not done.decoding:  # a backend that does not say: its flag
            done = replace(done, decoding="trie" if self.constrained else "unenforced")
        choices = params.choices or ()
        checked = choices and done.decoding not in (NONE, VIOLATED)  # never trusted
        if checked and not held(done.text, params.choice_prefix, choices):
            log.debug("%s: a reply outside its %s constraint", self.model_id, done.decoding)
            done = replace(done, decoding=VIOLATED)
        return with_cost(self.inner.price_as, self._guard(messages, done))

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        return await self._retry(lambda: self.inner.score(messages, continuations))

    def _batches(self, name: str) -> bool:
        """Whether the backend answers ``name`` (``complete_many``/``score_many``) itself."""
        return getattr(type(self.inner), name, None) is not getattr(LLM, name)

    def _merged(self) -> bool:
        """Whether the backend merges concurrent batches itself (``merges_batches``): then a
        batch takes no slot, so concurrent callers' batches reach it together."""
        return bool(getattr(self.inner, "merges_batches", False))

    async def complete_many(self, requests: list[CompleteRequest]) -> list[Completion]:
        """The backend's batch as one request (one slot, retried whole) where it batches;
        otherwise each request on its own, as many in flight as the backend serves."""
        reqs = [CompleteRequest(*r) for r in requests]
        if not reqs:
            return []
        if not self._batches("complete_many"):
            if self.max_concurrency > 1:
                return list(await asyncio.gather(*(self.complete(*r) for r in reqs)))
            return [await self.complete(*r) for r in reqs]
        done = await self._retry(lambda: self.inner.complete_many(reqs), self._merged())
        _same_length(len(reqs), len(done))
        return [self._finish(r.messages, r.params, c) for r, c in zip(reqs, done, strict=True)]

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        """As :meth:`complete_many`, for scoring."""
        reqs = [ScoreRequest(*r) for r in requests]
        if not reqs:
            return []
        if not self._batches("score_many"):
            if self.max_concurrency > 1:
                return list(await asyncio.gather(*(self.score(*r) for r in reqs)))
            return [await self.score(*r) for r in reqs]
        got = await self._retry(lambda: self.inner.score_many(reqs), self._merged())
        _same_length(len(reqs), len(got))
        return got

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def _retry(self, call: Callable[[], Awaitable[T]], unbounded: bool = False) -> T:
        """``call()``, retried as the policy says; a failure's text is redacted. It holds one
        of the backend's slots while it runs, unless ``unbounded``."""
        policy, tries = self.policy, dict[str, int]()
        attempt, last = 0, None
        for attempt in range(policy.retries + 1):
            async with contextlib.nullcontext() if unbounded else self._limit.get():
                _IN_FLIGHT[0] += 1
                try:
                    return await call()
                except ModelError as e:
                    last = e
                    if not e.retryable:
                        raise self._redacted(e, str(e)) from None
                    tries[e.kind] = tries.get(e.kind, 0) + 1
                    if tries[e.kind] > policy.kind_retries.get(e.kind, policy.retries):
                        break
                finally:
                    _IN_FLIGHT[0] -= 1
            if attempt < policy.retries:
                wait = policy.wait(last, attempt)
                log.debug("retrying %s (attempt %d) in %.2f s", self.model_id, attempt + 1, wait)
                await asyncio.sleep(wait)
        assert last is not None
        raise self._redacted(last, f"{last} (gave up after {attempt + 1} attempts)") from None

    def _redacted(self, e: ModelError, message: str) -> ModelError:
        e.args = (self.redact(message),)  # the same error, its class and fields kept
        return e

    def _guard(self, messages: list[Message], c: Completion) -> Completion:
        """The reply as it may enter prompts, caches and stores (see the module)."""
        flags = list(c.flags)
        text = self.redact(c.text)
        if text != c.text:
            flags.append("redacted")
        if len(text) > self.max_reply:
            text = text[: self.max_reply]
            flags.append("reply-cut")
        n_in, n_out = c.usage.input_tokens, c.usage.output_tokens
        if not _count_ok(n_in):
            n_in = self.inner.count_tokens(render_messages(messages))
        if not _count_ok(n_out):
            n_out = self.inner.count_tokens(text)
        if (n_in, n_out) != (c.usage.input_tokens, c.usage.output_tokens):
            flags.append("usage-replaced")
        if not flags or tuple(flags) == c.flags:
            return c
        return dataclasses.replace(c, text=text, usage=Usage(n_in, n_out), flags=tuple(flags))


def _same_length(asked: int, got: int) -> None:
    if asked != got:
        raise ModelError(f"a batch of {asked} requests came back with {got} answers")


def _count_ok(n: Any) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_TOKENS


def render_messages(messages: list[Message]) -> str:
    """The chat as plain text, one ``role: text`` line per message (image parts dropped)."""
    lines = []
    for m in messages:
        content = m.get("content", "")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
        lines.append(f"{m.get('role', 'user')}: {content}\n")
    return "".join(lines)


class TimedLLM(LLM):
    """Counts wall time spent in the model, to separate statelab's own overhead. Time the
    response cache spends (hashing the request, looking it up, queueing the write) is
    statelab's, not the model's: it is left out, so ``steps.overhead`` counts it.

    :meth:`sharing` times another model into the same count (a memory that writes with a
    model of its own, e.g. a trained DSSR writer)."""

    def __init__(self, inner: LLM, _clock: list[float] | None = None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.constrained = inner.constrained
        self.vision = inner.vision
        self.max_concurrency = inner.max_concurrency
        self.context_tokens = inner.context_tokens
        self._clock = _clock if _clock is not None else [0.0]

    @property
    def seconds(self) -> float:
        """Seconds spent in the model (and in every model timed with :meth:`sharing`)."""
        return self._clock[0]

    @seconds.setter
    def seconds(self, value: float) -> None:
        self._clock[0] = value

    def sharing(self, other: LLM) -> TimedLLM:
        """``other`` timed into this count."""
        return TimedLLM(other, self._clock)

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        return await self._timed(self.inner.complete(messages, params))

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        return await self._timed(self.inner.score(messages, continuations))

    async def complete_many(self, requests: list[CompleteRequest]) -> list[Completion]:
        return await self._timed(self.inner.complete_many(requests))

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        return await self._timed(self.inner.score_many(requests))

    async def _timed(self, call: Awaitable[T]) -> T:
        start, cache_before = time.perf_counter(), CACHE_SECONDS.get()
        try:
            return await call
        finally:
            cache_s = CACHE_SECONDS.get() - cache_before
            self._clock[0] += time.perf_counter() - start - cache_s

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)
