"""The table of axes: the one place that says which axes a run has.

The config model, the run spec and its key, the store's ``runs`` columns, run labels, the
report layout and ``statelab list`` all read :data:`AXES`. Adding an axis is one entry here
plus its registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from statelab.agents import AGENTS
from statelab.core import ACTING, BuildContext, ConfigError, GenParams, Registry
from statelab.envs import ENVS, env_class
from statelab.llm import MODELS, ModelOptions, check_spec, spec_options
from statelab.state import FORMATS, HISTORIES
from statelab.state.grounding import GROUNDINGS
from statelab.worldmodels import WORLDMODELS


@dataclass(frozen=True)
class Axis:
    """One axis of a run."""

    name: str
    registry: Registry[Any]
    #: the value when a config does not set the axis (None: the config must set it)
    default: str | None
    help: str
    #: the six axes of the first release are always in a run's key and label; any other
    #: joins them only when set to something other than its default (so adding an axis
    #: changes no existing run key)
    core: bool = False
    #: whether the axis applies to runs without a model (the expert row); else shown as "-"
    model_free: bool = False
    #: validate one value for one env (default: build it against a dry context)
    checker: Callable[[str, BuildContext], None] | None = None
    #: an axis whose registry builds one component per episode: its place in the order the
    #: episode loop calls the components' hooks (None: the axis builds no component; the
    #: env, the model, the format and the writer are the spine's own)
    hooks: int | None = None
    #: the values ``statelab list`` shows (None: the registry's own listing)
    lister: Callable[[], list[tuple[str, str]]] | None = None
    #: a value's canonical spelling (None: the registry's, :meth:`Registry.spelling_of`)
    canonicalizer: Callable[[Any], str] | None = None

    def canonical(self, value: Any) -> str:
        """The one spelling of ``value`` (a spelling, or a mapping with a ``name``): what a
        run's identity holds on this axis. A bad value is a one-line ConfigError."""
        if self.canonicalizer is not None:
            return self.canonicalizer(value)
        return self.registry.spelling_of(value, self.name)

    def check(self, value: str, ctx: BuildContext) -> None:
        if self.checker is not None:
            self.checker(value, ctx)
        else:
            self.registry.check(value, ctx)

    def listing(self) -> list[tuple[str, str]]:
        """(name, spelling help) of every value, as ``statelab list`` prints them."""
        return self.lister() if self.lister is not None else self.registry.describe()


def _check_env(value: str, ctx: BuildContext) -> None:
    env_class(value)  # a known name or Gymnasium id
    ENVS.check(value, ctx)


def _check_format(value: str, ctx: BuildContext) -> None:
    if value != "default":
        FORMATS.check(value, ctx)


def _check_model(value: str, ctx: BuildContext) -> None:
    check_spec(value)


def canonical_model(value: Any) -> str:
    """The one spelling of a model spec: its options (``?timeout=30&retries=2``, the part
    the model spelling parser exposes: :func:`~statelab.llm.spec_options`) in their
    declared order, each once; everything else of the spec is the backend's own and stays as
    written. A spec whose options do not read back the same is kept as written."""
    if not isinstance(value, str):
        raise ConfigError(f"model: a model spec (a string), got {value!r}")
    head, sep, query = value.rpartition("?")
    if not sep or not query or "#" in query:
        return value
    pairs = [part.partition("=") for part in query.split("&")]
    order = [f.name for f in fields(ModelOptions)]
    names = [k for k, _, _ in pairs]
    if any(not eq or k not in order for k, eq, _ in pairs) or len(set(names)) < len(names):
        return value  # not only options (a URL's own query): the backend's to read
    ranked = sorted(pairs, key=lambda kv: order.index(kv[0]))
    out = f"{head}?" + "&".join(f"{k}={v}" for k, _, v in ranked)
    if out != value and spec_options(out) != spec_options(value):
        return value
    return out


def _canonical_writer(value: Any) -> str:
    return ACTING if value == ACTING else canonical_model(value)


def _canonical_role(value: Any) -> str:
    return value if value in ROLE_ALIASES else canonical_model(value)


def _canonical_format(value: Any) -> str:
    return "default" if value == "default" else FORMATS.spelling_of(value, "format")


def _check_writer(value: str, ctx: BuildContext) -> None:
    if value != ACTING:
        check_spec(value)


#: the writer axis names a model: ``acting`` (the acting model) or any model spec
WRITERS: Registry[Any] = Registry("writer")


@WRITERS.register(ACTING, "acting (the acting model writes the memory)")
def _acting(arg: None, ctx: BuildContext) -> None:
    return None


def _writer_listing() -> list[tuple[str, str]]:
    """``acting`` and every model backend (plugins' too: read when listed, not at import)."""
    return WRITERS.describe() + MODELS.describe()


#: the other role axes (seed 003's read-time oracle): another role's model, or a model spec
ROLE_ALIASES = (ACTING, "writer")
ROLES: Registry[Any] = Registry("role")


@ROLES.register(ACTING, "acting (the acting model: the reader)")
def _role_acting(arg: None, ctx: BuildContext) -> None:
    return None


@ROLES.register("writer", "writer (the model that writes the memory)")
def _role_writer(arg: None, ctx: BuildContext) -> None:
    return None


def _check_role(value: str, ctx: BuildContext) -> None:
    if value not in ROLE_ALIASES:
        check_spec(value)


def _role_listing() -> list[tuple[str, str]]:
    return ROLES.describe() + MODELS.describe()


AXES: tuple[Axis, ...] = (
    Axis("env", ENVS, None, "the environment", core=True, model_free=True, checker=_check_env),
    Axis(
        "model", MODELS, None, "the acting model", core=True, checker=_check_model,
        canonicalizer=canonical_model,
    ),
    Axis("agent", AGENTS, "act", "the agent scaffold", core=True, model_free=True, hooks=3),
    Axis("history", HISTORIES, "full", "what of the past the prompt carries", core=True, hooks=0),
    Axis(
        "format", FORMATS, "default", "how facts become text", core=True, checker=_check_format,
        canonicalizer=_canonical_format,
    ),
    Axis(
        "grounding", GROUNDINGS, "none", "the spatial signal that joins the text", core=True,
        hooks=1,
    ),
    Axis(
        "worldmodel", WORLDMODELS, "none", "what the agent may query and what checks actions",
        hooks=2,
    ),
    Axis(
        "writer", WRITERS, ACTING, "the model that writes the memory", checker=_check_writer,
        lister=_writer_listing, canonicalizer=_canonical_writer,
    ),
    Axis(
        "compressor", ROLES, "writer", "the model writing the read-time oracle's compressions",
        checker=_check_role, lister=_role_listing, canonicalizer=_canonical_role,
    ),
    Axis(
        "scorer", ROLES, ACTING, "the model scoring them (the reader's NLL of a*)",
        checker=_check_role, lister=_role_listing, canonicalizer=_canonical_role,
    ),
)  # fmt: skip
BY_NAME: dict[str, Axis] = {a.name: a for a in AXES}
NAMES: tuple[str, ...] = tuple(a.name for a in AXES)
#: the axes that build one component per episode, in the table's order
COMPONENT_AXES: tuple[Axis, ...] = tuple(a for a in AXES if a.hooks is not None)


def canonical_value(name: str, value: Any) -> Any:
    """``value``'s canonical spelling on axis ``name`` (:meth:`Axis.canonical`); a spelling
    that does not parse is kept as written (where a config is read, every value is then
    checked against each env and refused with its place), a bad mapping is refused."""
    if value is None:
        return None
    try:
        return axis(name).canonical(value)
    except ConfigError:
        if isinstance(value, str):
            return value
        raise


def axis(name: str) -> Axis:
    if name not in BY_NAME:
        raise ConfigError(f"{name!r} is not an axis; axes: {', '.join(NAMES)}")
    return BY_NAME[name]


def env_context(
    env: str,
    params: GenParams | None = None,
    *,
    fmt: str | None = None,
    seed: int = 0,
    max_steps: int | None = None,
    dry: bool = True,
) -> BuildContext:
    """The context components for ``env`` are built from (its facts kind, history length,
    images, map; the run's format and renderer): dry for config checks, else for an episode."""
    from statelab.state import observation_renderer

    cls = env_class(env)
    fmt = str(cls.default_format) if fmt in (None, "default") else fmt
    return BuildContext(
        params=params or GenParams(),
        env=env,
        facts_type=cls.facts_type,
        history_len=cls.history_len,
        render_obs=observation_renderer(fmt),
        format=fmt,
        manual=str(getattr(cls, "manual", "")),
        seed=seed,
        max_steps=max_steps,
        has_image=cls.renders_images(),
        has_map=cls.privileged_map,
        dry=dry,
    )


def check_value(name: str, value: str, env: str, params: GenParams | None = None) -> None:
    """Refuse a bad value of axis ``name`` for ``env`` with one line naming the axis."""
    ctx = env_context(env, params) if name != "env" else BuildContext(dry=True)
    axis(name).check(value, ctx)


def with_env(ctx: BuildContext, env: str) -> BuildContext:
    cls = env_class(env)
    return replace(ctx, env=env, facts_type=cls.facts_type, history_len=cls.history_len)
