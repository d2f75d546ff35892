"""The structure axis (seed 000, Table 1 and section 3.2): how facts become text.

Each format is a ``functools.singledispatch`` function over facts kinds; each facts kind's
module (:mod:`statelab.facts.pegs`, :mod:`~statelab.facts.messenger` ...) registers its
renderers on them, so an env's facts kind decides which formats apply to it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from statelab.core import DRY, BuildContext, ConfigError, Registry

Formatter = Callable[[Any], str]
FORMATS: Registry[Formatter] = Registry("format")


def _unsupported(facts: Any) -> str:
    raise TypeError(f"no renderer for {type(facts).__name__}")


def _format(name: str, help: str) -> Any:
    """Declare a format: a singledispatch function registered under ``name``. Building it
    for an env whose facts it cannot render is a one-line :class:`ConfigError`."""
    fn: Any = functools.singledispatch(_unsupported)
    fn.__name__ = name
    fn.__doc__ = (
        f"The {name!r} format: renders the facts of every kind registered on it as text "
        f"(``@{name.replace('-', '_')}.register`` adds a kind)."
    )

    def factory(arg: None, ctx: BuildContext) -> Formatter:
        if ctx.facts_type is not object and not supports(name, ctx.facts_type):
            raise ConfigError(
                f"format {name!r} does not apply to env {ctx.env!r}; formats that do: "
                f"{', '.join(formats_for(ctx.facts_type))}"
            )
        return fn

    FORMATS.register(name, help)(factory)
    return fn


natural = _format("natural", "natural")
natural_pos = _format("natural-pos", "natural-pos")
tagged_list = _format("tagged-list", "tagged-list")
dict_list = _format("dict-list", "dict-list")
matrix = _format("matrix", "matrix")
coordinates = _format("coordinates", "coordinates")
symbolic = _format("symbolic", "symbolic")


def formatter(name: str) -> Formatter:
    """The format function ``name`` (a ``singledispatch`` over facts kinds)."""
    f: Formatter = FORMATS.get(name)(None, DRY)
    return f


def supports(name: str, facts_type: type) -> bool:
    """Whether format ``name`` has a renderer for ``facts_type``."""
    fn: Any = formatter(name)
    return bool(fn.dispatch(facts_type) is not fn.dispatch(object))


def formats_for(facts_type: type) -> list[str]:
    """The formats that render ``facts_type``, in registration order."""
    return [n for n in FORMATS.names() if supports(n, facts_type)]


def check(name: str, facts_type: type, env: str) -> None:
    """Raise a one-line :class:`ConfigError` when format ``name`` cannot render ``env``."""
    FORMATS.split(name)
    if not supports(name, facts_type):
        raise ConfigError(
            f"format {name!r} does not apply to env {env!r}; formats that do: "
            f"{', '.join(formats_for(facts_type))}"
        )


def render(name: str, facts: Any) -> str:
    """``facts`` rendered in format ``name``."""
    return formatter(name)(facts)
