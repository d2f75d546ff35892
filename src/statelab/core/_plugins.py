"""Components from other packages: the ``statelab.plugins`` entry points, and ``module:name``
spellings.

**Entry points.** An installed package adds components to any axis by declaring, in its
``pyproject.toml``::

    [project.entry-points."statelab.plugins"]
    echo = "statelab_echo"              # a module: importing it registers its components
    mine = "mypkg.plugin:register"      # or a callable, called once with no arguments

The registries load every entry point of the group once per process, lazily: the first time
one lists its names or meets a name it does not know. A plugin that fails to load is skipped
with a warning, and its error is named again when a config asks for a name nobody registered.

**``module:name`` spellings** (Gymnasium's ``make("module:Env-v0")``). On any axis, the
spelling ``<module>:<name>[:<argument>]`` imports ``<module>`` and uses what ``<name>`` names
there. It applies only when all of these hold, so every other spelling keeps its meaning:

1. the head (the part before the first ``:``) is *not* a registered name of the axis:
   registered names always win (``window:5``, ``llamacpp:/m.gguf``, ``tools:cc+k=3``);
2. the head is a dotted path of Python identifiers (``mypkg.envs``, ``statelab_echo``) that
   Python finds as a module (``importlib.util.find_spec``): ``openai-compat`` is no
   identifier, and an unknown name that is no module stays an unknown name;
3. ``<name>`` is an identifier (an attribute of the module) or a name that importing the
   module registered on the axis (``mypkg.envs:echo``, as Gymnasium's form registers).

The attribute must be *declared as a component*, as Gymnasium's ``make("module:Env")``
imports the module and then looks the id up in its registry: a factory some registration of
the axis declared (it is used under its registered name), or a class of the axis's base
(``Registry.base``: a :class:`~statelab.core.Component` subclass unless the axis says; on the
env axis an :class:`~statelab.core.Env` subclass, which the env registry adopts:
``Registry.adopt``). A class is registered under ``<module>:<name>`` and built with no
arguments, so later lookups find it without importing again. Any other attribute (a
function, a builtin: ``shutil:rmtree``, ``builtins:print``) is refused with one line before
anything is called, so validating a config (``--dry-run``) never runs it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
import warnings
from types import ModuleType
from typing import Any

#: the entry-point group plugin packages declare
GROUP = "statelab.plugins"
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_NAME = re.compile(r"[A-Za-z_][\w./-]*")


class PluginError(ValueError):
    """A ``module:name`` spelling names something that cannot join the registry (the
    registry reports it as a one-line config error)."""


class _State:
    scanned = False
    #: (entry-point name, value) of every plugin loaded (or tried) in this process
    seen: set[tuple[str, str]] = set()  # noqa: RUF012 - process-wide state
    #: entry-point name -> the one-line error of a plugin that failed to load
    errors: dict[str, str] = {}  # noqa: RUF012


def load_plugins(refresh: bool = False) -> list[str]:
    """Load the entry points of :data:`GROUP` not loaded yet (once per process; ``refresh``
    scans again, for packages installed since). The names of those loaded now."""
    if _State.scanned and not refresh:
        return []
    _State.scanned = True  # first: a plugin that lists a registry while loading ends here
    loaded = []
    for ep in sorted(importlib.metadata.entry_points(group=GROUP), key=lambda e: e.name):
        key = (ep.name, ep.value)
        if key in _State.seen:
            continue
        _State.seen.add(key)
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, type | ModuleType):
                obj()
        except Exception as e:  # a broken plugin must not break every command
            _State.errors[ep.name] = f"{ep.value}: {type(e).__name__}: {e}"
            warnings.warn(f"statelab plugin {ep.name!r} failed to load ({_State.errors[ep.name]})",
                          stacklevel=2)  # fmt: skip
            continue
        loaded.append(ep.name)
    return loaded


def plugin_errors() -> dict[str, str]:
    """Entry-point name -> why the plugin failed to load (empty when all loaded)."""
    return dict(_State.errors)


def _module_form(spelling: str) -> tuple[str, str, str | None] | None:
    """``(module, name, argument)`` when ``spelling`` has the module form (rule 2's syntax
    and rule 3's), else None."""
    module, sep, rest = spelling.partition(":")
    if not sep or not _MODULE.fullmatch(module):
        return None
    name, sep, arg = rest.partition(":")
    if not _NAME.fullmatch(name):
        return None
    return module, name, (arg if sep else None)


def _find_module(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing
        return False


def resolve(registry: Any, spelling: str) -> tuple[str, str | None] | None:
    """The registered ``(name, argument)`` of a spelling ``registry`` (a
    :class:`~statelab.core.Registry`) does not know by its head: after loading the plugins,
    or by the module form (adopting what it names). None when the spelling names nothing."""
    load_plugins()
    head, sep, arg = spelling.partition(":")
    if head in registry._items:
        return head, (arg if sep else None)
    form = _module_form(spelling)
    if form is None or not _find_module(form[0]):
        return None
    module, name, argument = form
    key = f"{module}:{name}"
    if key in registry._items:
        return key, argument
    try:
        mod = importlib.import_module(module)
    except Exception as e:
        raise PluginError(
            f"{registry.axis} {spelling!r}: importing {module!r} failed: {type(e).__name__}: {e}"
        ) from None
    obj = getattr(mod, name, None) if name.isidentifier() else None
    if obj is None:
        if name in registry._items:  # importing the module registered it (Gymnasium's form)
            return name, argument
        raise PluginError(f"{registry.axis} {spelling!r}: module {module!r} has no {name!r}")
    registered = next((n for n, f in registry._items.items() if f is obj), None)
    if registered is not None:  # a factory a registration declared: under its own name
        return registered, argument
    (registry.adopt or adopt_component)(registry, key, obj)
    return key, argument


def adopt_component(registry: Any, name: str, obj: Any) -> None:
    """Register ``obj``, a class of ``registry.base`` (a component class built with no
    arguments), in ``registry`` under ``name``; anything else is refused (a
    :class:`PluginError`), before it is called."""
    base = registry.base
    if not (isinstance(obj, type) and issubclass(obj, base)):
        what = obj.__name__ if isinstance(obj, type) else type(obj).__name__
        raise PluginError(
            f"{registry.axis} {name!r} names a {what}, not a {registry.axis} component"
            f" (a {base.__name__} subclass or a registered {registry.axis} factory)"
        )

    def factory(arg: str | None, ctx: Any) -> Any:
        if arg is not None:
            raise ValueError(f"takes no argument, got {arg!r}")
        return obj()

    registry.register(name, name)(factory)


def unknown_note() -> str:
    """What to add to an 'unknown name' error when some plugin failed to load."""
    if not _State.errors:
        return ""
    return " (plugins that failed to load: " + "; ".join(
        f"{k}: {v}" for k, v in sorted(_State.errors.items())
    ) + ")"


__all__ = ["GROUP", "PluginError", "adopt_component", "load_plugins", "plugin_errors", "resolve"]
