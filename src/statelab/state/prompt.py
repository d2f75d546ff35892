"""Turning a :class:`~statelab.core.Prompt` into chat messages: static parts first."""

from __future__ import annotations

from typing import Any

from statelab.core import Message, Prompt

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
