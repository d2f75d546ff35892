"""The env registry: config names, Gymnasium ids and classes. Env modules register here; so
do plugins (``register_env`` on import), and a ``module:EnvClass`` spelling adopts its class."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from statelab.core import Args, BuildContext, ConfigError, Env, Registry
from statelab.envs._options import EnvOptions

ENVS: Registry[Env | None] = Registry("env")
#: config name -> Gymnasium id
GYM_IDS: dict[str, str] = {}
#: config name -> env class (for facts kind, budgets, history length)
ENV_CLASSES: dict[str, type[Env]] = {}
#: config name -> the benchmark family it belongs to (reports group envs by it)
FAMILIES: dict[str, str] = {}


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


def no_args(name: str) -> EnvOptions:
    """The options of an env that takes none (the registry refuses ``name:<anything>``)."""
    return EnvOptions(name, {})


def register_env(
    name: str,
    cls: type[Env],
    gym_id: str | None,
    help: str | None = None,
    parse: EnvOptions | Callable[[str | None], dict[str, Any]] | None = None,
    kwargs: dict[str, Any] | None = None,
    family: str | None = None,
    needs: Needs | None = None,
) -> None:
    """Register ``cls`` under config ``name`` and under the Gymnasium id ``gym_id`` (None:
    none).

    ``parse`` declares the env's options (:func:`~statelab.envs._options.option_parser`):
    the registry parses ``name:<arg>`` into them, and the env is built with the options the
    spelling gave plus the fixed ``kwargs`` (a variant as data, as Gymnasium's
    ``register(id, entry_point, kwargs)``). A plain function ``parse(arg) -> kwargs`` is
    still taken (it then parses its text itself). A dry build (config validation) parses
    and checks the options and builds nothing, since envs load data. ``family`` groups
    envs of one benchmark in reports (default: the name before its first ``/``:
    ``babyai/goto`` is a ``babyai`` env). ``needs``: what the env needs installed; building
    it without is one :class:`ConfigError` naming the install command (:func:`missing`)."""
    options = parse if parse is not None else no_args(name)
    fixed = dict(kwargs or {})
    params = options.params(cls) if isinstance(options, EnvOptions) else None
    if needs is not None:
        NEEDS[name] = needs

    def factory(args: Args | str | None, ctx: BuildContext) -> Env | None:
        if isinstance(options, EnvOptions):
            assert isinstance(args, Args)
            given = options.kwargs(args)
        else:  # a function parsing its own text
            assert not isinstance(args, Args)
            given = options(args)
        if ctx.dry:
            return None
        why = missing(name)
        if why:
            raise ConfigError(why)
        return cls(**{**fixed, **given, "max_steps": ctx.max_steps})

    ENVS.register(name, help or name, params=params)(factory)
    ENV_CLASSES[name] = cls
    FAMILIES[name] = family or name.partition("/")[0]
    _OPTIONS[name] = (options, fixed)
    if gym_id is None:
        return
    GYM_IDS[name] = gym_id
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
    "NEEDS",
    "Needs",
    "env_family",
    "env_kwargs",
    "missing",
    "no_args",
    "register_env",
]


def _adopt(registry: Registry[Any], name: str, obj: Any) -> None:
    """A ``module:EnvClass`` spelling: its Env subclass joins the registry under ``name``."""
    if not (isinstance(obj, type) and issubclass(obj, Env)):
        raise ConfigError(f"env {name!r} names {obj!r}, not an Env subclass")
    register_env(name, obj, None, help=name)


ENVS.adopt = _adopt
