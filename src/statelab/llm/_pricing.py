"""What a model call cost, in one place: LiteLLM's price table (the ``litellm`` extra).

Every backend whose calls are billed names its model as the table knows it
(:attr:`statelab.core.LLM.price_as`; :meth:`~statelab.core.LLM.price_name` from a spec,
without building it); the model wrapper prices each call from its sanitised token counts
(:func:`call_cost`), the provider's cached prompt tokens at the table's cached rate. A model
the table does not price (or LiteLLM not installed) costs ``None``, never a guess, and a
``dollars`` limit over such a model is refused when the config is read (:func:`priced`).
The table is the one shipped in the installed LiteLLM (``LITELLM_LOCAL_MODEL_COST_MAP`` is
set, so a run is not slowed or changed by fetching a newer one).
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import replace
from typing import Any

from statelab.core import Completion, ConfigError

__all__ = ["call_cost", "litellm_module", "priced", "with_cost"]


def litellm_module() -> Any:
    """The installed ``litellm``, quiet and with its local price table; a one-line
    ConfigError when it is not installed."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        raise ConfigError(
            "litellm is not installed (it prices calls and serves litellm: models): "
            "pip install 'statelab[litellm]'"
        ) from None
    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


@functools.lru_cache(maxsize=256)
def _rates(model: str) -> tuple[float, float, float] | None:
    """(input, output, cached input) dollars per token of ``model``, or None."""
    try:
        lite = litellm_module()
    except ConfigError:
        return None
    try:
        info = lite.get_model_info(model)
    except Exception:  # litellm raises for a model it has no price for
        return None
    cost_in, cost_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if not all(isinstance(c, int | float) and math.isfinite(c) and c >= 0
               for c in (cost_in, cost_out)):  # fmt: skip
        return None
    cached = info.get("cache_read_input_token_cost")
    if not (isinstance(cached, int | float) and math.isfinite(cached) and cached >= 0):
        cached = cost_in
    return float(cost_in), float(cost_out), float(cached)


def call_cost(model: str | None, n_in: int, n_out: int, cached_in: int = 0) -> float | None:
    """Dollars for ``n_in`` input tokens (``cached_in`` of them from the provider's prompt
    cache) and ``n_out`` output tokens (reasoning tokens included, as providers count them)
    of ``model``; ``None`` when the table does not price it."""
    rates = _rates(model) if model else None
    if rates is None:
        return None
    cost_in, cost_out, cost_cached = rates
    n_in, n_out = max(0, n_in), max(0, n_out)
    cached = min(max(0, cached_in), n_in)
    total = (n_in - cached) * cost_in + cached * cost_cached + n_out * cost_out
    return total if math.isfinite(total) and total >= 0 else None


def with_cost(price_as: str | None, c: Completion) -> Completion:
    """``c`` with its cost from its token counts (those the wrapper kept: a count a server
    cannot have meant was replaced before) where the model is priced; as it came else."""
    if price_as is None:
        return c
    cost = call_cost(price_as, c.usage.input_tokens, c.usage.output_tokens, c.cached_input)
    return c if cost == c.cost else replace(c, cost=cost)


def priced(price_as: str | None) -> bool:
    """Whether calls of a model named ``price_as`` in the price table get a cost."""
    return price_as is not None and _rates(price_as) is not None
