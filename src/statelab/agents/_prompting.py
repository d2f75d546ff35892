"""Agents lay out their prompts with :mod:`statelab.state.prompt` (static parts first)."""

from statelab.state.prompt import ACT_INSTRUCTION, messages

__all__ = ["ACT_INSTRUCTION", "messages"]
