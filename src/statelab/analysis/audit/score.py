"""The audit's one door to the model's scoring: every reader NLL it computes passes here.

:func:`score_requests` scores a list of (messages, continuations) requests. Today it calls the
single-request ``LLM.score`` once per request, in order; a backend's batched scoring replaces
this one function's body (the requests of a decision point, or of a leave-one-chunk-out sweep,
arrive together for that). With h24b's contract at merge the body becomes
``return await model.score_many([ScoreRequest(m, c) for m, c in requests])``
(``ScoreRequest`` from ``statelab.core``); the read-time oracle's compressions go through
``ReadTimeOracle.best``, which h24b batches itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from statelab.core import LLM, Message
from statelab.state.readtime import labelled, log_softmax

Request = tuple[list[Message], list[str]]


async def score_requests(model: LLM, requests: Sequence[Request]) -> list[list[float]]:
    """Log-likelihoods of each request's continuations, request by request."""
    return [list(await model.score(messages, conts)) for messages, conts in requests]


async def nlls(
    model: LLM, prompts: Sequence[list[Message]], actions: tuple[str, ...], a_star: str
) -> list[float]:
    """The reader's NLL (nats) of ``a_star`` among the labelled ``actions`` under each of
    ``prompts`` (log-softmax over the options, as the ``reader`` agent decides)."""
    options = labelled(actions)
    got = await score_requests(model, [(p, options) for p in prompts])
    i = actions.index(a_star)
    return [-log_softmax(s)[i] for s in got]
