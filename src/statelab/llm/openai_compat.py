"""Backend for any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, OpenAI).

Spellings (parsed in :mod:`statelab.llm._http_spec`)::

    openai-compat:<base_url>#<model>[?<option>=<value>&...]
    openai:<model>[?<option>=<value>&...]

Options (:class:`~statelab.llm._options.ModelOptions`; a value in the spec wins over one
passed by the caller): ``timeout=<seconds>`` (the whole request, default 60; a connection
gets at most ``min(timeout, 10)`` seconds to open), ``retries=<n>`` (default 5),
``concurrency=<n>`` (requests in flight; default the experiment's, 8 for a backend built
alone), ``max_body=<bytes>`` (default 16 MiB), ``max_reply=<chars>`` (default 128 Ki),
``constrain``, ``template``, ``slots`` and ``thinking=off|on|auto`` (whether a model whose
template thinks by default is sent ``chat_template_kwargs: {"enable_thinking": false}``; auto:
when ``template=`` or the model's name says it thinks; :mod:`statelab.llm._thinking`).

This backend sends one request per call and classifies how it failed; the retries, their
backoff, the limit on requests in flight and the reply's guard are the model wrapper's
(:class:`statelab.llm._model.Model`, built by :func:`statelab.llm.make_llm`): HTTP 429/5xx
and dropped connections are retryable (with the server's ``Retry-After``), a refused
connection and a timeout too; a 4xx, a body over ``max_body``, JSON nested too deeply, or
a reply without content (a refusal or a tool call) are not.
The HTTP side (the POST, its failures, the reply readers) is
:mod:`statelab.llm._compat_wire`.

e.g. ``openai-compat:http://127.0.0.1:8000/v1#Qwen/Qwen3-8B?timeout=20&retries=1``.

Credentials never leave the request: the API key is read only from an environment
variable, at request time; a ``user:password@`` in the URL becomes HTTP basic auth (never
part of a requested URL, which httpx logs). Neither appears in ``model_id``, ``repr``,
exceptions or replies (:meth:`OpenAICompatLLM.secrets` names them for the wrapper's
redactor; :func:`statelab.llm.public_spec` is the spec fit to store).

Failures raise :class:`ModelServerError` (a :class:`~statelab.core.ModelError`) with a
``kind``: ``connect``, ``timeout``, ``http`` (``status`` holds the code), ``malformed`` (a
2xx body we cannot read), ``too-large``, ``no-content``, ``transport`` or ``protocol``.
Messages are one line, cut to 200 characters, without terminal control sequences.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import os
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar
from urllib.parse import unquote, urlsplit

import httpx

from statelab.core import Completion, ConfigError, GenParams, Message, Usage
from statelab.llm import _constrain as constrain
from statelab.llm import _server_slots as server_slots
from statelab.llm import _thinking as thinking_
from statelab.llm._compat_wire import Forms, ModelServerError, Wire, parse_chat, parse_echo
from statelab.llm._http import Clients
from statelab.llm._http_spec import OPENAI_BASE_URL, check_base_url, parse_compat, parse_openai
from statelab.llm._model import Provider, render_messages
from statelab.llm._options import CONSTRAIN, MAX_BODY, ModelOptions
from statelab.llm._safe import public_spec, storable
from statelab.llm._server_scoring import ServerScorer, Slots

T = TypeVar("T")

__all__ = ["OpenAICompatLLM", "from_spec_compat", "from_spec_openai"]


class OpenAICompatLLM(Wire, Forms, Provider):
    """Chat completions over HTTP, one request per call.

    ``GenParams.choices`` are enforced by the form the server takes (``constrain``: ``auto``
    probes it once, see :mod:`statelab.llm._constrain`; ``off``: ``constrained = False``,
    the agent maps a free reply onto a choice; ``score``: no form, every choice scored by
    echo log-probabilities on ``template`` and the likeliest the reply,
    :meth:`_complete_by_score`). Scoring renders the model's chat template
    here when ``template`` names it (:mod:`statelab.llm._server_scoring`). Image parts in
    messages are passed through unchanged. No more requests are sent at once than the
    server says it answers at once (``slots``, or asked: :mod:`statelab.llm._server_slots`);
    a request waiting for a slot waits here, before its timeout starts.
    """

    constrained = True
    takes_images = True
    scores = True
    served = True
    max_concurrency = 8
    honours: ClassVar[frozenset[str]] = frozenset(
        {"timeout", "concurrency", "max_body", "constrain", "template", "slots", "thinking"}
    )

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_concurrency: int = 8,
        max_body: int = MAX_BODY,
        transport: httpx.AsyncBaseTransport | None = None,
        vision: bool = False,
        constrain: str = "auto",
        template: str | None = None,
        slots: int | None = None,
        thinking: str | None = None,
    ) -> None:
        if max_concurrency < 1 or not timeout > 0 or max_body < 1:
            raise ConfigError("openai-compat needs timeout > 0, concurrency >= 1, max_body >= 1")
        url = check_base_url(base_url)
        self.base_url = public_spec(url.geturl()).rstrip("/")
        user, password = unquote(url.username or ""), unquote(url.password or "")
        has_auth = url.username is not None or url.password is not None
        self._auth = httpx.BasicAuth(user, password) if has_auth else None
        basic = base64.b64encode(f"{user}:{password}".encode()).decode()
        self._basic = f"Basic {basic}" if has_auth else None
        raw = [url.username, url.password, password, f"{user}:{password}" if has_auth else None]
        self._secrets = tuple(s for s in raw if s)
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.max_body = max_body
        self.vision = vision
        self.model_id = f"openai-compat:{self.base_url}#{model}"
        if constrain not in CONSTRAIN:
            raise ConfigError(f"constrain={constrain!r}; allowed: {', '.join(CONSTRAIN)}")
        if constrain == "score" and template is None:
            raise ConfigError(
                "constrain=score scores the actions on the model's chat template: it needs "
                "template=<model> (a llamacpp model or a tokenizer folder)"
            )
        self.constrain = constrain
        self._cannot_score: str | None = None  # constrain=score: the server's refusal, once
        self.constrained = constrain != "off"
        if constrain != "auto":  # a form asked for by name makes other replies
            self.model_id += f"?constrain={constrain}"
        self._probe_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        if thinking not in (None, "auto", *thinking_.THINKING):
            raise ConfigError(f"thinking={thinking!r}; allowed: off, on, auto")
        self.thinking = thinking or "auto"
        if self.thinking != "auto":  # a choice by name makes other replies
            self.model_id += f"?thinking={self.thinking}"
        self._thinks: bool | None = None  # auto: decided on the first chat request
        self.scorer = ServerScorer(self, template)
        self.slots = Slots(slots) if slots else None
        self._episode: str | None = None
        self._http = Clients(url, timeout=timeout, concurrency=max_concurrency,
                             max_body=max_body, transport=transport)  # fmt: skip

    def __repr__(self) -> str:
        return f"OpenAICompatLLM({self.base_url!r}, {self.model!r})"

    @classmethod
    def spec_options(cls, arg: str) -> ModelOptions:
        """The options after the model name (``openai-compat:`` spellings hold a ``#``)."""
        return (parse_compat(arg) if "#" in arg else parse_openai(arg)).options

    @classmethod
    def price_name(cls, arg: str) -> str | None:
        """``openai:<model>`` is billed as OpenAI prices the model; an ``openai-compat:``
        server's prices are its own (not priced)."""
        return None if "#" in arg else parse_openai(arg).model

    # -- the contract -------------------------------------------------------------------

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        if params.choices and self.constrain == "score":
            return await self._complete_by_score(messages, params)
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
        else:
            body.update(thinking_.server_fields(await self.thinks(), params.reasoning))
        form = await self.constrained_form(body, params)
        if self.slots is not None:
            body.update(self.slots.fields(self._episode, messages))
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        text, n_in, n_out = await self._post("/chat/completions", body, parse_chat)
        latency = loop.time() - t0
        if form:
            text = constrain.decode(form, text, params.choice_prefix, params.choices or ())
        text = storable(text)
        usage = Usage(
            n_in if n_in is not None else self.count_tokens(render_messages(messages)),
            n_out if n_out is not None else self.count_tokens(text),
        )
        return Completion(text=text, usage=usage, latency=latency, decoding=form)

    async def _complete_by_score(self, messages: list[Message], params: GenParams) -> Completion:
        """``constrain=score``: every ``prefix + choice`` scored on the chat template (one
        ``/completions`` request with every prompt where the server takes a list, else one
        echo a choice: :class:`ServerScorer`), the likeliest the reply (ties: the first in
        the admissible order; at temperature > 0 one drawn from the choices' softmax, within
        ``top_p``, seeded by ``params.seed``, the trie's sampler over whole choices). Usage:
        the tokens the server says the requests took (the shared prompt once a choice). A
        server that cannot score refuses the option at the first call, in one line."""
        assert params.choices
        if self._cannot_score is not None:
            raise ConfigError(self._cannot_score)
        if params.reasoning:
            raise ConfigError(
                f"{self.model_id}: constrain=score leaves a choice no room to reason; "
                "use constrain=auto (or a form) with reasoning"
            )
        conts = [params.choice_prefix + c for c in params.choices]
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        try:
            got = await self.scorer.scored(messages, conts)
        except (ModelServerError, ValueError) as e:
            refused = isinstance(e, ValueError) or e.kind == "malformed" or (
                e.kind == "http" and e.status is not None and 400 <= e.status < 500
                and e.status not in (408, 429)
            )  # fmt: skip
            if not refused or self.scorer.scored_once:
                raise
            self._cannot_score = (
                f"{self.model_id}: the server gives no echo log-probabilities on /completions "
                f"({str(e)[-80:]}), so constrain=score cannot be honoured; use constrain=auto "
                "(or a form it takes: grammar, choice, regex, json_schema, json_object)"
            )
            raise ConfigError(self._cannot_score) from None
        latency = loop.time() - t0
        scores = got.scores
        if params.temperature <= 0 or len(scores) == 1:
            best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        else:
            import numpy as np

            from statelab.llm.llamacpp import sample_index

            rng = np.random.default_rng(params.seed or 0)
            best = sample_index(np.asarray(scores, dtype=np.float64), params.temperature,
                                params.top_p, rng)  # fmt: skip
        return Completion(text=storable(conts[best]), usage=Usage(got.n_in, got.n_out),
                          latency=latency, logprobs=list(scores), decoding="score")  # fmt: skip

    def for_episode(self, key: str) -> OpenAICompatLLM:
        """This backend for one episode: the same connections, with the episode's key for
        its server slots (``slots``); the backend itself when no slots are kept."""
        if self.slots is None:
            return self
        view = copy.copy(self)
        view._episode = key
        return view

    async def _probe_send(self, body: dict[str, Any]) -> constrain.ProbeReply:
        try:
            quiet = thinking_.server_fields(await self.thinks(), False)  # as the calls will be
            sent = {"model": self.model, **body, **quiet}
            text, _, _ = await self._post("/chat/completions", sent, parse_chat)
        except ModelServerError as e:  # a refusal of the form; anything else fails the call
            if e.kind == "http" and e.status is not None and e.status != 429:
                return constrain.ProbeReply(None, e.status)
            if e.kind == "no-content":
                return constrain.ProbeReply("")
            raise
        return constrain.ProbeReply(text)

    async def thinks(self) -> bool:
        """Whether this model is told not to think (``thinking``; auto: the scoring template
        mentions ``enable_thinking``, or the model's name says it thinks by default)."""
        if self._thinks is None:
            if self.thinking != "auto":
                self._thinks = self.thinking == "off"
            elif thinking_.name_thinks(self.model):
                self._thinks = True
            elif self.scorer.template is not None:
                tpl = await self.scorer.loaded()
                self._thinks = thinking_.template_thinks(getattr(tpl, "source", ""))
            else:
                self._thinks = False
        return self._thinks

    def _reasoning_fields(self) -> dict[str, Any]:
        """How a request asks for the model's own reasoning mode: OpenAI's reasoning models
        take ``reasoning_effort``; vLLM, SGLang and llama.cpp servers pass
        ``chat_template_kwargs`` to the chat template (Qwen3's ``enable_thinking``)."""
        if urlsplit(self.base_url).hostname == urlsplit(OPENAI_BASE_URL).hostname:
            return {"reasoning_effort": "medium"}
        return {"chat_template_kwargs": {"enable_thinking": True}}

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        if self.scorer.template is not None:
            return await self.scorer.score(messages, continuations)
        prefix = render_messages(messages) + "assistant: "
        return list(await asyncio.gather(*(self._score_one(prefix, c) for c in continuations)))

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the ``template``'s tokenizer where the spec names one (the
        served model's own: a bounded writer's B-token cut and a compressor's history room
        are then the local backend's), else an estimate."""
        if self.scorer.template is None:
            return super().count_tokens(text)
        return self.scorer.count(text)

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- internals ----------------------------------------------------------------------

    async def _post(self, path: str, body: dict[str, Any], parse: Callable[[Any], T]) -> T:
        """One POST (:meth:`Wire._post`) once the server has a slot free for it."""
        given = self.slots.n if self.slots is not None else None
        async with server_slots.admitted(self.base_url, self._learn_slots, given=given,
                                         sending=self.max_concurrency):  # fmt: skip
            return await super()._post(path, body, parse)

    async def _learn_slots(self) -> tuple[int | None, str]:
        """How many requests the server answers at once, where it says so (llama.cpp's
        ``/props``, llama-cpp-python's ``/v1/models``); ``(None, "")`` where it does not."""
        path = urlsplit(self.base_url).path.rstrip("/")
        root = path[: -len("/v1")] if path.endswith("/v1") else path
        props, models = await asyncio.gather(
            self._get_info(root + "/props"), self._get_info(path + "/models")
        )
        return server_slots.slots_from(props, models)

    async def _get_info(self, path: str) -> Any:
        """A server's JSON answer to ``GET path`` (with the credentials, on the backend's own
        connections and timeout: llama-cpp-python answers it after the request it is
        generating), None if it gives none: asking what the server takes fails no request."""
        headers, auth = self._credentials()
        try:
            r = await self._http.get(path, headers, auth)
            return r.json() if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError):  # a body too large is an httpx error here
            return None


    async def _score_one(self, prefix: str, continuation: str) -> float:
        if not continuation:
            return 0.0
        prompt = prefix + continuation
        body = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": 1,  # 0 means "no limit" to llama-cpp-python; the token is left out
            "echo": True,
            "logprobs": 1,
            "temperature": 0.0,
        }
        try:
            offsets, logprobs = await self._post("/completions", body, parse_echo)
        except ModelServerError as e:
            e.args = (f"{self.model_id} cannot score continuations: {e}",)
            raise
        total = 0.0
        ends = [*offsets[1:], len(prompt)]
        for start, end, lp in zip(offsets, ends, logprobs, strict=True):
            # a token of the prompt (not the one generated) covering part of the continuation
            if start < len(prompt) and end > len(prefix) and lp is not None:
                total += lp
        return total

def _constructor(options: dict[str, Any], spec: ModelOptions) -> dict[str, Any]:
    """The provider's arguments: the caller's ``timeout``/``concurrency``/``max_body``
    under the spec's own (retries and the reply cap are the wrapper's)."""
    names_given = ("timeout", "concurrency", "max_body")
    merged = spec.over(ModelOptions(**{k: v for k, v in options.items() if k in names_given}))
    names = {"timeout": "timeout", "concurrency": "max_concurrency", "max_body": "max_body"}
    return {names[k]: v for k, v in merged.given().items() if k in names}


def _served(spec: ModelOptions) -> dict[str, Any]:
    """The spec's options about the server: ``constrain``, ``template``, ``slots``,
    ``thinking``."""
    names = ("constrain", "template", "slots", "thinking")
    return {k: v for k, v in spec.given().items() if k in names}


def from_spec_compat(arg: str, **options: Any) -> OpenAICompatLLM:
    """``openai-compat:<base_url>#<model>[?options]``; the key, if any, comes from
    OPENAI_COMPAT_API_KEY (not OPENAI_API_KEY: an OpenAI key must not be sent to an
    arbitrary server). ``options`` (``timeout``, ``concurrency``, ``max_body``) apply
    unless the spec sets them."""
    spec = parse_compat(arg)
    assert spec.base_url is not None
    return OpenAICompatLLM(spec.base_url, spec.model, api_key_env="OPENAI_COMPAT_API_KEY",
                           **_constructor(options, spec.options),
                           **_served(spec.options))  # fmt: skip


def from_spec_openai(arg: str, **options: Any) -> OpenAICompatLLM:
    """``openai:<model>[?options]`` against OPENAI_BASE_URL (default the OpenAI API); needs
    OPENAI_API_KEY."""
    spec = parse_openai(arg)
    if not os.environ.get("OPENAI_API_KEY"):
        raise ConfigError(
            f"model 'openai:{spec.model}' needs the OPENAI_API_KEY environment variable"
        )
    base_url = os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
    llm = OpenAICompatLLM(base_url, spec.model, api_key_env="OPENAI_API_KEY",
                          **_constructor(options, spec.options),
                          **_served(spec.options))  # fmt: skip
    llm.price_as = spec.model
    return llm
