"""Command groups from plugins: a package adds its commands to ``statelab`` as one group.

A seed's reproduction (``seeds/seed003``, say) registers, from its ``statelab.plugins`` entry
point, a :class:`typer.Typer` under its own name, so its commands read ``statelab seed003
gates``. ``aliases`` keeps old top-level names working: ``statelab gates`` runs ``statelab
seed003 gates`` after one line on stderr saying where it moved. The command line mounts the
groups the first time it lists or resolves a command (:func:`mount`), after loading plugins.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from typing import Any

import typer

from statelab.core import load_plugins


@dataclass(frozen=True)
class CommandGroup:
    """A plugin's commands: ``statelab <name> <command>``; ``aliases`` maps an old top-level
    name to the group's command that replaced it."""

    name: str
    app: typer.Typer
    aliases: dict[str, str] = field(default_factory=dict)


_GROUPS: dict[str, CommandGroup] = {}


def register_group(
    name: str, app: typer.Typer, *, aliases: dict[str, str] | None = None
) -> None:
    """Add ``app``'s commands to ``statelab`` as the group ``name`` (once per name: a second
    registration of a name with another app is refused)."""
    known = _GROUPS.get(name)
    if known is not None and known.app is not app:
        raise ValueError(f"command group {name!r} is registered twice")
    _GROUPS[name] = CommandGroup(name, app, dict(aliases or {}))


def command_groups() -> list[CommandGroup]:
    """Every registered group, after loading the plugins, by name."""
    load_plugins()
    return [_GROUPS[k] for k in sorted(_GROUPS)]


def _moved(cmd: Any, old: str, new: str) -> Any:
    """``cmd`` under its old name: the same options, a hidden entry, and a note on stderr."""
    callback = cmd.callback
    assert callback is not None

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        typer.echo(f"note: `statelab {old}` moved to `statelab {new}` (the old name still works)",
                   err=True)  # fmt: skip
        return callback(*args, **kwargs)

    alias = copy.copy(cmd)  # typer's own click classes: a copy keeps them
    alias.name, alias.callback, alias.hidden = old, run, True
    alias.help = alias.short_help = f"Moved to `statelab {new}`."
    return alias


def mount(group: Any, ctx: Any) -> None:
    """Add every registered group (and its aliases) to the top-level ``group`` that has not
    got it yet; a name the lab already uses is never replaced."""
    for g in command_groups():
        if g.name in group.commands:
            continue
        sub = typer.main.get_command(g.app)
        sub.name = g.name
        group.add_command(sub, g.name)
        if not hasattr(sub, "get_command"):  # a group of one command is that command
            continue
        for old, new in g.aliases.items():
            target = sub.get_command(ctx, new)
            if target is not None and old not in group.commands:
                group.add_command(_moved(target, old, f"{g.name} {new}"), old)



__all__ = ["CommandGroup", "command_groups", "mount", "register_group"]
