"""The prompt of one decision: x_t = [manual ; phi(o_t, h_{t-1}) ; actions]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Prompt:
    """x_t = [manual ; phi(o_t, h_{t-1}) ; actions] (seed 000, eq. in section 3.2)."""

    manual: str
    view: str
    actions: tuple[str, ...] | None
    goal: str = ""
    images: tuple[Any, ...] = ()
    #: sampling seed of this decision (derived from episode seed and step: replayable)
    seed: int = 0
    #: the env's action set never changes: it belongs to the static head of the prompt
    static_actions: bool = False

    def actions_text(self) -> str:
        if not self.actions:
            return "Available actions: any command the manual allows."
        lines = "\n".join(f"- {a}" for a in self.actions)
        return f"Available actions:\n{lines}"
