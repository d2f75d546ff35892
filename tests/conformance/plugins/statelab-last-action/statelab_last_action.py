"""``last-action``: a history that keeps only the last action taken (an immutable state), as a
statelab plugin: an installed package whose ``statelab.plugins`` entry point names this
module, which registers the history when the registries load it."""

from __future__ import annotations

from dataclasses import dataclass

from statelab.core import (
    LLM,
    BuildContext,
    Call,
    ConfigError,
    Memory,
    Observation,
    PrivilegedView,
    Transition,
)
from statelab.state import HISTORIES

NAME = "last-action"


@dataclass(frozen=True)
class LastAction:
    action: str = ""
    t: int = 0


class LastActionMemory(Memory):
    name = NAME
    label = "last action only"

    def init(self, obs: Observation, privileged: PrivilegedView | None) -> LastAction:
        return LastAction()

    async def write(
        self, state: LastAction, transition: Transition, model: LLM | None
    ) -> tuple[LastAction, list[Call]]:
        return LastAction(transition.action, state.t + 1), []

    def render(self, state: LastAction) -> str:
        return f"Last action (step {state.t}): {state.action}" if state.action else ""


@HISTORIES.register(NAME, "last-action (test plugin)")
def _factory(arg: str | None, ctx: BuildContext) -> Memory:
    if arg is not None:
        raise ConfigError(f"history {NAME!r} takes no argument, got '{NAME}:{arg}'")
    return LastActionMemory()

