"""Environments: a registry of config names, each also registered with Gymnasium.

``make_env("hanoi")`` or ``gymnasium.make("statelab/Hanoi-v0")`` build the same env. Each env
module registers itself with :func:`register_env` when imported below.
"""

from __future__ import annotations

from statelab.core import BuildContext, Env

# env modules (one line each; importing a module registers its envs)
from statelab.envs import (
    babyai,  # noqa: F401
    cooking,  # noqa: F401
    hanoi,
    household,  # noqa: F401
    messenger,  # noqa: F401
    scienceworld,  # noqa: F401
    textcraft,  # noqa: F401
    traffic,  # noqa: F401
)
from statelab.envs._registry import ENV_CLASSES, ENVS, GYM_IDS, Needs, missing, register_env


def _resolve(spelling: str) -> str:
    for name, gid in GYM_IDS.items():
        if spelling == gid:
            return name
    return spelling


def make_env(spelling: str, max_steps: int | None = None) -> Env:
    """Build an env from its config spelling (``hanoi``, ``hanoi:4``) or Gymnasium id."""
    env = ENVS.build(_resolve(spelling), BuildContext(max_steps=max_steps))
    assert env is not None
    return env


def env_class(spelling: str) -> type[Env]:
    return ENV_CLASSES[ENVS.split(_resolve(spelling))[0]]


def missing_needs(spelling: str) -> str | None:
    """Why the env of ``spelling`` cannot be built here (with its install command), or None."""
    return missing(ENVS.split(_resolve(spelling))[0])


__all__ = [
    "ENVS",
    "GYM_IDS",
    "Needs",
    "env_class",
    "hanoi",
    "make_env",
    "missing_needs",
    "register_env",
]
