"""What every ``statelab`` command shares: the debug switch, one-line messages, the exit on
a refused input."""

from __future__ import annotations

import os

import typer

#: set to 1 to see the traceback of any error instead of its one line
DEBUG_ENV = "STATELAB_DEBUG"


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _line(text: str) -> str:
    """One terminal-safe line: no escape sequences or control characters, at most 500."""
    from statelab.llm import terminal_safe

    return " ".join(terminal_safe(text).split())[:500]


def _say(text: str, err: bool = False) -> None:
    """Echo text that came from a label, a spelling, a model or an env: newlines and tabs
    kept, escape sequences and control characters dropped."""
    from statelab.llm import terminal_safe

    typer.echo(terminal_safe(text), err=err)


def _fail(msg: str) -> typer.Exit:
    typer.echo(f"error: {_line(msg)}", err=True)
    return typer.Exit(2)
