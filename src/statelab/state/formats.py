"""The structure axis (seed 000, Table 1 and section 3.2): how facts become text.

Each format is a ``functools.singledispatch`` function over fact kinds
(:mod:`statelab.core._facts`); an env's facts kind decides which formats apply to it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from statelab.core import DRY, BuildContext, ConfigError, PegFacts, Registry, TextFacts

Formatter = Callable[[Any], str]
FORMATS: Registry[Formatter] = Registry("format")


def _unsupported(facts: Any) -> str:
    raise TypeError(f"no renderer for {type(facts).__name__}")


def _format(name: str, help: str) -> Any:
    """Declare a format: a singledispatch function registered under ``name``. Building it
    for an env whose facts it cannot render is a one-line :class:`ConfigError`."""
    fn: Any = functools.singledispatch(_unsupported)
    fn.__name__ = name

    def factory(arg: str | None, ctx: BuildContext) -> Formatter:
        if arg is not None:
            raise ConfigError(f"format {name!r} takes no argument, got '{name}:{arg}'")
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
    f: Formatter = FORMATS.get(name)(None, DRY)
    return f


def supports(name: str, facts_type: type) -> bool:
    fn: Any = formatter(name)
    return bool(fn.dispatch(facts_type) is not fn.dispatch(object))


def formats_for(facts_type: type) -> list[str]:
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
    return formatter(name)(facts)


# -- Tower of Hanoi ------------------------------------------------------------------------
def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} and {items[1]}"
    return ", ".join(items[:-1]) + f", and {items[-1]}"


@natural.register
def _(f: PegFacts) -> str:
    """'Peg A has disks 2, 1, and 0 (bottom to top). Pegs B and C are empty.'"""
    parts: list[str] = []
    for name, disks in zip(f.names, f.pegs, strict=False):
        if len(disks) == 1:
            parts.append(f"Peg {name} has disk {disks[0]}.")
        elif disks:
            parts.append(f"Peg {name} has disks {_and([str(d) for d in disks])} (bottom to top).")
    empty = [n for n, d in zip(f.names, f.pegs, strict=False) if not d]
    if len(empty) == 1:
        parts.append(f"Peg {empty[0]} is empty.")
    elif empty:
        parts.append(f"Pegs {_and(empty).replace(', and', ' and')} are empty.")
    return " ".join(parts)


@tagged_list.register
def _(f: PegFacts) -> str:
    """SmartPlay's default: '- A: |bottom, [2, 1, 0], top|', one line per rod."""
    return "\n".join(
        f"- {n}: |bottom, [{', '.join(map(str, d))}], top|"
        for n, d in zip(f.names, f.pegs, strict=False)
    )


@dict_list.register
def _(f: PegFacts) -> str:
    """'{"A":[2,1,0], "B":[], "C":[]}' (bottom to top)."""
    return (
        "{"
        + ", ".join(
            f'"{n}":[{",".join(map(str, d))}]' for n, d in zip(f.names, f.pegs, strict=False)
        )
        + "}"
    )


@matrix.register
def _(f: PegFacts) -> str:
    """One row per peg, bottom to top, padded with -1: '[[2,1,0],\\n[-1,-1,-1],\\n[-1,-1,-1]]'."""
    n = f.n_disks
    rows = ["[" + ",".join(str(x) for x in list(d) + [-1] * (n - len(d))) + "]" for d in f.pegs]
    return "[" + ",\n".join(rows) + "]"


# -- text games ----------------------------------------------------------------------------
@natural.register
def _(f: TextFacts) -> str:
    """The game's own words."""
    return f.text


# renderers of other facts kinds live in their own modules and register on import
from statelab.state import _formats_more  # noqa: E402, F401
