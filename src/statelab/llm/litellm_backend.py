"""``litellm:<provider>/<model>[?options]``: closed models through LiteLLM (the ``litellm``
extra), with what each call cost.

LiteLLM's async completion reaches Anthropic, Gemini, Bedrock, Azure, OpenAI and about a
hundred more providers with one request shape. This backend only generates and classifies
errors; the statelab wrapper around every backend (:class:`~statelab.llm._model.Model`)
keeps the response cache, retries with backoff (LiteLLM's own retries are off:
``num_retries=0``), the limit on requests in flight and the token accounting, as for every
other backend.

Credentials and endpoints come from LiteLLM's own environment variables only
(``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``, ``AZURE_API_KEY`` / ``AZURE_API_BASE``, AWS's
for Bedrock, ``OPENAI_API_KEY`` / ``OPENAI_API_BASE`` for ``openai/…`` and any
OpenAI-compatible server); every credential-looking variable set is masked in replies and
errors; ``?api_base=<url>`` names the server for this spec (one grid may reach two local
servers). **Cost:** the model wrapper prices each call by LiteLLM's table
(:mod:`statelab.llm._pricing`, from the sanitised token counts).

**Options** (:class:`~statelab.llm._options.ModelOptions`; declared in ``honours``, any other
refused when the spec is read): ``timeout`` (the whole call, body included), ``retries``,
``concurrency``, ``max_body`` (every body capped as it arrives: :mod:`statelab.llm.
_litellm_http`), ``max_reply``, ``constrain`` (a reply to a choice held by the server's form,
sent as openai-compat sends it: ``response_format``, and ``grammar`` / ``structured_outputs``
in ``extra_body``; ``auto`` probes the server once, as :mod:`statelab.llm._constrain` says)
and ``api_base``.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any, ClassVar

from statelab.core import Completion, ConfigError, GenParams, Message, ModelError, Usage
from statelab.llm import _constrain as constrain
from statelab.llm._compat_wire import Forms, NoContent, parse_chat
from statelab.llm._http_spec import check_base_url
from statelab.llm._lean_http import BodyTooLarge, TooManyInterim, deadline
from statelab.llm._litellm_http import body_cap, install, provider_client
from statelab.llm._model import Provider, render_messages
from statelab.llm._options import CONSTRAIN, MAX_BODY, ModelOptions, parse_options
from statelab.llm._pricing import litellm_module
from statelab.llm._safe import public_spec, storable

__all__ = ["LiteLLMError", "LiteLLMModel", "from_spec", "parse_litellm"]

#: environment variables whose values are credentials (masked wherever they could appear)
_SECRET_NAME = re.compile(r"(API_KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL)", re.IGNORECASE)
#: the text of a body over ``max_body`` (:class:`BodyTooLarge`), wherever LiteLLM wraps it
_OVER = re.compile(r"response body over \d+ bytes \(max_body\)")
#: the request fields LiteLLM takes as arguments; any other a form adds goes in extra_body
_ARGUMENTS = ("model", "messages", "temperature", "top_p", "max_tokens", "stop", "seed",
              "response_format")  # fmt: skip


class LiteLLMError(ModelError):
    """A LiteLLM call failed; ``kind``/``retryable`` as the other backends classify, and
    the HTTP ``status`` where a server gave one."""

    def __init__(
        self, message: str, kind: str, *, retryable: bool = False, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable
        self.status = status


def parse_litellm(arg: str) -> tuple[str, ModelOptions]:
    """``<provider>/<model>[?options]`` -> (LiteLLM's model name, the options), checked."""
    model, _, query = arg.partition("?")
    model = model.strip()
    if "/" not in model or not model.split("/", 1)[0] or not model.split("/", 1)[1]:
        raise ConfigError(
            f"model 'litellm:{public_spec(model)}' must name a provider and a model, e.g."
            " litellm:anthropic/claude-3-5-haiku-latest or litellm:openai/gpt-4o-mini"
        )
    options = parse_options(public_spec(f"litellm:{arg}"), query)
    if options.api_base is not None:
        check_base_url(options.api_base)
    return model, options


def from_spec(arg: str, **options: Any) -> LiteLLMModel:
    """``<provider>/<model>[?options]``; the caller's ``timeout``, ``concurrency`` and
    ``max_body`` apply unless the spec sets them."""
    model, spec = parse_litellm(arg)
    given = {k: v for k, v in options.items() if k in ("timeout", "concurrency", "max_body")}
    o = spec.over(ModelOptions(**given))
    return LiteLLMModel(
        model,
        timeout=o.timeout or 60.0,
        max_concurrency=o.concurrency or 8,
        max_body=o.max_body or MAX_BODY,
        constrain=o.constrain or "auto",
        api_base=o.api_base,
    )


class LiteLLMModel(Forms, Provider):
    """Chat completions through ``litellm.acompletion``. A reply to ``GenParams.choices``
    is held to them by the form the server takes (``constrain``; ``off``: free text the
    agent maps onto an action); a JSON schema goes as ``response_format``."""

    constrained = True
    takes_images = True
    served = True
    scores: ClassVar[bool] = False
    max_concurrency = 8
    honours: ClassVar[frozenset[str]] = frozenset(
        {"timeout", "concurrency", "max_body", "constrain", "api_base"}
    )

    def __init__(
        self,
        model: str,
        *,
        timeout: float = 60.0,
        max_concurrency: int = 8,
        max_body: int = MAX_BODY,
        constrain: str = "auto",
        api_base: str | None = None,
    ) -> None:
        if max_concurrency < 1 or not timeout > 0 or max_body < 1:
            raise ConfigError("litellm needs timeout > 0, concurrency >= 1, max_body >= 1")
        if constrain not in CONSTRAIN:
            raise ConfigError(f"constrain={constrain!r}; allowed: {', '.join(CONSTRAIN)}")
        if constrain == "score":  # scoring renders the chat template here: openai-compat's
            raise ConfigError(
                "constrain=score is openai-compat's (scoring on template=); litellm takes "
                "auto, off, or a form: grammar, choice, regex, json_schema, json_object"
            )
        self.model = model
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.max_body = max_body
        self.constrain = constrain
        self.constrained = constrain != "off"
        self.api_base = api_base
        self.model_id = f"litellm:{model}"
        if api_base is not None:  # another server: other replies
            self.model_id += f"?api_base={public_spec(api_base)}"
        if constrain != "auto":  # a form asked for by name makes other replies
            self.model_id += f"{'&' if api_base else '?'}constrain={constrain}"
        self.base_url = public_spec(api_base) if api_base else "litellm"  # the probe's key
        self.price_as = model
        self._probe_lock = None
        self._lite = litellm_module()
        install(self._lite)
        self._client = provider_client(self._lite, model)

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.model!r})"

    @classmethod
    def spec_options(cls, arg: str) -> ModelOptions:
        """The options after the model name."""
        return parse_litellm(arg)[1]

    @classmethod
    def price_name(cls, arg: str) -> str | None:
        """The model as LiteLLM names it (its price table's key)."""
        return parse_litellm(arg)[0]

    def secrets(self) -> tuple[str, ...]:
        """Every credential-looking environment variable's value (LiteLLM reads them)."""
        found = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 6]
        return tuple(found)

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
        form = await self.constrained_form(body, params)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        text, n_in, n_out, cached = await self._chat(body)
        latency = loop.time() - t0
        if form:
            text = constrain.decode(form, text, params.choice_prefix, params.choices or ())
        text = storable(text)
        u = Usage(
            n_in if n_in is not None else self.count_tokens(render_messages(messages)),
            n_out if n_out is not None else self.count_tokens(text),
        )
        return Completion(text, u, latency, decoding=form, cached_input=cached)

    async def _chat(self, body: dict[str, Any]) -> tuple[str, int | None, int | None, int]:
        """One call: (text, input tokens, output tokens, cached input tokens), or a
        classified :class:`LiteLLMError`."""
        kwargs = {k: v for k, v in body.items() if k in _ARGUMENTS}
        extra = {k: v for k, v in body.items() if k not in _ARGUMENTS}
        if extra:
            kwargs["extra_body"] = extra
        if self.api_base is not None:
            kwargs["api_base"] = self.api_base
        if self._client is not None:
            kwargs["client"] = self._client
        try:
            with body_cap(self.max_body):
                async with deadline(self.timeout):
                    resp = await self._lite.acompletion(
                        **kwargs, timeout=self.timeout, num_retries=0, max_retries=0
                    )
        except (asyncio.TimeoutError, TimeoutError):
            reason = f"litellm: no reply within {self.timeout:g} s from {self.model_id}"
            raise LiteLLMError(reason, "timeout", retryable=True) from None
        except Exception as e:  # LiteLLM maps every provider's errors onto its own classes
            raise classify(e) from None
        return self._reply(resp)

    def _reply(self, resp: Any) -> tuple[str, int | None, int | None, int]:
        data = resp.model_dump() if hasattr(resp, "model_dump") else resp
        try:
            text, n_in, n_out = parse_chat(data)
        except NoContent as e:
            raise LiteLLMError(f"{self.model_id}: the reply has no content ({e})",
                               "no-content") from None  # fmt: skip
        except (ValueError, KeyError, IndexError, TypeError) as e:
            what = "no choices" if isinstance(e, IndexError) else type(e).__name__
            raise LiteLLMError(f"{self.model_id}: malformed reply ({what})", "malformed",
                               retryable=True) from None  # fmt: skip
        usage = data.get("usage") if isinstance(data, dict) else None
        details = (usage or {}).get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        return text, n_in, n_out, cached if isinstance(cached, int) else 0

    async def _probe_send(self, body: dict[str, Any]) -> constrain.ProbeReply:
        try:
            text, _, _, _ = await self._chat({"model": self.model, **body})
        except LiteLLMError as e:  # a refusal of the form; anything else fails the call
            if e.kind == "request":
                return constrain.ProbeReply(None, e.status or 400)
            if e.kind == "no-content":
                return constrain.ProbeReply("")
            raise
        return constrain.ProbeReply(text)


def _causes(e: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    cur: BaseException | None = e
    while cur is not None and cur not in seen and len(seen) < 16:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def classify(e: Exception) -> LiteLLMError:
    """A LiteLLM exception as a :class:`ModelError`: rate limits, timeouts, lost connections
    and server errors may be retried; bad requests, refused credentials and a body over
    ``max_body`` may not. One line, never LiteLLM's traceback."""
    name = type(e).__name__
    status = getattr(e, "status_code", None)
    status = status if isinstance(status, int) else None
    text = " ".join(str(e).split())[:300]
    chain = _causes(e)
    big = next((c for c in chain if isinstance(c, BodyTooLarge)), None)
    over = _OVER.search(str(e))  # LiteLLM may keep only the text of the cause
    if big is not None or over is not None:
        return LiteLLMError(f"litellm: {big or (over and over[0])}", "too-large")
    if any(isinstance(c, TooManyInterim) for c in chain):
        return LiteLLMError("litellm: malformed response (too many interim replies)", "malformed")
    if any(isinstance(c, RecursionError) for c in chain) or "nested too deeply" in str(e):
        return LiteLLMError("litellm: malformed response (JSON nested too deeply)", "malformed")
    if "Timeout" in name:
        return LiteLLMError(f"litellm: timed out ({text})", "timeout", retryable=True)
    if "RateLimit" in name or status == 429:
        return LiteLLMError(f"litellm: rate limited ({text})", "rate", retryable=True,
                            status=status)  # fmt: skip
    if "APIConnection" in name:
        return LiteLLMError(f"litellm: cannot connect ({text})", "connect", retryable=True)
    if (status is not None and status >= 500) or "ServiceUnavailable" in name:
        return LiteLLMError(f"litellm: server error {status} ({text})", "server",
                            retryable=True, status=status)  # fmt: skip
    if "Authentication" in name or status in (401, 403):
        return LiteLLMError(f"litellm: credentials refused ({text})", "auth", status=status)
    return LiteLLMError(f"litellm: {name} ({text})", "request", status=status)
