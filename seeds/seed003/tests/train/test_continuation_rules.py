"""A continued episode plays each step as :meth:`Episode.play_step` does, so the run's rules
apply to it: seed 004's derail rule (10 no-ops in a row end the episode, the replayed prefix's
no-ops counted) and the per-episode limits (counted over the continuation). Before, the
continuation ran its own loop over the stages and played on to the env's step budget."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace
from typing import Any, ClassVar

import gymnasium as gym
import pytest

from statelab.core import LLM, Completion, Env, GenParams, Observation
from statelab.envs import ENVS, register_env
from statelab.envs import _registry as env_registry
from statelab.facts import TextFacts

SUMMARY = "bounded:summary:64"
MAX_STEPS = 30


class Stall(Env):
    """``go`` moves on (a* ; the goal is out of reach), ``wait`` is admissible but does
    nothing (``valid`` False: a no-op)."""

    name = "stall"
    max_steps = MAX_STEPS
    history_len = 8
    facts_type: ClassVar[type] = TextFacts
    default_format = "natural"
    manual = "Go on."
    optimal_action = True
    static_actions = False

    def _obs(self) -> Observation:
        text = f"You are at {self.pos}."
        return Observation(text, TextFacts(text), ("go", "wait"), "go on")

    def _reset(self, rng_seed: int | None, options: dict[str, Any]) -> tuple[Observation, dict]:
        self.pos = 0
        return self._obs(), {"privileged": {"a_star": "go"}}

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        valid = action == "go"
        self.pos += int(valid)
        return self._obs(), 0.0, False, {"valid": valid, "privileged": {"a_star": "go"}}

    def success(self) -> bool:
        return False

    def expert(self) -> Any:
        return None


class Waiter(LLM):
    """Writes "state" and, as the reader, always prefers ``wait``."""

    model_id = "waiter"

    async def complete(self, messages, params: GenParams) -> Completion:
        return Completion("state")

    async def score(self, messages, continuations):
        return [0.0 if c.endswith("wait") else -5.0 for c in continuations]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


@pytest.fixture
def stall_env():
    name = f"stall-{uuid.uuid4().hex[:8]}"
    gym_id = f"statelab-test/Stall{uuid.uuid4().hex[:8]}-v0"
    register_env(name, Stall, gym_id)
    yield name
    ENVS.unregister(name)
    env_registry.ENV_CLASSES.pop(name, None)
    env_registry.GYM_IDS.pop(name, None)
    gym.registry.pop(gym_id, None)


def _logged(tmp_path, env: str, world: str):
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync
    from statelab_seed003.train.data import trajectories

    model = Waiter()
    exp = parse_experiment({
        "name": "s", "model": "scripted:unused", "seeds": [0], "max_steps": MAX_STEPS,
        "grid": {"env": [env], "agent": ["reader"], "history": [SUMMARY], "worldmodel": [world]},
        "out": str(tmp_path / "results"), "cache": None, "expert": False, "random": False,
    })  # fmt: skip
    assert run_sync(exp, progress=None, llm_factory=lambda s: model).failed == 0
    (traj,) = list(trajectories(exp.out_dir / "store.sqlite", histories=[SUMMARY]))
    return traj, model


def _continue(traj, j, model):
    from statelab_seed003.train.continuation import continue_episode

    got = continue_episode(traj, "b", j, traj.steps[j + 1].state, traj.memory, model, model)
    return asyncio.run(got)


def test_a_continuation_ends_where_the_derail_rule_ends_the_logged_episode(stall_env, tmp_path):
    traj, model = _logged(tmp_path, stall_env, "none:derail")
    # the logged episode: ten waits, then the rule ends it
    assert [d.action for d in traj.steps] == ["wait"] * 10
    got = _continue(traj, 3, model)  # four steps replayed (four no-ops counted), six played
    assert got.actions == ("wait",) * 10 and got.continued == 6 and got.ended
    # without the rule the reader waits to the env's step budget
    traj, model = _logged(tmp_path / "plain", stall_env, "none")
    assert len(traj.steps) == MAX_STEPS
    got = _continue(traj, 3, model)
    assert len(got.actions) == MAX_STEPS and got.continued == MAX_STEPS - 4


def test_a_continuation_honours_the_runs_per_episode_limits(stall_env, tmp_path):
    from statelab.run.spec import RunSpec

    traj, model = _logged(tmp_path, stall_env, "none")
    s = traj.spec
    limited = RunSpec.make(params=s.params, max_steps=s.max_steps, limits={"wall_s": 0},
                           **s.axes_values)  # fmt: skip
    # a zero wall-clock budget is used up by the first continued step: one step, then stop
    got = _continue(replace(traj, spec=limited), 3, model)
    assert got.actions == ("wait",) * 5 and got.continued == 1 and got.ended
