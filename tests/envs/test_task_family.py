"""An env's task family and each episode's task (``Env.task_family``, ``Env.current_task``):
what few-shot example sets are keyed by, declared by the env, never read from its spelling."""

from __future__ import annotations

import pytest

from statelab.core import Env
from statelab.envs import env_class, make_env


def test_the_families_are_declared_and_an_env_without_one_names_none() -> None:
    assert Env.task_family == ""
    hanoi = make_env("hanoi")
    hanoi.reset(seed=0)
    assert type(hanoi).task_family == "" and hanoi.current_task() is None
    assert env_class("scienceworld/boil").task_family == "scienceworld"
    assert env_class("babyai/goto").task_family == "babyai"
    assert env_class("household:placement=zipf").task_family == "household"


def test_an_instance_of_one_task_names_it() -> None:
    pytest.importorskip("minigrid")
    env = make_env("babyai/pickup-seq-goto")
    assert env.current_task() == "pickup-seq-goto"


def test_a_household_episode_names_the_task_type_its_goal_names() -> None:
    pytest.importorskip("textworld")
    env = make_env("household")
    try:
        assert env.current_task() is None  # no episode yet
        obs, _ = env.reset(seed=100_000)
        assert env.current_task() == type(env).task_type_of_goal(obs.goal) is not None
    finally:
        env.close()
