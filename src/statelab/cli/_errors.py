"""What reaches the command line of an error a command lets through: one line on stderr and
its exit status (``STATELAB_DEBUG=1``: the traceback), in the group every command runs in."""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from statelab.cli._common import DEBUG_ENV, debug_on, guard_output, one_line
from statelab.cli.groups import mount
from statelab.core import ConfigError, ModelError


def _reason(e: BaseException) -> tuple[str, int]:
    """The one line and exit status of an error that reached the command line."""
    if isinstance(e, ConfigError | ModelError):
        return str(e), 2
    if isinstance(e, sqlite3.Error):
        return f"the store: {type(e).__name__}: {e}", 1
    if isinstance(e, RecursionError):
        return "the input is nested too deeply to read (RecursionError)", 2
    if isinstance(e, OSError):
        where = f" {e.filename}" if e.filename else ""
        return f"{type(e).__name__}{where}: {e.strerror or e}", 1
    return f"internal error: {type(e).__name__}: {e} ({DEBUG_ENV}=1 shows the traceback)", 1


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: what is left to flush at exit goes nowhere, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's capture)
        pass


def _usage_error(e: Exception) -> bool:
    """A bad option or argument (typer's UsageError), but not a bare command asking for help."""
    return (
        getattr(e, "exit_code", None) == 2
        and hasattr(e, "format_message")
        and type(e).__name__ != "NoArgsIsHelpError"
    )


def _mount(group: Any, ctx: Any) -> None:
    """The plugins' command groups, on the top-level group only (statelab.cli.groups)."""
    if ctx.parent is None and not getattr(group, "_mounted", False):
        group._mounted = True
        mount(group, ctx)


_LIST_ITEM = re.compile(r"^\s*(?:[-*\u2022]\s|\d+[.)]\s|\s{4})")


def reflow(text: str) -> str:
    """A docstring's paragraphs as single lines, so the terminal wraps them at its own width
    (a docstring's own line breaks, kept by the help formatter, broke sentences mid-way):
    lines of a paragraph are joined, except list items and indented (code) lines."""
    out: list[str] = []
    for para in text.strip().split("\n\n"):
        lines: list[str] = []
        for line in para.splitlines():
            if lines and line.strip() and not _LIST_ITEM.match(line):
                lines[-1] = lines[-1].rstrip() + " " + line.strip()
            else:
                lines.append(line.rstrip())
        out.append("\n".join(lines))
    return "\n\n".join(out)


def reflowed(cmd: Any) -> Any:
    """``cmd`` (and, for a group, every command under it) with its help and its parameters'
    help reflowed once (:func:`reflow`)."""
    if cmd is None or getattr(cmd, "_reflowed", False):
        return cmd
    cmd._reflowed = True
    for obj in (cmd, *getattr(cmd, "params", ())):
        if isinstance(getattr(obj, "help", None), str):
            obj.help = reflow(obj.help)
    for sub in getattr(cmd, "commands", {}).values():
        reflowed(sub)
    return cmd


class OneLine(TyperGroup):
    """Every error a command lets through is one line on stderr, never a traceback
    (``STATELAB_DEBUG=1`` lets it through whole)."""

    def list_commands(self, ctx: Any) -> list[str]:
        _mount(self, ctx)
        return super().list_commands(ctx)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            _mount(self, ctx)
        return reflowed(super().get_command(ctx, cmd_name))

    def invoke(self, ctx: Any) -> Any:  # typer's own click Context
        guard_output()
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except BrokenPipeError:  # the reader stopped reading (`statelab envs | head -1`)
            _quiet_stdout()
            raise typer.Exit(0) from None
        except typer.TyperException as e:  # typer's usage errors: one line too
            if not _usage_error(e):
                raise
            where = getattr(getattr(e, "ctx", None), "command_path", "statelab")
            typer.echo(f"error: {one_line(e.format_message())} (see {where} --help)", err=True)
            raise typer.Exit(2) from None
        except Exception as e:
            if debug_on():
                raise
            msg, code = _reason(e)
            typer.echo(f"error: {one_line(msg)}", err=True)
            raise typer.Exit(code) from None
