"""The audit's one door to the model's scoring: every reader NLL it computes passes here.

:func:`score_requests` hands a list of (messages, continuations) requests to the model's
``score_many`` at once (the requests of a decision point, or of a leave-one-chunk-out sweep,
arrive together): a batching backend (``hf:``) scores them in padded passes, the cache answers
what it has, every other backend loops. The read-time oracle's compressions go through
``ReadTimeOracle.best``, which batches its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from statelab.core import LLM, Message, ScoreRequest
from statelab.state.readtime import labelled, log_softmax

Request = tuple[list[Message], list[str]]


async def score_requests(model: LLM, requests: Sequence[Request]) -> list[list[float]]:
    """Log-likelihoods of each request's continuations, in request order (one batch)."""
    got = await model.score_many([ScoreRequest(m, list(c)) for m, c in requests])
    return [list(s) for s in got]


async def nlls(
    model: LLM, prompts: Sequence[list[Message]], actions: tuple[str, ...], a_star: str
) -> list[float]:
    """The reader's NLL (nats) of ``a_star`` among the labelled ``actions`` under each of
    ``prompts`` (log-softmax over the options, as the ``reader`` agent decides)."""
    options = labelled(actions)
    got = await score_requests(model, [(p, options) for p in prompts])
    i = actions.index(a_star)
    return [-log_softmax(s)[i] for s in got]
