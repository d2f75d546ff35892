"""The episode reads an env's optional hooks only through what ``Env`` declares: the validate
stage hands the components the env's validity oracle when (and only when) the env overrides
``would_accept``. The env and the world model here are named by ``module:name`` spellings
(this module), as a user's own would be."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, ClassVar

import gymnasium as gym
import pytest

from statelab.core import StepContext, WorldModel
from statelab.envs import ENVS
from statelab.envs import _registry as env_registry
from statelab.envs.hanoi import HanoiEnv
from statelab.llm import ScriptedLLM
from statelab.run.episode import run_episode
from statelab.run.spec import RunSpec
from statelab.worldmodels import WORLDMODELS

MOVE = "Move the top disk of rod A to the top of rod C"


class OracleHanoi(HanoiEnv):
    """Hanoi with a validity oracle that accepts only moves from rod A."""

    def would_accept(self, action: str) -> bool:
        return action.startswith("Move the top disk of rod A")


class OracleWatcher(WorldModel):
    """Records, at each validate stage, what the oracle says of the proposed action."""

    name = "oracle-watcher"
    said: ClassVar[list[Any]] = []

    def validate(self, action: str, ctx: StepContext) -> str | None:
        OracleWatcher.said.append(None if ctx.oracle is None else ctx.oracle(action))
        return None


HERE = __name__
SPELLINGS = {"env": [f"{HERE}:OracleHanoi", "hanoi"], "worldmodel": f"{HERE}:OracleWatcher"}


@pytest.fixture
def watched() -> Iterator[None]:
    OracleWatcher.said.clear()
    yield
    for name in SPELLINGS["env"][:1]:
        ENVS.unregister(name)
        env_registry.ENV_CLASSES.pop(name, None)
    WORLDMODELS.unregister(SPELLINGS["worldmodel"])
    assert all(k in gym.registry for k in ("statelab/Hanoi-v0",))


@pytest.mark.parametrize(("env", "said"), [(SPELLINGS["env"][0], [True]), ("hanoi", [None])])
def test_the_validate_stage_gets_the_oracle_only_from_an_env_that_has_one(watched, env, said):
    spec = RunSpec.make(
        env=env, model="scripted:x", agent="act:free", worldmodel=SPELLINGS["worldmodel"],
        max_steps=1,
    )  # fmt: skip
    ep = asyncio.run(run_episode(spec, 0, ScriptedLLM([f"Action: {MOVE}"])))
    assert ep.steps == 1
    assert OracleWatcher.said == said
    assert ep.components["worldmodel"]["spelling"] == SPELLINGS["worldmodel"]
