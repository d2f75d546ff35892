"""The memory contract: a writer that maps (state, transition, model) to a new state.

The state is an immutable value, so keeping it, comparing it or forking it (K candidate
rewrites in seed 003) is a copy of a reference. The writer's model may differ from the
acting model (the ``writer`` axis). Rendering is a pure function of the state, done once
per step by the episode loop.
"""

from __future__ import annotations

import abc
from typing import Generic, TypeVar

from statelab.core._agent import Call
from statelab.core._component import Component
from statelab.core._context import PrivilegedView, Transition
from statelab.core._env import Observation
from statelab.core._llm import LLM

#: the type of a memory's (immutable) state
S = TypeVar("S")


class Memory(Component, abc.ABC, Generic[S]):
    """The history part h_{t-1} of phi(o_t, h_{t-1}), as a writer of immutable states.

    A memory built for a run holds only configuration (renderer, budgets, sampling); every
    per-episode value lives in the state it returns. ``Memory[S]`` writes states of type
    ``S`` (``class LastKMemory(Memory[LastKState])``); a subclass that names no type keeps
    ``Any``.
    """

    name: str = "memory"

    @abc.abstractmethod
    def init(self, obs: Observation, privileged: PrivilegedView | None) -> S:
        """The state before the first step (``privileged`` only for oracle memories)."""

    @abc.abstractmethod
    async def write(
        self, state: S, transition: Transition, model: LLM | None
    ) -> tuple[S, list[Call]]:
        """The state after ``transition``, and the model calls writing it took."""

    @abc.abstractmethod
    def render(self, state: S) -> str:
        """The history text put before the current observation ('' when none)."""
