"""Environments: a registry of config names, each also registered with Gymnasium.

``make_env("hanoi")`` or ``gymnasium.make("statelab/Hanoi-v0")`` build the same env. Each env
module registers itself with :func:`register_env` when imported: every public module of this
package is imported below, in name order (no hand-kept list). Plugins register the same way
(``statelab.plugins`` entry points), and ``make_env("mypkg.envs:MyEnv")`` adopts a class.
"""

from __future__ import annotations

import importlib
import pkgutil

from statelab.core import BuildContext, Env, count, on_off
from statelab.envs._options import Option, option_parser
from statelab.envs._registry import (
    ENV_CLASSES,
    ENVS,
    GYM_IDS,
    Needs,
    env_family,
    env_kwargs,
    missing,
    register_env,
)

for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if not _mod.startswith("_"):  # importing an env module registers its envs
        importlib.import_module(f"{__name__}.{_mod}")

from statelab.envs import hanoi  # noqa: E402 - imported (and registered) in the loop above


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
    """The env class of a config spelling or Gymnasium id (its facts kind, budget ...)."""
    return ENV_CLASSES[ENVS.split(_resolve(spelling))[0]]


def missing_needs(spelling: str) -> str | None:
    """Why the env of ``spelling`` cannot be built here (with its install command), or None."""
    return missing(ENVS.split(_resolve(spelling))[0])


__all__ = [
    "ENVS",
    "GYM_IDS",
    "Needs",
    "Option",
    "count",
    "env_class",
    "env_family",
    "env_kwargs",
    "hanoi",
    "make_env",
    "missing_needs",
    "on_off",
    "option_parser",
    "register_env",
]
