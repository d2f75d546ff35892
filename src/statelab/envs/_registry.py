"""The env registry: config names, Gymnasium ids and classes. Env modules register here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from statelab.core import Args, BuildContext, Env, Registry
from statelab.envs._options import EnvOptions

ENVS: Registry[Env | None] = Registry("env")
#: config name -> Gymnasium id
GYM_IDS: dict[str, str] = {}
#: config name -> env class (for facts kind, budgets, history length)
ENV_CLASSES: dict[str, type[Env]] = {}
#: config name -> the benchmark family it belongs to (reports group envs by it)
FAMILIES: dict[str, str] = {}


def no_args(name: str) -> EnvOptions:
    """The options of an env that takes none (the registry refuses ``name:<anything>``)."""
    return EnvOptions(name, {})


def register_env(
    name: str,
    cls: type[Env],
    gym_id: str,
    help: str | None = None,
    parse: EnvOptions | Callable[[str | None], dict[str, Any]] | None = None,
    kwargs: dict[str, Any] | None = None,
    family: str | None = None,
) -> None:
    """Register ``cls`` under config ``name`` and under the Gymnasium id ``gym_id``.

    ``parse`` declares the env's options (:func:`~statelab.envs._options.option_parser`):
    the registry parses ``name:<arg>`` into them, and the env is built with the options the
    spelling gave plus the fixed ``kwargs`` (a variant as data, as Gymnasium's
    ``register(id, entry_point, kwargs)``). A plain function ``parse(arg) -> kwargs`` is
    still taken (it then parses its text itself). A dry build (config validation) parses
    and checks the options and builds nothing, since envs load data. ``family`` groups
    envs of one benchmark in reports (default: the name before its first ``/``:
    ``babyai/goto`` is a ``babyai`` env)."""
    options = parse if parse is not None else no_args(name)
    fixed = dict(kwargs or {})
    params = options.params(cls) if isinstance(options, EnvOptions) else None

    def factory(args: Args | str | None, ctx: BuildContext) -> Env | None:
        if isinstance(options, EnvOptions):
            assert isinstance(args, Args)
            given = options.kwargs(args)
        else:  # a function parsing its own text
            assert not isinstance(args, Args)
            given = options(args)
        if ctx.dry:
            return None
        return cls(**{**fixed, **given, "max_steps": ctx.max_steps})

    ENVS.register(name, help or name, params=params)(factory)
    GYM_IDS[name] = gym_id
    ENV_CLASSES[name] = cls
    FAMILIES[name] = family or name.partition("/")[0]
    _OPTIONS[name] = (options, fixed)
    if gym_id not in gym.registry:
        gym.register(gym_id, entry_point=cls, disable_env_checker=True)  # type: ignore[arg-type]


#: config name -> (its declared options, its fixed kwargs)
_OPTIONS: dict[str, tuple[EnvOptions | Callable[[str | None], dict[str, Any]], dict[str, Any]]] = {}


def env_family(spelling: str) -> str:
    """The family of env ``spelling`` (``babyai/goto:dists=8``: ``babyai``)."""
    return FAMILIES[ENVS.split(spelling)[0]]


def env_kwargs(spelling: str) -> dict[str, Any]:
    """The constructor kwargs (without ``max_steps``) env ``spelling`` builds with."""
    name, arg = ENVS.split(spelling)
    options, fixed = _OPTIONS[name]
    if isinstance(options, EnvOptions):
        return {**fixed, **options.kwargs(ENVS.parse(spelling))}
    return {**fixed, **options(arg)}


__all__ = [
    "ENVS",
    "ENV_CLASSES",
    "FAMILIES",
    "GYM_IDS",
    "env_family",
    "env_kwargs",
    "no_args",
    "register_env",
]
