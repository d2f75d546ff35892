"""Backend for any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, OpenAI).

Spellings: ``openai-compat:<base_url>#<model>`` and ``openai:<model>``. The API key is read
only from an environment variable, at request time, and never appears in ``model_id``,
``repr``, exceptions or logs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from statelab.core import LLM, Completion, ConfigError, GenParams, Message, ModelError, Usage

__all__ = ["OPENAI_BASE_URL", "OpenAICompatLLM", "from_spec_compat", "from_spec_openai"]

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
_MAX_SLEEP = 30.0
_MALFORMED_RETRIES = 2  # a 200 reply that is not what we expect is retried at most this often
T = TypeVar("T")


class OpenAICompatLLM(LLM):
    """Chat completions over HTTP with bounded concurrency and retries with backoff.

    ``GenParams.choices`` is not enforced (``constrained = False``): the reply is free text
    that the agent maps onto a choice. Image parts in messages are passed through unchanged.
    """

    constrained = False

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_concurrency: int = 8,
        transport: httpx.AsyncBaseTransport | None = None,
        vision: bool = False,
    ) -> None:
        if max_retries < 0 or max_concurrency < 1:
            raise ConfigError("openai-compat needs max_retries >= 0 and max_concurrency >= 1")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_concurrency = max_concurrency
        self.vision = vision
        self.model_id = f"openai-compat:{self.base_url}#{model}"
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"OpenAICompatLLM({self.base_url!r}, {self.model!r})"

    # -- the contract -------------------------------------------------------------------

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        if params.seed is not None:
            body["seed"] = params.seed
        (text, n_in, n_out), latency = await self._post("/chat/completions", body, _parse_chat)
        usage = Usage(
            n_in if n_in is not None else self.count_tokens(_render(messages)),
            n_out if n_out is not None else self.count_tokens(text),
        )
        return Completion(text=text, usage=usage, latency=latency)

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        prefix = _render(messages) + "assistant: "
        return list(await asyncio.gather(*(self._score_one(prefix, c) for c in continuations)))

    async def aclose(self) -> None:
        client, self._client, self._sem, self._loop = self._client, None, None, None
        if client is not None:
            await client.aclose()

    # -- internals ----------------------------------------------------------------------

    async def _score_one(self, prefix: str, continuation: str) -> float:
        if not continuation:
            return 0.0
        prompt = prefix + continuation
        body = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": 0,
            "echo": True,
            "logprobs": 1,
            "temperature": 0.0,
        }
        try:
            (offsets, logprobs), _ = await self._post("/completions", body, _parse_echo)
        except ModelError as e:
            raise ModelError(f"{self.model_id} cannot score continuations: {e}") from None
        total = 0.0
        ends = [*offsets[1:], len(prompt)]
        for end, lp in zip(ends, logprobs, strict=True):
            if end > len(prefix) and lp is not None:  # the token covers part of the continuation
                total += lp
        return total

    def _session(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        """The client and semaphore of the running loop (made anew when the loop changes)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._sem is None or self._loop is not loop:
            self._client = httpx.AsyncClient(timeout=self.timeout, transport=self._transport)
            self._sem = asyncio.Semaphore(self.max_concurrency)
            self._loop = loop
        return self._client, self._sem

    def _key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    def _scrub(self, text: str) -> str:
        """One line, short, with the key (if a server echoes it) masked."""
        key = self._key()
        if key:
            text = text.replace(key, "***")
        return " ".join(text.split())[:200]

    async def _post(
        self, path: str, body: dict[str, Any], parse: Callable[[Any], T]
    ) -> tuple[T, float]:
        """POST with retries; returns ``parse(json)`` and the successful request's seconds."""
        client, sem = self._session()
        url = self.base_url + path
        key = self._key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        reason, malformed = "no attempt made", 0
        for attempt in range(self.max_retries + 1):
            delay: float | None = None
            async with sem:
                t0 = time.perf_counter()
                try:
                    r = await client.post(url, json=body, headers=headers)
                except httpx.UnsupportedProtocol as e:
                    raise ModelError(f"cannot reach {url}: {self._scrub(str(e))}") from None
                except httpx.TransportError as e:  # timeouts, connection errors
                    reason = f"{type(e).__name__} talking to {url}: {self._scrub(str(e))}"
                else:
                    latency = time.perf_counter() - t0
                    status = r.status_code
                    if 200 <= status < 300:
                        try:
                            return parse(r.json()), latency
                        except (ValueError, KeyError, IndexError, TypeError) as e:
                            excerpt = self._scrub(r.text) or type(e).__name__
                            reason = f"malformed response from {self.base_url}: {excerpt}"
                            malformed += 1
                            if malformed > _MALFORMED_RETRIES:
                                break
                    else:
                        reason = f"HTTP {status} from {url}: {self._scrub(r.text)}"
                        if status != 429 and status < 500:
                            raise ModelError(reason)
                        delay = _retry_after(r)
            if attempt < self.max_retries:
                wait = delay if delay is not None else self.backoff * 2**attempt
                log.debug("retrying %s (attempt %d): %s", url, attempt + 1, reason)
                await asyncio.sleep(min(wait, _MAX_SLEEP))
        raise ModelError(f"{reason} (gave up after {attempt + 1} attempts)")


def _retry_after(r: httpx.Response) -> float | None:
    try:
        return max(0.0, float(r.headers["retry-after"]))
    except (KeyError, ValueError):
        return None  # absent, or an HTTP date: fall back to exponential backoff


def _parse_chat(data: Any) -> tuple[str, int | None, int | None]:
    message = data["choices"][0]["message"]
    if not isinstance(message, dict):
        raise TypeError("choices[0].message is not an object")
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise TypeError("choices[0].message.content is not a string")
    usage = data.get("usage") or {}
    n_in, n_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return text, n_in if isinstance(n_in, int) else None, n_out if isinstance(n_out, int) else None


def _parse_echo(data: Any) -> tuple[list[int], list[float | None]]:
    lp = data["choices"][0]["logprobs"]
    offsets, logprobs = list(lp["text_offset"]), list(lp["token_logprobs"])
    if not offsets or len(offsets) != len(logprobs):
        raise ValueError("echo logprobs missing or misaligned")
    return [int(o) for o in offsets], [None if x is None else float(x) for x in logprobs]


def _render(messages: list[Message]) -> str:
    """The chat as plain text, one ``role: text`` line per message (image parts dropped)."""
    lines = []
    for m in messages:
        content = m.get("content", "")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
        lines.append(f"{m.get('role', 'user')}: {content}\n")
    return "".join(lines)


def from_spec_compat(arg: str) -> OpenAICompatLLM:
    """``openai-compat:<base_url>#<model>``; the key, if any, comes from OPENAI_COMPAT_API_KEY.

    (Not OPENAI_API_KEY: an OpenAI key must not be sent to an arbitrary server.)
    """
    base_url, _, model = arg.partition("#")
    if not model.strip() or not base_url.startswith(("http://", "https://")):
        raise ConfigError(f"model 'openai-compat:{arg}' must look like openai-compat:<url>#<model>")
    return OpenAICompatLLM(base_url, model.strip(), api_key_env="OPENAI_COMPAT_API_KEY")


def from_spec_openai(arg: str) -> OpenAICompatLLM:
    """``openai:<model>`` against OPENAI_BASE_URL (default the OpenAI API); needs OPENAI_API_KEY."""
    if not arg.strip():
        raise ConfigError("model 'openai:' needs a model name, e.g. openai:gpt-4o-mini")
    if not os.environ.get("OPENAI_API_KEY"):
        raise ConfigError(f"model 'openai:{arg}' needs the OPENAI_API_KEY environment variable")
    base_url = os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
    return OpenAICompatLLM(base_url, arg.strip(), api_key_env="OPENAI_API_KEY")
