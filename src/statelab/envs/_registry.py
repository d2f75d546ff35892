"""The env registry: config names, Gymnasium ids and classes. Env modules register here; so
do plugins (``register_env`` on import), and a ``module:EnvClass`` spelling adopts its class."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from statelab.core import BuildContext, ConfigError, Env, Registry

ENVS: Registry[Env | None] = Registry("env")
#: config name -> Gymnasium id
GYM_IDS: dict[str, str] = {}
#: config name -> env class (for facts kind, budgets, history length)
ENV_CLASSES: dict[str, type[Env]] = {}


def no_args(name: str) -> Callable[[str | None], dict[str, Any]]:
    """The options of an env that takes none (the registry refuses ``name:<anything>``,
    since its spelling help names no argument)."""

    def parse(arg: str | None) -> dict[str, Any]:
        return {}

    return parse


def register_env(
    name: str,
    cls: type[Env],
    gym_id: str | None,
    help: str | None = None,
    parse: Callable[[str | None], dict[str, Any]] | None = None,
) -> None:
    """Register ``cls`` under config ``name`` (``name:<arg>`` parsed by ``parse`` into kwargs)
    and under the Gymnasium id ``gym_id`` (None: none).

    The factory has every registry's signature, ``(arg, ctx)``; a dry build (config
    validation) parses and checks the options and builds nothing, since envs load data."""
    parse = parse or no_args(name)

    def factory(arg: str | None, ctx: BuildContext) -> Env | None:
        kwargs = parse(arg)
        if ctx.dry:
            return None
        return cls(**{**kwargs, "max_steps": ctx.max_steps})

    ENVS.register(name, help or name)(factory)
    ENV_CLASSES[name] = cls
    if gym_id is None:
        return
    GYM_IDS[name] = gym_id
    if gym_id not in gym.registry:
        gym.register(gym_id, entry_point=cls, disable_env_checker=True)  # type: ignore[arg-type]


def _refuse_argument(name: str) -> Callable[[str | None], dict[str, Any]]:
    def parse(arg: str | None) -> dict[str, Any]:
        if arg is not None:
            raise ConfigError(f"env {name!r} takes no argument, got {arg!r}")
        return {}

    return parse


def _adopt(registry: Registry[Any], name: str, obj: Any) -> None:
    """A ``module:EnvClass`` spelling: its Env subclass joins the registry under ``name``."""
    if not (isinstance(obj, type) and issubclass(obj, Env)):
        raise ConfigError(f"env {name!r} names {obj!r}, not an Env subclass")
    register_env(name, obj, None, help=name, parse=_refuse_argument(name))


ENVS.adopt = _adopt
