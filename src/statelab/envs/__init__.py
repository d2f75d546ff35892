"""Environments: a registry of config names, each also registered with Gymnasium.

``make_env("hanoi")`` or ``gymnasium.make("statelab/Hanoi-v0")`` build the same env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from statelab.core import ConfigError, Env, Registry
from statelab.envs.hanoi import HanoiEnv

ENVS: Registry[Env] = Registry("env")
#: config name -> Gymnasium id
GYM_IDS: dict[str, str] = {}
#: config name -> env class (for facts kind, budgets, history length)
ENV_CLASSES: dict[str, type[Env]] = {}


def _register(
    name: str, cls: type[Env], gym_id: str, help: str, parse: Callable[[str | None], dict[str, Any]]
) -> None:
    def factory(arg: str | None = None, **kwargs: Any) -> Env:
        return cls(**{**parse(arg), **kwargs})

    ENVS.register(name, help)(factory)
    GYM_IDS[name] = gym_id
    ENV_CLASSES[name] = cls
    if gym_id not in gym.registry:
        gym.register(gym_id, entry_point=cls, disable_env_checker=True)  # type: ignore[arg-type]


def _hanoi_args(arg: str | None) -> dict[str, Any]:
    if arg is None:
        return {}
    if not arg.isdigit():
        raise ConfigError(f"env 'hanoi:{arg}': the argument is the number of disks, e.g. hanoi:4")
    return {"n_disks": int(arg)}


_register("hanoi", HanoiEnv, "statelab/Hanoi-v0", "hanoi[:<disks>]", _hanoi_args)


def make_env(spelling: str, **kwargs: Any) -> Env:
    """Build an env from its config spelling (``hanoi``, ``hanoi:4``) or Gymnasium id."""
    for name, gid in GYM_IDS.items():
        if spelling == gid:
            spelling = name
    name, arg = ENVS.split(spelling)
    return ENVS.get(name)(arg, **kwargs)


def env_class(spelling: str) -> type[Env]:
    for name, gid in GYM_IDS.items():
        if spelling == gid:
            return ENV_CLASSES[name]
    return ENV_CLASSES[ENVS.split(spelling)[0]]


__all__ = ["ENVS", "GYM_IDS", "HanoiEnv", "env_class", "make_env"]
