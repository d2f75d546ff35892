"""Every agent, on every env, sees its goal in every prompt of an episode (issue 15, item 1):
the goal sentence of the first observation must not disappear once the window history drops
that observation. Played with the golden scripted models (free and constrained)."""

from __future__ import annotations

import asyncio

import pytest
from tests.golden._golden import GoldenLLM

from statelab.run.config import Sampling
from statelab.run.episode import run_episode
from statelab.run.spec import RunSpec, resolve_format

ENVS = ["hanoi", "messenger", "babyai/goto", "traffic", "textcraft", "household"]
AGENTS = [
    "act",
    "react",
    "stateact",
    "stateact:none",
    "adapt:react",
    "plan:5",
    "stateact:all/anchor",
    "react:original/anchor",
]


def _text(messages: list) -> str:
    out = []
    for m in messages:
        c = m["content"]
        out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c))
    return "\n".join(out)


def _play(env: str, agent: str, history: str = "full", constrained: bool = False) -> list:
    spec = RunSpec.make(
        env=env,
        model=f"golden:{'constrained' if constrained else 'free'}",
        agent=agent,
        history=history,
        format=resolve_format(env, "default"),
        grounding="none",
        params=Sampling().model_dump(),
        max_steps=4,
    )
    ep = asyncio.run(run_episode(spec, 0, GoldenLLM(constrained=constrained)))
    return ep.trajectory


def _goal(env: str) -> str:
    from statelab.envs import make_env

    obs, _ = make_env(env).reset(seed=0)
    assert obs.goal, f"{env} has no goal"
    return obs.goal.strip().rstrip(".")


@pytest.mark.parametrize("env", ENVS)
@pytest.mark.parametrize("agent", AGENTS)
def test_goal_in_every_prompt(env: str, agent: str) -> None:
    goal = _goal(env)
    trajectory = _play(env, agent, constrained=agent == "act")
    assert len(trajectory) >= 2
    for step in trajectory:
        assert step.calls
        for call in step.calls:
            assert goal in _text(call["messages"]), (env, agent, step.t, call["kind"])


@pytest.mark.parametrize("env", ["traffic"])
def test_goal_in_every_prompt_tools(env: str) -> None:
    goal = _goal(env)
    for step in _play(env, "tools:n=12+k=2", history="window:2"):
        for call in step.calls:
            assert goal in _text(call["messages"]), (step.t, call["kind"])
