"""A cheap env for the role tests: a line of cells, a* always known (a copy of the one seed
003's reader DAgger tests use; a seed's tests are not shared with the lab's)."""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

import gymnasium as gym
import pytest

from statelab.core import Env, Observation
from statelab.envs import ENVS, register_env
from statelab.envs import _registry as env_registry
from statelab.facts import TextFacts

GOAL = 4


class _Expert:
    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        return str(info["privileged"]["a_star"])


class Line(Env):
    """A line of cells 0..4: start at 2, win at 4; a* is always 'go right'."""

    name = "line"
    max_steps = 3
    history_len = 8
    facts_type: ClassVar[type] = TextFacts
    default_format = "natural"
    manual = "Walk to the end of the line."
    optimal_action = True
    static_actions = False

    def _obs(self) -> Observation:
        text = f"You are at {self.pos}."
        return Observation(text, TextFacts(text), ("go left", "go right"), "reach the end")

    def _priv(self) -> dict[str, Any]:
        return {"privileged": {"a_star": "go right"}}

    def _reset(self, rng_seed: int | None, options: dict[str, Any]) -> tuple[Observation, dict]:
        self.pos = 2
        return self._obs(), self._priv()

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        self.pos = max(0, self.pos + (1 if action == "go right" else -1))
        return self._obs(), float(self.pos == GOAL), self.pos == GOAL, self._priv()

    def success(self) -> bool:
        return self.pos == GOAL

    def expert(self) -> _Expert:
        return _Expert()


@pytest.fixture
def line_env():
    name = f"line-{uuid.uuid4().hex[:8]}"
    gym_id = f"statelab-test/Line{uuid.uuid4().hex[:8]}-v0"
    register_env(name, Line, gym_id)
    yield name
    ENVS.unregister(name)
    env_registry.ENV_CLASSES.pop(name, None)
    env_registry.GYM_IDS.pop(name, None)
    gym.registry.pop(gym_id, None)
