"""The commands that read a stored experiment: ``statelab report``, ``view`` and ``export``
(an experiment named by its name, its results folder or its config file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from statelab.cli._common import fail, say_safe, store_path
from statelab.core import ConfigError


def report(
    exp: Annotated[str, typer.Argument(help="experiment name, results folder or config file")],
    out: Annotated[Path | None, typer.Option(help="folder for report files")] = None,
    json_: Annotated[bool, typer.Option("--json", help="print JSON instead of Markdown")] = False,
    adjust: Annotated[
        str, typer.Option(help="multiple-comparison adjustment: holm, bh or none")
    ] = "holm",
) -> None:
    """Tables (mean, SD, n, significance vs the baseline, behaviour), warnings and plots."""
    from statelab.analysis.reporting import make_report
    from statelab.analysis.stats import ADJUSTMENTS

    if adjust not in ADJUSTMENTS:
        raise fail(f"--adjust: {adjust!r}; allowed: {', '.join(ADJUSTMENTS)}")
    try:
        store = store_path(exp)
        rep = make_report(store, out or store.parent / "report", adjust=adjust)  # type: ignore[arg-type]
    except ConfigError as err:
        raise fail(str(err)) from None
    except OSError as err:
        raise fail(f"--out: cannot write {err.filename or out}: {err.strerror or err}") from None
    if json_:
        typer.echo(json.dumps(rep.data, indent=2))
    else:
        say_safe(rep.markdown)
        typer.echo(f"\nfiles: {', '.join(str(p) for p in rep.files.values())}", err=True)


def view(
    exp: Annotated[str, typer.Argument(help="experiment name, results folder or config file")],
    out: Annotated[
        Path | None,
        typer.Option(help="folder for the page (index.html and its data/), or the page's .html"),
    ] = None,
    run: Annotated[
        list[str] | None,
        typer.Option(
            help="only this run: its id, label, axis=value or one whole part of its label"
            " (summary is not oracle-summary); repeatable"
        ),
    ] = None,
    seed: Annotated[list[int] | None, typer.Option(help="only these seeds")] = None,
    limit: Annotated[int | None, typer.Option(help="at most this many episodes")] = None,
) -> None:
    """Write the experiment's page (no server needed): runs x seeds by score, each episode's
    steps, prompts and memories, two runs side by side, filters. Prints the page's path."""
    from statelab.viewer import write_viewer

    if limit is not None and limit < 1:
        raise fail(f"--limit: at least 1 episode, got {limit}")
    try:
        store = store_path(exp)
        res = write_viewer(
            store, out or store.parent / "view", runs=run or (), seeds=seed or (), limit=limit
        )
    except ConfigError as err:
        raise fail(str(err)) from None
    except OSError as err:
        raise fail(f"--out: cannot write {err.filename or out}: {err.strerror or err}") from None
    typer.echo(str(res.page))
    typer.echo(res.summary(), err=True)


def export(
    exp: Annotated[str, typer.Argument(help="experiment name, results folder or config file")],
    format: Annotated[
        str, typer.Option("--format", help="parquet, csv or jsonl (one trajectory a line)")
    ] = "parquet",
    out: Annotated[Path | None, typer.Option(help="folder for the files")] = None,
    table: Annotated[
        list[str] | None, typer.Option(help="tables to export (default: episodes, steps, calls)")
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(
            help="mlflow (a local file store), wandb (offline runs) or inspect (inspect_ai eval"
            " logs, one a run) instead of files"
        ),
    ] = None,
) -> None:
    """Write the episodes, steps and calls tables as Parquet or CSV files, the episodes as
    JSON Lines trajectories, or each run to MLflow, W&B (offline) or an inspect_ai eval log."""
    from statelab.run.export import DEFAULT_TABLES, export_store

    try:
        store = store_path(exp)
        if to is not None:
            from statelab.analysis.tracking import export_tracking

            files = export_tracking(store, to, out or store.parent / "export")
        else:
            if format == "jsonl" and table:
                raise ConfigError("--table: jsonl writes whole episodes (trajectories.jsonl)")
            files = export_store(
                store,
                out or store.parent / "export",
                format,
                tuple(table or DEFAULT_TABLES),
                say=lambda msg: say_safe(msg, err=True),
            )
    except ConfigError as err:
        raise fail(str(err)) from None
    except OSError as err:
        raise fail(f"--out: cannot write {err.filename or out}: {err.strerror or err}") from None
    for f in files:
        typer.echo(str(f))
