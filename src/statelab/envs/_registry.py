"""The env registry: config names, Gymnasium ids and classes. Env modules register here."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from statelab.core import BuildContext, ConfigError, Env, Registry

ENVS: Registry[Env | None] = Registry("env")
#: config name -> Gymnasium id
GYM_IDS: dict[str, str] = {}
#: config name -> env class (for facts kind, budgets, history length)
ENV_CLASSES: dict[str, type[Env]] = {}


@dataclass(frozen=True)
class Needs:
    """What an env needs beyond statelab's own dependencies, and the command installing it:
    Python modules (top-level names) and programs on the ``PATH``."""

    install: str
    modules: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()


#: config name -> what it needs (an env absent here needs nothing more)
NEEDS: dict[str, Needs] = {}


def missing(name: str) -> str | None:
    """Why env ``name`` cannot be built here (a module or program it needs is missing, with
    the command that installs it), else None. Checked without importing anything."""
    needs = NEEDS.get(name)
    if needs is None:
        return None
    gone = [m for m in needs.modules if not _importable(m)]
    gone += [p for p in needs.programs if shutil.which(p) is None]
    if not gone:
        return None
    return f"env {name!r} needs {', '.join(gone)}, not installed here: {needs.install}"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or half-imported package
        return False


def no_args(name: str) -> Callable[[str | None], dict[str, Any]]:
    """The options of an env that takes none (the registry refuses ``name:<anything>``,
    since its spelling help names no argument)."""

    def parse(arg: str | None) -> dict[str, Any]:
        return {}

    return parse


def register_env(
    name: str,
    cls: type[Env],
    gym_id: str,
    help: str | None = None,
    parse: Callable[[str | None], dict[str, Any]] | None = None,
    needs: Needs | None = None,
) -> None:
    """Register ``cls`` under config ``name`` (``name:<arg>`` parsed by ``parse`` into kwargs)
    and under the Gymnasium id ``gym_id``.

    The factory has every registry's signature, ``(arg, ctx)``; a dry build (config
    validation) parses and checks the options and builds nothing, since envs load data.
    ``needs``: what the env needs installed; building it without is one :class:`ConfigError`
    naming the install command (:func:`missing`)."""
    parse = parse or no_args(name)
    if needs is not None:
        NEEDS[name] = needs

    def factory(arg: str | None, ctx: BuildContext) -> Env | None:
        kwargs = parse(arg)
        if ctx.dry:
            return None
        why = missing(name)
        if why:
            raise ConfigError(why)
        return cls(**{**kwargs, "max_steps": ctx.max_steps})

    ENVS.register(name, help or name)(factory)
    GYM_IDS[name] = gym_id
    ENV_CLASSES[name] = cls
    if gym_id not in gym.registry:
        gym.register(gym_id, entry_point=cls, disable_env_checker=True)  # type: ignore[arg-type]
