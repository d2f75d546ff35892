"""Representation contracts: a format renders facts; a memory keeps the history part."""

from __future__ import annotations

import abc
from typing import Any

from statelab.core._agent import Call
from statelab.core._env import Observation
from statelab.core._llm import LLM


class Memory(abc.ABC):
    """The history part h^_{t-1} of phi(o_t, h^_{t-1}).

    ``render_obs`` is the observation renderer of the run (feedback + formatted facts): the
    memory uses it so that past steps appear in the same structure as the current one.
    """

    name: str = "memory"

    def __init__(self, render_obs: Any, manual: str, seed: int = 0) -> None:
        self.render_obs = render_obs
        self.manual = manual
        self.seed = seed

    @abc.abstractmethod
    def reset(self, obs: Observation, info: dict[str, Any]) -> None:
        """Start a new episode from its first observation."""

    @abc.abstractmethod
    async def update(
        self,
        obs: Observation,
        action: str,
        reward: float,
        info: dict[str, Any],
        llm: LLM | None,
        reply: str = "",
    ) -> list[Call]:
        """Record one transition; return the model calls it made (e.g. a summary).

        ``reply`` is what the agent wrote for this step (a thought, a tracked state, the
        action line): reasoning agents keep their own words in their history this way."""

    @abc.abstractmethod
    def render(self) -> str:
        """The history text to put before the current observation ('' when none)."""
