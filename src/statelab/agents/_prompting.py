"""Turning a :class:`~statelab.core.Prompt` into chat messages: static parts first."""

from __future__ import annotations

from typing import Any

from statelab.core import Message, Prompt

ACT_INSTRUCTION = (
    'Choose the next action. Reply with one line: "Action: <one of the available actions>".'
)


def messages(prompt: Prompt, instruction: str = ACT_INSTRUCTION) -> list[Message]:
    """[manual (system) ; phi ; actions ; instruction (user)], images as OpenAI-style parts."""
    text = f"{prompt.view}\n\n{prompt.actions_text()}\n\n{instruction}"
    content: Any = text
    if prompt.images:
        content = [{"type": "text", "text": text}, *prompt.images]
    return [{"role": "system", "content": prompt.manual}, {"role": "user", "content": content}]
