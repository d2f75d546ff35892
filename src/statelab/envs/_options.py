"""Env options in a spelling: ``name:<positional>+key=value+...`` (as the ``tools`` agent spells
its options). ``hanoi:4+feedback=off`` and ``babyai/goto:dists=8`` parse to constructor kwargs;
anything else is a one-line :class:`~statelab.core.ConfigError` naming what is allowed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statelab.core import ConfigError


@dataclass(frozen=True)
class Option:
    """One ``key=value`` option: the constructor keyword it sets and how its value reads
    (``read`` raises ValueError with a short reason)."""

    kwarg: str
    read: Callable[[str], Any]
    help: str  # e.g. "feedback=on|off"


def on_off(value: str) -> bool:
    if value not in ("on", "off"):
        raise ValueError("expected on or off")
    return value == "on"


def count(lo: int, hi: int) -> Callable[[str], int]:
    def read(value: str) -> int:
        if not value.isdigit() or not lo <= int(value) <= hi:
            raise ValueError(f"expected a whole number from {lo} to {hi}")
        return int(value)

    return read


def option_parser(
    name: str, options: dict[str, Option], positional: str | None = None
) -> Callable[[str | None], dict[str, Any]]:
    """A parser of the part of ``name``'s spelling after the colon. ``positional`` names the
    option a bare first value sets (``hanoi:4`` is ``hanoi:disks=4``)."""
    allowed = "+".join(f"[{o.help}]" for o in options.values())

    def parse(arg: str | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        seen: set[str] = set()
        if arg is None:  # the bare name: the constructor's defaults
            return kwargs
        for i, token in enumerate(t.strip() for t in arg.split("+")):
            key, sep, value = token.partition("=")
            if not sep and i == 0 and positional is not None:
                key, value = positional, token
            elif not sep:
                key = ""
            if key not in options or key in seen:
                why = "repeated" if key in seen else "unknown"
                raise ConfigError(
                    f"env '{name}:{arg}': {why} option {token!r}; allowed: {name}:{allowed}"
                )
            seen.add(key)
            try:
                kwargs[options[key].kwarg] = options[key].read(value.strip())
            except ValueError as e:
                raise ConfigError(f"env '{name}:{arg}': {key}: {e}") from None
        return kwargs

    return parse


__all__ = ["Option", "count", "on_off", "option_parser"]
