"""Turning a :class:`~statelab.core.Prompt` into chat messages: static parts first."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from statelab.agents._parse import reasoning_open
from statelab.core import LLM, Call, GenParams, Message, Prompt

#: room for a reasoning model's block when a stop string or max_tokens cut it short
REASONING_MAX_TOKENS = 2048

ACT_INSTRUCTION = (
    'Choose the next action. Reply with one line: "Action: <one of the available actions>".'
)


def messages(prompt: Prompt, instruction: str = ACT_INSTRUCTION) -> list[Message]:
    """x_t = [manual ; phi ; actions] as chat messages, static parts first (cache-friendly).

    The manual is the system message. An env whose action set never changes (seed 000: "we
    keep M and A fixed within an environment") has its actions listed right after the manual,
    so that llama.cpp's KV cache (and servers' prefix caches) reuse them across steps; a
    changing admissible list follows phi. Images travel as OpenAI-style parts.
    """
    head = prompt.manual
    if prompt.static_actions:
        head = f"{prompt.manual}\n\n{prompt.actions_text()}"
        text = f"{prompt.view}\n\n{instruction}"
    else:
        text = f"{prompt.view}\n\n{prompt.actions_text()}\n\n{instruction}"
    content: Any = text
    if prompt.images:
        content = [{"type": "text", "text": text}, *prompt.images]
    return [{"role": "system", "content": head}, {"role": "user", "content": content}]


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
