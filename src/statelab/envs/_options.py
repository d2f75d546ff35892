"""Env options in a spelling: ``name:<positional>+key=value+...`` (as the ``tools`` agent spells
its options). ``hanoi:4+feedback=off`` and ``babyai/goto:dists=8`` set constructor kwargs.

An env declares its options as :class:`Option` values (the constructor keyword each sets, how
its value reads, its help); :func:`option_parser` makes them the env's declared parameters,
which the env registry parses (:mod:`statelab.core._params`): a bad option is a one-line
:class:`~statelab.core.ConfigError` naming what is allowed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statelab.core import Args, Param, Params


@dataclass(frozen=True)
class Option:
    """One ``key=value`` option: the constructor keyword it sets and how its value reads
    (``read`` raises ValueError with a short reason)."""

    kwarg: str
    read: Callable[[str], Any]
    help: str  # e.g. "feedback=on|off"


@dataclass(frozen=True)
class EnvOptions:
    """The declared options of env ``name``; ``positional`` names the option a bare first
    value sets (``hanoi:4`` is ``hanoi:disks=4``)."""

    name: str
    options: dict[str, Option]
    positional: str | None = None

    def params(self, cls: type | None = None) -> Params:
        """The options as parameters, each defaulting to ``cls``'s constructor default."""
        sig = inspect.signature(cls).parameters if cls is not None else {}

        def default(kwarg: str) -> Any:
            p = sig.get(kwarg)
            return None if p is None or p.default is inspect.Parameter.empty else p.default

        return Params(
            tuple(
                Param(key, o.read, default(o.kwarg), o.help, positional=key == self.positional)
                for key, o in self.options.items()
            ),
            spelled=f"{self.name}:" + "+".join(f"[{o.help}]" for o in self.options.values()),
        )

    def kwargs(self, args: Args) -> dict[str, Any]:
        """The constructor kwargs of the options a spelling gave (the others: the
        constructor's own defaults)."""
        return {self.options[k].kwarg: args[k] for k in self.options if k in args.given}

    def __call__(self, arg: str | None) -> dict[str, Any]:
        """The kwargs of ``arg`` (the text after the colon), parsed by the declared params."""
        return self.kwargs(self.params().parse(arg))


def option_parser(
    name: str, options: dict[str, Option], positional: str | None = None
) -> EnvOptions:
    """The declared options of env ``name`` (given to :func:`~statelab.envs.register_env`)."""
    return EnvOptions(name, dict(options), positional)


__all__ = ["EnvOptions", "Option", "option_parser"]
