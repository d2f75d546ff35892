"""The agent contract: a prompt in, a decision out. Agents never know which env they are in."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from statelab.core._component import Component
from statelab.core._llm import LLM, Completion, Message

if TYPE_CHECKING:
    from statelab.core._context import StepContext


@dataclass(frozen=True)
class Call:
    """One model call made on behalf of a step (agent decision, summary, map ...)."""

    kind: str
    messages: list[Message]
    completion: Completion


@dataclass
class Decision:
    """What an agent decided at one step: the ``action`` sent to the env, the model's
    ``reply`` it was read from, the model ``calls`` made for it, per-step ``meta`` and whether
    the reply was ``parsed`` onto an admissible action."""

    action: str
    reply: str
    calls: list[Call] = field(default_factory=list)
    #: per-step metadata of the component (tools offered, thinking budget ...): stored in
    #: the step's ``meta`` column, never among world-model queries
    meta: dict[str, Any] = field(default_factory=dict)
    #: whether the reply was mapped onto an admissible action
    parsed: bool = True


class Agent(Component, abc.ABC):
    """Decides one action from the step context with a model."""

    name: str = "agent"

    @abc.abstractmethod
    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        """Choose the next action from ``ctx`` (prompt, observation, world-model handle;
        the privileged view only for agents tagged ``reads-privileged``)."""
