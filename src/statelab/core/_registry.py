"""Named-component registries: one per axis. A run is one choice per axis.

Every registry has one factory signature, ``factory(arg, ctx) -> component``: ``arg`` is the
part of the spelling after the first colon (``window:5`` -> ``"5"``), ``ctx`` a
:class:`BuildContext`. Validating a spelling means building it against a dry context, so a
bad argument on any axis is refused when a config is read, with one line naming it.
A built component is stamped with its spelling, a label and its tags
(:mod:`statelab.core._component`): logs and reports never re-parse spellings.
Plugins (the ``statelab.plugins`` entry points) and ``module:name`` spellings join a
registry as :mod:`statelab.core._plugins` describes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from statelab.core._component import TAGS, stamp
from statelab.core._llm import GenParams
from statelab.core._plugins import PluginError, load_plugins, resolve, unknown_note

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration value is wrong; the message is one line naming it."""


def _plain(obs: Any) -> str:
    return str(getattr(obs, "text", obs))


@dataclass(frozen=True)
class BuildContext:
    """What every component is built from. ``dry`` builds (config validation) use the
    defaults for whatever an episode would supply: no component may do real work then."""

    params: GenParams = field(default_factory=GenParams)
    #: the env's config spelling (a few-shot source may read its train split; nothing branches
    #: on it)
    env: str = ""
    #: the kind of ``Observation.facts`` of the env (formats check they can render it)
    facts_type: type = object
    #: number of past steps the env's Long Form history keeps (seed 000, Table 2)
    history_len: int = 30
    #: the run's observation renderer (feedback + facts in the run's format)
    render_obs: Callable[[Any], str] = _plain
    #: the run's format spelling (a privileged summary renders its state in it)
    format: str = "natural"
    manual: str = ""
    seed: int = 0
    #: the env's step budget (None: its own)
    max_steps: int | None = None
    #: whether the env renders images of its observations / gives a privileged ASCII map
    #: (groundings that need them refuse envs without; unknown outside an env: assumed)
    has_image: bool = True
    has_map: bool = True
    dry: bool = False


DRY = BuildContext(dry=True)


class Registry(Generic[T]):
    """Maps config spellings to factories ``factory(arg, ctx)``.

    A spelling may carry an argument after a colon (``window:5``, ``llamacpp:/m.gguf``):
    the part before the first colon selects the component, the rest is passed to it.
    """

    def __init__(self, axis: str) -> None:
        self.axis = axis
        self._items: dict[str, Callable[..., T]] = {}
        self._help: dict[str, str] = {}
        self._tags: dict[str, frozenset[str]] = {}
        #: how the object a ``module:name`` spelling names joins this registry (None: as a
        #: factory or a component class; the env registry adopts Env subclasses)
        self.adopt: Callable[[Registry[T], str, Any], None] | None = None

    def register(
        self, name: str, help: str = "", tags: tuple[str, ...] | frozenset[str] = ()
    ) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Register ``factory(arg, ctx)`` under ``name``; ``tags`` hold for every spelling
        (a component adds argument-dependent tags itself). ``help`` spells the component as
        a config writes it; one without a colon (``summary``) takes no argument, and
        ``summary:x`` is refused before the factory runs."""
        unknown = set(tags) - set(TAGS)
        if unknown:
            raise ValueError(f"{self.axis} {name!r}: unknown tags {sorted(unknown)}")

        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._items:
                raise ValueError(f"{self.axis} {name!r} registered twice")
            self._items[name] = factory
            self._help[name] = help or name
            self._tags[name] = frozenset(tags)
            return factory

        return deco

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register a component for one experiment)."""
        for d in (self._items, self._help, self._tags):
            d.pop(name, None)

    def split(self, spelling: str) -> tuple[str, str | None]:
        if not isinstance(spelling, str):
            raise ConfigError(f"{self.axis}: expected a name, got {spelling!r}")
        head, sep, arg = spelling.partition(":")
        if head not in self._items:  # a plugin's name, or the module:name form
            try:
                found = resolve(self, spelling)
            except PluginError as e:
                raise ConfigError(str(e)) from None
            if found is None:
                raise ConfigError(
                    f"unknown {self.axis} {spelling!r}; allowed: {self.allowed()}{unknown_note()}"
                )
            return found
        return head, (arg if sep else None)

    def get(self, spelling: str) -> Callable[..., T]:
        return self._items[self.split(spelling)[0]]

    def build(self, spelling: str, ctx: BuildContext = DRY) -> T:
        """Build the component ``spelling`` names, stamped with spelling, label and tags.

        Any error a factory raises on its argument becomes a one-line :class:`ConfigError`
        naming the axis and the spelling."""
        name, arg = self.split(spelling)
        if arg is not None and ":" not in self._help[name]:
            # a component whose spelling help names no argument takes none (checked here,
            # once for every axis, not in each factory)
            raise ConfigError(f"{self.axis} {name!r} takes no argument, got {spelling!r}")
        try:
            obj = self._items[name](arg, ctx)
        except ConfigError as e:
            if spelling in str(e) or str(e).startswith(f"{self.axis} "):
                raise
            raise ConfigError(f"{self.axis} {spelling!r}: {e}") from None
        except (ValueError, TypeError, KeyError, IndexError) as e:
            raise ConfigError(f"{self.axis} {spelling!r}: {e}") from None
        return stamp(obj, spelling, self._tags[name])

    def check(self, spelling: str, ctx: BuildContext = DRY) -> None:
        """Refuse a bad spelling (unknown name or bad argument) with one line."""
        self.build(spelling, ctx if ctx.dry else replace(ctx, dry=True))

    def tags(self, name: str) -> frozenset[str]:
        return self._tags[self.split(name)[0]]

    def allowed(self) -> str:
        load_plugins()
        return ", ".join(self._help[n] for n in self._items)

    def describe(self) -> list[tuple[str, str]]:
        """(name, spelling help) of every component, in registration order."""
        load_plugins()
        return [(n, self._help[n]) for n in self._items]

    def names(self) -> list[str]:
        load_plugins()
        return list(self._items)

    def __contains__(self, spelling: object) -> bool:
        if not isinstance(spelling, str):
            return False
        load_plugins()
        return spelling.partition(":")[0] in self._items or ":".join(
            spelling.split(":")[:2]
        ) in self._items  # a module:name spelling used before

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
