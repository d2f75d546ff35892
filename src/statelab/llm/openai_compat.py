"""Backend for any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, OpenAI).

Spellings::

    openai-compat:<base_url>#<model>[?<option>=<value>&...]
    openai:<model>[?<option>=<value>&...]

Options (after the model name, URL-query style; each also a constructor argument, and a
value in the spec wins over one passed by the caller):

* ``timeout=<seconds>``: the longest wait for a reply (default 60; a connection gets at
  most ``min(timeout, 10)`` seconds to open);
* ``retries=<n>``: retries of a failed request (default 5). HTTP 429/5xx and dropped
  connections back off exponentially (1 s, 2 s, 4 s ... at most 30 s, or the server's
  ``Retry-After``); a refused connection is retried after at most 0.5 s; a timeout is retried
  at most once, whatever ``retries`` says (a server that twice kept us waiting ``timeout``
  seconds is not answering);
* ``concurrency=<n>``: requests in flight at once (default: the experiment's
  ``concurrency``; 8 for a backend built alone). The HTTP client keeps as many connections.

A plain ``http://`` server (vLLM, SGLang, llama.cpp, Ollama on their own ports) is spoken to
through a lean HTTP/1.1 client (:class:`statelab.llm._lean_http.LeanHTTP`: one keep-alive pool
sized to ``concurrency``, one write per request, bodies by length or chunked); ``https://``,
an HTTP proxy from the environment, or a given ``transport`` go through httpx.
``STATELAB_HTTP_CLIENT=httpx`` takes httpx for everything (benchmarks/concurrency.py
compares the two).

e.g. ``openai-compat:http://127.0.0.1:8000/v1#Qwen/Qwen3-8B?timeout=20&retries=1``.

The base URL is checked when the spec is (scheme http/https, a host, a port in 1-65535): a
bad one is a one-line :class:`~statelab.core.ConfigError`. Credentials never leave the
request: the API key is read only from an environment variable, at request time; a
``user:password@`` in the URL becomes HTTP basic auth (never part of a requested URL, which
httpx logs). Neither appears in ``model_id``, ``repr``, exceptions or logs
(:func:`statelab.llm.public_spec` is the spec fit to store); a query parameter named like a
credential (``api_key``, ``token``...) is refused, as it would be logged with the URL.

Failures raise :class:`ModelServerError` (a :class:`~statelab.core.ModelError`) with a
``kind``: ``connect`` (refused, unknown host), ``timeout``, ``http`` (an error status),
``malformed`` (a 2xx body we cannot read) or ``transport`` (another network failure), so a
caller can stop sending work to a dead server. Messages are one line, cut to 200
characters, without terminal control sequences; reply texts are made storable
(:func:`statelab.llm.storable`).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import ipaddress
import json
import logging
import os
import ssl
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

import httpx

from statelab.core import LLM, Completion, ConfigError, GenParams, Message, ModelError, Usage
from statelab.llm._lean_http import LeanHTTP, Response
from statelab.llm._safe import looks_secret, public_spec, storable, terminal_safe

__all__ = [
    "OPENAI_BASE_URL",
    "ModelServerError",
    "OpenAICompatLLM",
    "check_base_url",
    "from_spec_compat",
    "from_spec_openai",
    "parse_compat",
    "parse_openai",
    "parse_options",
]

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
_MAX_SLEEP = 30.0
_CONNECT_SLEEP = 0.5  # the longest pause before retrying a refused connection
_CONNECT_TIMEOUT = 10.0
_POOL = 8  # connections per HTTP client (see OpenAICompatLLM._session)
_TIMEOUT_RETRIES = 1  # a timed-out request is retried at most this often
_MALFORMED_RETRIES = 2  # a 200 reply that is not what we expect is retried at most this often
#: spec option -> constructor argument, and how its value is read
_OPTIONS: dict[str, tuple[str, Callable[[str], float | int]]] = {
    "timeout": ("timeout", float),
    "retries": ("max_retries", int),
    "concurrency": ("max_concurrency", int),
}
T = TypeVar("T")


class ModelServerError(ModelError):
    """A request to a model server failed for good; ``kind`` says how.

    ``connect`` (refused, unknown host), ``timeout``, ``http`` (``status`` holds the code),
    ``malformed`` (a 2xx body we cannot read), ``transport`` (another network failure) or
    ``protocol`` (the URL cannot be spoken to).
    """

    def __init__(self, message: str, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


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
        if max_retries < 0 or max_concurrency < 1 or not timeout > 0:
            raise ConfigError("openai-compat needs timeout > 0, retries >= 0 and concurrency >= 1")
        url = check_base_url(base_url)
        self.base_url = public_spec(url.geturl()).rstrip("/")
        # requests go to the URL without userinfo and query; the query travels as params
        self._url = url._replace(netloc=url.netloc.rpartition("@")[2], query="").geturl()
        self._url = self._url.rstrip("/")
        self._params = httpx.QueryParams(url.query)
        self._auth = (
            httpx.BasicAuth(unquote(url.username or ""), unquote(url.password or ""))
            if url.username is not None or url.password is not None
            else None
        )
        self._basic = (
            "Basic "
            + base64.b64encode(
                f"{unquote(url.username or '')}:{unquote(url.password or '')}".encode()
            ).decode()
            if self._auth is not None
            else None
        )
        self._split = url
        # what a server might echo, raw and decoded, to mask in messages
        raw = [url.username, url.password]
        self._secrets = sorted({s for x in raw if x for s in (x, unquote(x))}, key=len)[::-1]
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_concurrency = max_concurrency
        self.vision = vision
        self.model_id = f"openai-compat:{self.base_url}#{model}"
        self._transport = transport
        self._clients: list[httpx.AsyncClient] = []
        self._lean: LeanHTTP | None = None
        self._load: list[int] = []
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
        if params.reasoning:
            body.update(self._reasoning_fields())
        if params.json_schema is not None:
            schema = json.loads(params.json_schema)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema, "strict": True},
            }
        (text, n_in, n_out), latency = await self._post("/chat/completions", body, _parse_chat)
        text = storable(text)
        usage = Usage(
            n_in if n_in is not None else self.count_tokens(_render(messages)),
            n_out if n_out is not None else self.count_tokens(text),
        )
        return Completion(text=text, usage=usage, latency=latency)

    def _reasoning_fields(self) -> dict[str, Any]:
        """How a request asks for the model's own reasoning mode: OpenAI's reasoning models
        take ``reasoning_effort``; vLLM, SGLang and llama.cpp servers pass
        ``chat_template_kwargs`` to the chat template (Qwen3's ``enable_thinking``)."""
        if urlsplit(self.base_url).hostname == urlsplit(OPENAI_BASE_URL).hostname:
            return {"reasoning_effort": "medium"}
        return {"chat_template_kwargs": {"enable_thinking": True}}

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        prefix = _render(messages) + "assistant: "
        return list(await asyncio.gather(*(self._score_one(prefix, c) for c in continuations)))

    async def aclose(self) -> None:
        clients, self._clients, self._sem, self._loop = self._clients, [], None, None
        lean, self._lean = self._lean, None
        if lean is not None:
            lean.close()
        for client in clients:
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
        except ModelServerError as e:
            message = f"{self.model_id} cannot score continuations: {e}"
            raise ModelServerError(message, e.kind, e.status) from None
        total = 0.0
        ends = [*offsets[1:], len(prompt)]
        for end, lp in zip(ends, logprobs, strict=True):
            if end > len(prefix) and lp is not None:  # the token covers part of the continuation
                total += lp
        return total

    def _session(self) -> asyncio.Semaphore:
        """The clients and semaphore of the running loop (made anew when the loop changes).

        The connections are spread over clients of at most :data:`_POOL` each: httpcore scans
        every connection of a pool on each request (and polls its socket), so one pool of 256
        costs a core at 256 requests in flight, while 32 pools of 8 cost next to nothing."""
        loop = asyncio.get_running_loop()
        if (
            (not self._clients and self._lean is None)
            or self._sem is None
            or self._loop is not loop
        ):
            n = self.max_concurrency
            self._sem, self._loop = asyncio.Semaphore(n), loop
            if self._lean_fits():
                u = self._split
                self._lean = LeanHTTP(
                    u.hostname or "",
                    u.port or 80,
                    u.netloc.rpartition("@")[2],
                    self.timeout,
                    min(self.timeout, _CONNECT_TIMEOUT),
                )
                return self._sem
            timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, _CONNECT_TIMEOUT))
            k = -(-n // _POOL)
            limits = httpx.Limits(max_connections=-(-n // k), max_keepalive_connections=-(-n // k))
            tls = _tls()
            self._clients = [
                httpx.AsyncClient(
                    timeout=timeout, transport=self._transport, limits=limits, verify=tls
                )
                for _ in range(k)
            ]
            self._load = [0] * k
        return self._sem

    def _lean_fits(self) -> bool:
        """Whether :class:`LeanHTTP` speaks to this server: plain http, no transport given,
        no HTTP proxy in the environment, and httpx not asked for."""
        if self._split.scheme != "http" or self._transport is not None:
            return False
        if os.environ.get("STATELAB_HTTP_CLIENT", "").lower() == "httpx":
            return False
        proxies = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
        return not any(os.environ.get(v) for v in proxies)

    async def _send(
        self, url: str, body: dict[str, Any], headers: dict[str, str], auth: Any
    ) -> Response:
        """POST through the lean client, or through the httpx client with the fewest
        requests in flight (never one at its limit: the semaphore bounds the total)."""
        if self._lean is not None:
            target = urlsplit(url).path + (f"?{self._split.query}" if self._split.query else "")
            if "Authorization" not in headers and self._basic is not None:
                headers = {**headers, "Authorization": self._basic}
            return await self._lean.post(target, body, headers)
        load, clients = self._load, self._clients
        i = min(range(len(load)), key=load.__getitem__)
        load[i] += 1
        try:
            return await clients[i].post(
                url, json=body, headers=headers, auth=auth, params=self._params
            )
        finally:
            load[i] -= 1

    def _key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    def _scrub(self, text: str) -> str:
        """One line, short, printable, with credentials (if a server echoes them) masked."""
        for secret in (self._key(), *self._secrets):
            if secret:
                text = text.replace(secret, "***")
        return " ".join(terminal_safe(text).split())[:200]

    async def _post(
        self, path: str, body: dict[str, Any], parse: Callable[[Any], T]
    ) -> tuple[T, float]:
        """POST with retries; returns ``parse(json)`` and the successful request's seconds."""
        sem = self._session()
        url, shown = self._url + path, self.base_url + path
        key = self._key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        auth = self._auth if key is None and self._auth is not None else httpx.USE_CLIENT_DEFAULT
        reason, kind, status, malformed, timeouts = "no attempt made", "transport", None, 0, 0
        attempt = 0
        for attempt in range(self.max_retries + 1):
            delay: float | None = None
            async with sem:
                t0 = time.perf_counter()
                try:
                    r = await self._send(url, body, headers, auth)
                except (httpx.UnsupportedProtocol, httpx.InvalidURL) as e:
                    message = f"cannot talk to {shown}: {self._scrub(str(e))}"
                    raise ModelServerError(message, "protocol") from None
                except httpx.TimeoutException as e:
                    kind, timeouts = "timeout", timeouts + 1
                    reason = f"{type(e).__name__} after {self.timeout:g} s talking to {shown}"
                    if timeouts > _TIMEOUT_RETRIES:
                        break
                except httpx.ConnectError as e:
                    kind, delay = "connect", min(self.backoff * 2**attempt, _CONNECT_SLEEP)
                    reason = f"cannot connect to {shown}: {self._scrub(str(e))}"
                except httpx.TransportError as e:  # the connection dropped, a broken reply
                    kind = "transport"
                    reason = f"{type(e).__name__} talking to {shown}: {self._scrub(str(e))}"
                else:
                    latency = time.perf_counter() - t0
                    status = r.status_code
                    if 200 <= status < 300:
                        try:
                            return parse(r.json()), latency
                        except (ValueError, KeyError, IndexError, TypeError) as e:
                            excerpt = self._scrub(r.text) or type(e).__name__
                            kind = "malformed"
                            reason = f"malformed response from {shown}: {excerpt}"
                            malformed += 1
                            if malformed > _MALFORMED_RETRIES:
                                break
                    else:
                        kind, reason = "http", f"HTTP {status} from {shown}: {self._scrub(r.text)}"
                        if status != 429 and status < 500:
                            raise ModelServerError(reason, kind, status)
                        delay = _retry_after(r)
            if attempt < self.max_retries:
                wait = delay if delay is not None else self.backoff * 2**attempt
                log.debug("retrying %s (attempt %d): %s", shown, attempt + 1, reason)
                await asyncio.sleep(min(wait, _MAX_SLEEP))
        message = f"{reason} (gave up after {attempt + 1} attempts)"
        raise ModelServerError(message, kind, status if kind in ("http", "malformed") else None)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client of the process: httpx builds one per client
    otherwise, loading the CA bundle each time (~60-80 ms of CPU, even for http URLs)."""
    return httpx.create_ssl_context()


def _retry_after(r: Response) -> float | None:
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
    # servers that parse reasoning out of the reply (vLLM --reasoning-parser, DeepSeek) send
    # it apart: it is put back as the <think> block the model wrote, unclosed when the reply
    # stopped inside it, so that agents see and store one text
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning.strip():
        text = f"<think>{reasoning}</think>{text}" if text else f"<think>{reasoning}"
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


def check_base_url(base_url: str) -> SplitResult:
    """The parsed URL, or a one-line ConfigError saying what is wrong with it (no secrets)."""
    shown = public_spec(base_url)
    try:
        url = urlsplit(base_url.strip())
        port = url.port  # raises on a port out of range or not a number
        host = url.hostname or ""
    except ValueError as e:
        raise ConfigError(f"model URL {shown!r} is not a valid URL ({e})") from None
    if url.scheme not in ("http", "https"):
        raise ConfigError(f"model URL {shown!r} must start with http:// or https://")
    if not host:
        raise ConfigError(f"model URL {shown!r} has no host")
    if port == 0:
        raise ConfigError(f"model URL {shown!r}: port 0 is not a port (1-65535)")
    if url.fragment:
        raise ConfigError(f"model URL {shown!r}: '#' starts the model name; put it last")
    if url.netloc.rpartition("@")[2].startswith("["):
        try:
            ipaddress.IPv6Address(host.partition("%")[0])
        except ValueError:
            raise ConfigError(f"model URL {shown!r}: bad IPv6 address {host!r}") from None
    elif not all(c.isalnum() or c in "-._" for c in host):
        raise ConfigError(f"model URL {shown!r}: bad host name {host!r}")
    secret = [k for k, _ in parse_qsl(url.query) if looks_secret(k)]
    if secret:  # a URL's query is logged (httpx logs every request's URL): no place for keys
        raise ConfigError(
            f"model URL {shown!r}: no credentials in the query ({', '.join(secret)}); "
            "give the key in OPENAI_COMPAT_API_KEY"
        )
    try:
        httpx.URL(base_url)
    except (httpx.InvalidURL, ValueError) as e:
        raise ConfigError(f"model URL {shown!r} is not a valid URL ({e})") from None
    return url


def parse_options(spec: str, query: str) -> dict[str, Any]:
    """Constructor arguments from a spec's ``?timeout=10&retries=2`` (a ConfigError names
    the spec and the bad option)."""
    out: dict[str, Any] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise ConfigError(f"model {spec!r}: options must read ?name=value&name=value") from None
    for name, raw in pairs:
        if name not in _OPTIONS:
            allowed = ", ".join(_OPTIONS)
            raise ConfigError(f"model {spec!r}: unknown option {name!r}; allowed: {allowed}")
        arg, convert = _OPTIONS[name]
        if arg in out:
            raise ConfigError(f"model {spec!r}: option {name!r} given twice")
        try:
            out[arg] = convert(raw)
        except ValueError:
            raise ConfigError(f"model {spec!r}: option {name}={raw!r} is not a number") from None
    if out.get("timeout", 1) <= 0 or out.get("max_retries", 0) < 0:
        raise ConfigError(f"model {spec!r}: timeout must be > 0 and retries >= 0")
    if out.get("max_concurrency", 1) < 1:
        raise ConfigError(f"model {spec!r}: concurrency must be >= 1")
    return out


def parse_compat(arg: str) -> tuple[str, str, dict[str, Any]]:
    """``<base_url>#<model>[?options]`` -> (base_url, model, constructor options), checked."""
    spec = public_spec(f"openai-compat:{arg}")
    base_url, _, rest = arg.partition("#")
    model, _, query = rest.partition("?")
    if not model.strip():
        raise ConfigError(f"model {spec!r} must look like openai-compat:<url>#<model>")
    check_base_url(base_url)
    return base_url, model.strip(), parse_options(spec, query)


def parse_openai(arg: str) -> tuple[str, dict[str, Any]]:
    """``<model>[?options]`` -> (model, constructor options), checked."""
    model, _, query = arg.partition("?")
    if not model.strip():
        raise ConfigError("model 'openai:' needs a model name, e.g. openai:gpt-4o-mini")
    return model.strip(), parse_options(public_spec(f"openai:{arg}"), query)


def from_spec_compat(arg: str, **options: Any) -> OpenAICompatLLM:
    """``openai-compat:<base_url>#<model>[?options]``; the key, if any, comes from
    OPENAI_COMPAT_API_KEY (not OPENAI_API_KEY: an OpenAI key must not be sent to an
    arbitrary server). ``options`` (e.g. ``timeout``, ``max_retries``) apply unless the spec
    sets them."""
    base_url, model, opts = parse_compat(arg)
    kw = {**options, **opts}
    return OpenAICompatLLM(base_url, model, api_key_env="OPENAI_COMPAT_API_KEY", **kw)


def from_spec_openai(arg: str, **options: Any) -> OpenAICompatLLM:
    """``openai:<model>[?options]`` against OPENAI_BASE_URL (default the OpenAI API); needs
    OPENAI_API_KEY."""
    model, opts = parse_openai(arg)
    if not os.environ.get("OPENAI_API_KEY"):
        raise ConfigError(f"model 'openai:{model}' needs the OPENAI_API_KEY environment variable")
    base_url = os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
    kw = {**options, **opts}
    return OpenAICompatLLM(base_url, model, api_key_env="OPENAI_API_KEY", **kw)
