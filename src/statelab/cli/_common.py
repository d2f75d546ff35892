"""What every ``statelab`` command shares: the debug switch, one-line messages, the exit on
a refused input, how a command finds a stored experiment (by its name, its results
folder or its config file), and the guard on every line printed that it did not write."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import typer

from statelab.core import ConfigError

if TYPE_CHECKING:
    from statelab.run.config import Experiment

#: set to 1 to see the traceback of any error instead of its one line
DEBUG_ENV = "STATELAB_DEBUG"


def debug_on() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def one_line(text: str) -> str:
    """One terminal-safe line: no escape sequences or control characters, at most 500."""
    from statelab.llm import terminal_safe

    return " ".join(terminal_safe(text).split())[:500]


def say_safe(text: str, err: bool = False) -> None:
    """Echo text that came from a label, a spelling, a model or an env: newlines and tabs
    kept, escape sequences and control characters dropped."""
    from statelab.llm import terminal_safe

    typer.echo(terminal_safe(text), err=err)


def fail(msg: str) -> typer.Exit:
    typer.echo(f"error: {one_line(msg)}", err=True)
    return typer.Exit(2)


def store_path(exp: str) -> Path:
    """The store of an experiment named by its config file, its results folder (or its
    store file), or its name under ``results/``; one line when there is none."""
    p = Path(exp)
    if p.suffix in (".yaml", ".yml") and p.is_file():
        from statelab.run.config import load_experiment

        return load_experiment(p).out_dir / "store.sqlite"
    for cand in (p / "store.sqlite", Path("results") / exp / "store.sqlite", p):
        if cand.is_file():
            from statelab.run.store import check_store

            check_store(cand)
            return cand
    raise ConfigError(
        f"no results for {exp!r} (looked for {p}/store.sqlite and results/{exp}/store.sqlite)"
    )


def stored_experiment(exp: str) -> Experiment:
    """The experiment of :func:`store_path`: its config file read, or the config its store
    saved, placed where the store is (its ``out`` the folder above the store's)."""
    p = Path(exp)
    from statelab.run.config import load_experiment, parse_experiment

    if p.suffix in (".yaml", ".yml") and p.is_file():
        return load_experiment(p)
    path = store_path(exp)
    from statelab.run.store import Store

    st = Store(path, readonly=True)
    try:
        saved = st.experiment()
    finally:
        st.close()
    if saved is None:
        raise ConfigError(f"{path}: the store saved no experiment config")
    got = parse_experiment({**saved[1], "out": str(path.parent.parent)})
    if (got.out_dir / "store.sqlite").resolve() != path.resolve():
        raise ConfigError(
            f"{path}: its folder is not named after its experiment {got.name!r}; name the"
            " experiment's config file instead"
        )
    return got


class _SafeHandler(logging.StreamHandler):
    """Log records on stderr with escape sequences and control characters dropped (a model
    name, a server's reply or a library's text may carry them)."""

    def format(self, record: logging.LogRecord) -> str:
        from statelab.llm import terminal_safe

        return terminal_safe(super().format(record))


def _safe_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    from statelab.llm import terminal_safe

    out: Any = file if file is not None else sys.stderr
    text = warnings.formatwarning(message, category, filename, lineno, line)
    with contextlib.suppress(OSError, ValueError):  # no stderr left to write to
        out.write(terminal_safe(text))


def guard_output() -> None:
    """Every line a command prints that it did not write itself goes through the same guard
    as its own (:func:`_line`, :func:`_say`): log records (statelab's and every library's,
    at WARNING and above, where nothing else handles them) and Python warnings (matplotlib's
    glyph warnings quote the text they could not draw). Installed once per process."""
    root = logging.getLogger()
    if not any(isinstance(h, _SafeHandler) for h in root.handlers):
        handler = _SafeHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        root.addHandler(handler)
    warnings.showwarning = _safe_warning
