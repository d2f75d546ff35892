"""Named-component registries: one per axis. A run is one choice per axis.

A component registers a factory ``factory(args, ctx) -> component`` with its declared
parameters (:class:`~statelab.core._params.Params`): the registry parses the part of the
spelling after the first colon (``window:5`` -> ``args.k == 5``) into typed
:class:`~statelab.core._params.Args`, here and nowhere else, and ``ctx`` is a
:class:`BuildContext`. Validating a spelling means building it against a dry context, so a
bad argument on any axis is refused when a config is read, with one line naming it.
A built component is stamped with its spelling, a label, its tags and its parsed arguments
(:mod:`statelab.core._component`): logs and reports never re-parse spellings.

A factory registered without ``params`` is given the raw text instead (``factory(arg: str |
None, ctx)``): ``None`` for a component whose help names no argument (``summary``: the
registry refuses ``summary:x``), and for one whose help spells an argument
(``scripted:<file>``) the text, which it parses itself; that form is kept for backends and
plugins that have not declared their parameters yet.
Plugins (the ``statelab.plugins`` entry points) and ``module:name`` spellings join a
registry as :mod:`statelab.core._plugins` describes (a ``module:name`` must name a component:
a registered factory or a class of the axis's ``base``).

**Identity.** Many spellings parse to the same arguments (``hanoi:4``, ``hanoi:disks=4``,
``hanoi:4+feedback=on``; the config mapping ``{name: hanoi, disks: 4}``):
:meth:`Registry.canonical` gives their one spelling, the name and the non-default arguments
(positional ones first, then declared order), and a run holds that one. So a factory must
build the same component for a parameter given at its default as for one left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from statelab.core._component import TAGS, Component, describe, stamp
from statelab.core._llm import GenParams
from statelab.core._params import Args, ArgumentError, Param, Params
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
    """Maps config spellings to factories ``factory(args, ctx)``.

    A spelling may carry an argument after a colon (``window:5``, ``llamacpp:/m.gguf``):
    the part before the first colon selects the component, the rest is parsed into the
    component's declared parameters.
    """

    def __init__(self, axis: str, base: type = Component) -> None:
        self.axis = axis
        #: the class a ``module:Class`` spelling must name a subclass of (the axis's
        #: components' base; :mod:`statelab.core._plugins`)
        self.base = base
        self._items: dict[str, Callable[..., T]] = {}
        self._help: dict[str, str] = {}
        self._tags: dict[str, frozenset[str]] = {}
        #: declared parameters (None: a factory given the raw argument text)
        self._params: dict[str, Params | None] = {}
        #: registered without ``params``: the factory is given the raw text, not Args
        self._raw: dict[str, bool] = {}
        #: for a component that parses its own argument, its parameters' lines from the
        #: declaration its parser reads (the model axis: each backend's options); None: none
        self.own_parameters: Callable[[str], list[str]] | None = None
        #: how the object a ``module:name`` spelling names joins this registry (None: as a
        #: factory or a component class; the env registry adopts Env subclasses)
        self.adopt: Callable[[Registry[T], str, Any], None] | None = None

    def register(
        self,
        name: str,
        help: str = "",
        tags: tuple[str, ...] | frozenset[str] = (),
        params: Params | tuple[Param, ...] | None = None,
    ) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Register ``factory(args, ctx)`` under ``name`` with its declared ``params``;
        ``tags`` hold for every spelling (a component adds argument-dependent tags itself).
        ``help`` spells the component as a config writes it. A component declaring no
        parameters whose help has no colon (``summary``) takes no argument: ``summary:x``
        is refused before the factory runs (and, registered without ``params``, its factory
        is given ``None``). Without ``params`` but with a colon in ``help``, the factory is
        given the raw argument text (see the module docstring)."""
        unknown = set(tags) - set(TAGS)
        if unknown:
            raise ValueError(f"{self.axis} {name!r}: unknown tags {sorted(unknown)}")
        if isinstance(params, tuple):
            params = Params(params)
        raw = params is None  # the factory is given the raw text (None: no argument)
        if params is None and ":" not in (help or name):
            params = Params()

        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._items:
                raise ValueError(f"{self.axis} {name!r} registered twice")
            self._items[name] = factory
            self._help[name] = help or name
            self._tags[name] = frozenset(tags)
            self._params[name] = params
            self._raw[name] = raw
            return factory

        return deco

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register a component for one experiment)."""
        for d in (self._items, self._help, self._tags, self._params, self._raw):
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

    def params(self, name: str) -> Params | None:
        """The declared parameters of component ``name`` (None: it parses its own text)."""
        return self._params[self.split(name)[0]]

    def parse(self, spelling: str) -> Args:
        """The typed arguments ``spelling`` gives its component (builds nothing): a bad
        argument is a one-line :class:`ConfigError` naming axis and spelling."""
        name, arg = self.split(spelling)
        params = self._params[name]
        if params is None:
            return Args()
        if arg is not None and not params:
            # a component whose spelling help names no argument takes none (checked here,
            # once for every axis, not in each factory)
            raise ConfigError(f"{self.axis} {name!r} takes no argument, got {spelling!r}")
        try:
            return params.parse(arg)
        except ArgumentError as e:
            raise ConfigError(f"{self.axis} {spelling!r}: {e}") from None

    def canonical(self, spelling: str) -> str:
        """The one spelling of what ``spelling`` names: the component's name, then its
        non-default arguments in declared order (:meth:`Params.spell`): ``hanoi:disks=4``,
        ``hanoi:4+feedback=on`` and ``hanoi:4`` are all ``hanoi:4``. A run's identity (its
        key, its label, a grid's duplicates) is this spelling, never the one written.

        A spelling already canonical is returned as written; so is one whose component
        parses its own text (registered without ``params``), and one the grammar cannot
        write back. A bad spelling is a one-line :class:`ConfigError`, as :meth:`parse`."""
        name, arg = self.split(spelling)
        params = self._params[name]
        args = self.parse(spelling)
        if params is None:
            return spelling
        text = params.spell(args, arg)
        if text is None:
            return spelling
        out = f"{name}:{text}" if text else name
        if out != spelling and self.parse(out).record() != args.record():
            return spelling  # never a spelling that reads as something else
        return out

    def spelling_of(self, value: Any, where: str = "") -> str:
        """The canonical spelling of a config value: a spelling, or a mapping with the
        component's ``name`` and its arguments by parameter name (``{name: hanoi, disks:
        4}`` is ``hanoi:4``). Anything else is a one-line :class:`ConfigError`."""
        where = where or self.axis
        if isinstance(value, str):
            return self.canonical(value)
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            raise ConfigError(
                f"{where}: a spelling or a mapping with a 'name' ({{name: <{self.axis}>,"
                f" <argument>: <value>, ...}}), got {value!r}"
            )
        name, given = value["name"], {k: v for k, v in value.items() if k != "name"}
        head = self.split(name)[0]
        if head != name:
            raise ConfigError(f"{where}: name {name!r} holds arguments: give them as keys")
        params = self._params[head]
        if not given:
            return self.canonical(name)
        if params is None:
            raise ConfigError(
                f"{where}: {self.axis} {name!r} parses its own argument: write it as a"
                f" spelling ({self._help[head]})"
            )
        try:
            args = params.from_mapping(given, f"{self.axis} {name!r}")
        except ArgumentError as e:
            raise ConfigError(f"{where}: {e}") from None
        text = params.spell(args)
        if text is None:
            raise ConfigError(
                f"{where}: {self.axis} {name!r} is written as a spelling ({self._help[head]}),"
                " not as a mapping"
            )
        return self.canonical(f"{head}:{text}" if text else head)

    def without(self, spelling: str, *names: str) -> str:
        """``spelling`` with its parameters ``names`` left out (``bounded:summary:64``
        without ``budget``: ``bounded:summary``), e.g. a report's row key across budgets."""
        name, arg = self.split(spelling)
        params = self._params[name]
        if arg is None or not params:
            return spelling
        rest = params.without(arg, names)
        return f"{name}:{rest}" if rest else name

    def build(self, spelling: str, ctx: BuildContext = DRY) -> T:
        """Build the component ``spelling`` names, stamped with spelling, label, tags and
        its parsed arguments.

        A bad argument (refused by the declared parameters, or a :class:`ConfigError` the
        factory raises on its context) is a one-line :class:`ConfigError` naming the axis
        and the spelling; any other exception of a factory is a bug and keeps its
        traceback."""
        name, arg = self.split(spelling)
        args = self.parse(spelling)
        raw = self._raw[name]
        try:
            obj = self._items[name](arg if raw else args, ctx)
        except ConfigError as e:
            if spelling in str(e) or str(e).startswith(f"{self.axis} "):
                raise
            raise ConfigError(f"{self.axis} {spelling!r}: {e}") from None
        except ValueError as e:
            if self._params[name] is not None:  # not a factory parsing its own text: a bug
                raise
            raise ConfigError(f"{self.axis} {spelling!r}: {e}") from None
        return stamp(obj, spelling, self._tags[name], args.record())

    def description(self, spelling: str, ctx: BuildContext = DRY) -> dict[str, Any]:
        """The stored description (spelling, label, tags, args) of ``spelling`` built dry; a
        component that builds nothing dry (an env) is described by its parsed arguments."""
        obj = self.build(spelling, ctx if ctx.dry else replace(ctx, dry=True))
        if obj is None:
            tags = sorted(self._tags[self.split(spelling)[0]])
            args = self.parse(spelling).record()
            return {"spelling": spelling, "label": spelling, "tags": tags, "args": args}
        return describe(obj)

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

    def parameters(self, name: str) -> list[str]:
        """One line per declared parameter of ``name`` (``statelab list --long``)."""
        head = self.split(name)[0]
        params = self._params[head]
        if params is None and self.own_parameters is not None:
            return self.own_parameters(head)
        if params is None:
            return ["(parses its own argument: see the spelling)"]
        return [p.line() for p in params.params]

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
