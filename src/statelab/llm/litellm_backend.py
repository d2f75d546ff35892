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
errors. **Cost:** each call's dollars from LiteLLM's price table for the model
(``litellm.cost_per_token`` over the call's input and output tokens), stored per call and
summed per episode and run; a model the table does not know costs ``None``, never a guess.
The table is the one shipped in the installed LiteLLM (``LITELLM_LOCAL_MODEL_COST_MAP`` is
set, so a run is not slowed or changed by fetching a newer one).
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any, ClassVar

from statelab.core import Completion, ConfigError, GenParams, Message, ModelError, Usage
from statelab.llm._model import Provider, render_messages
from statelab.llm._options import ModelOptions, parse_options
from statelab.llm._safe import public_spec, storable

__all__ = ["LiteLLMError", "LiteLLMModel", "parse_litellm"]

#: environment variables whose values are credentials (masked wherever they could appear)
_SECRET_NAME = re.compile(r"(API_KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL)", re.IGNORECASE)


class LiteLLMError(ModelError):
    """A LiteLLM call failed; ``kind``/``retryable`` as the other backends classify."""

    def __init__(self, message: str, kind: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable


def parse_litellm(arg: str) -> tuple[str, ModelOptions]:
    """``<provider>/<model>[?options]`` -> (LiteLLM's model name, the options), checked."""
    model, _, query = arg.partition("?")
    model = model.strip()
    if "/" not in model or not model.split("/", 1)[0] or not model.split("/", 1)[1]:
        raise ConfigError(
            f"model 'litellm:{public_spec(model)}' must name a provider and a model, e.g."
            " litellm:anthropic/claude-3-5-haiku-latest or litellm:openai/gpt-4o-mini"
        )
    return model, parse_options(public_spec(f"litellm:{arg}"), query)


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        raise ConfigError(
            "litellm: models need it installed: pip install 'statelab[litellm]'"
        ) from None
    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


def call_cost(model: str, n_in: int, n_out: int) -> float | None:
    """Dollars for ``n_in`` input and ``n_out`` output tokens of ``model`` by LiteLLM's price
    table; ``None`` when the table does not price the model."""
    lite = _litellm()
    try:
        cost_in, cost_out = lite.cost_per_token(
            model=model, prompt_tokens=n_in, completion_tokens=n_out
        )
    except Exception:  # litellm raises for a model it has no price for
        return None
    total = float(cost_in) + float(cost_out)
    return total if total >= 0 else None


class LiteLLMModel(Provider):
    """Chat completions through ``litellm.acompletion``. Replies are free text
    (``constrained = False``: the agent maps them onto an admissible action); a JSON schema
    (``GenParams.json_schema``) goes as ``response_format`` where the provider takes one."""

    constrained = False
    takes_images = True
    served = True
    scores: ClassVar[bool] = False
    max_concurrency = 8

    def __init__(self, model: str, *, timeout: float = 60.0, max_concurrency: int = 8) -> None:
        if max_concurrency < 1 or not timeout > 0:
            raise ConfigError("litellm needs timeout > 0 and concurrency >= 1")
        self.model = model
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.model_id = f"litellm:{model}"
        self._lite = _litellm()

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.model!r})"

    @classmethod
    def spec_options(cls, arg: str) -> ModelOptions:
        """The options after the model name."""
        return parse_litellm(arg)[1]

    @classmethod
    def priced_as(cls, arg: str) -> str | None:
        """The ``provider/model`` LiteLLM's price table is read with (as :func:`call_cost`)."""
        return parse_litellm(arg)[0]

    def secrets(self) -> tuple[str, ...]:
        """Every credential-looking environment variable's value (LiteLLM reads them)."""
        return tuple(v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 6)

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "timeout": self.timeout,
            "num_retries": 0,
        }
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.json_schema is not None:
            import json

            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": json.loads(params.json_schema)},
            }
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        try:
            resp = await self._lite.acompletion(**kwargs)
        except Exception as e:  # LiteLLM maps every provider's errors onto its own classes
            raise classify(e) from None
        latency = loop.time() - t0
        choice = resp.choices[0]
        content = getattr(choice.message, "content", None)
        if content is None:
            raise LiteLLMError(f"{self.model_id}: the reply has no content", "no-content")
        text = storable(str(content))
        usage = getattr(resp, "usage", None)
        n_in = getattr(usage, "prompt_tokens", None)
        n_out = getattr(usage, "completion_tokens", None)
        u = Usage(
            int(n_in) if isinstance(n_in, int) else self.count_tokens(render_messages(messages)),
            int(n_out) if isinstance(n_out, int) else self.count_tokens(text),
        )
        cost = call_cost(self.model, u.input_tokens, u.output_tokens)
        return Completion(text, u, latency, cost=cost)


def classify(e: Exception) -> LiteLLMError:
    """A LiteLLM exception as a :class:`ModelError`: rate limits, timeouts, lost connections
    and server errors may be retried; bad requests and refused credentials may not."""
    name = type(e).__name__
    status = getattr(e, "status_code", None)
    text = " ".join(str(e).split())[:300]
    if "Timeout" in name:
        return LiteLLMError(f"litellm: timed out ({text})", "timeout", retryable=True)
    if "RateLimit" in name or status == 429:
        return LiteLLMError(f"litellm: rate limited ({text})", "rate", retryable=True)
    if "APIConnection" in name:
        return LiteLLMError(f"litellm: cannot connect ({text})", "connect", retryable=True)
    if (isinstance(status, int) and status >= 500) or "ServiceUnavailable" in name:
        return LiteLLMError(f"litellm: server error {status} ({text})", "server", retryable=True)
    if "Authentication" in name or status in (401, 403):
        return LiteLLMError(f"litellm: credentials refused ({text})", "auth")
    return LiteLLMError(f"litellm: {name} ({text})", "request")
