"""Agents lay out their prompts with :mod:`statelab.state.prompt` (static parts first), and
complete past a reasoning model's thinking block."""

from __future__ import annotations

from dataclasses import replace

from statelab.agents._parse import reasoning_open
from statelab.core import LLM, Call, GenParams, Message

#: room for a reasoning model's block when a stop string or max_tokens cut it short
REASONING_MAX_TOKENS = 2048


async def complete_past_reasoning(
    llm: LLM, msgs: list[Message], params: GenParams, kind: str = "act"
) -> list[Call]:
    """One call; a second when the reply opens a reasoning block it did not close.

    Reasoning models (DeepSeek-R1 distills, Qwen3 thinking) open with ``<think>`` and a
    newline, so a one-line agent's ``"\\n"`` stop (or a short ``max_tokens``) leaves nothing
    but the tag. The same request is then made again without stop strings and with at least
    :data:`REASONING_MAX_TOKENS`; both calls are recorded (``<kind>-cut``, then ``<kind>``).
    The last call's text is the reply to parse (:func:`~statelab.agents._parse.parse_action`
    skips its reasoning block) and to store (the block included). Deterministic: the
    second call depends only on the first reply, never on what earlier steps saw.
    """
    first = await llm.complete(msgs, params)
    if not reasoning_open(first.text):
        return [Call(kind, msgs, first)]
    room = replace(params, stop=(), max_tokens=max(params.max_tokens, REASONING_MAX_TOKENS))
    second = await llm.complete(msgs, room)
    return [Call(f"{kind}-cut", msgs, first), Call(kind, msgs, second)]


__all__ = ["REASONING_MAX_TOKENS", "complete_past_reasoning"]
