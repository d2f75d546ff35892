"""The sealed test split's commands: ``statelab open-test`` (the only way to run a split an
env declares sealed, recorded in the ledger) and ``statelab amend`` (an amendment beside that
ledger); the ledgers are :mod:`statelab.run.opening` and :mod:`statelab.run.ledgers`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from statelab.cli._common import debug_on, fail, one_line
from statelab.core import ConfigError


def open_test(
    config: Annotated[Path, typer.Argument(help="experiment YAML whose seeds are a test split")],
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="open a split opened before, or before the selection it is registered after"
            " (after_selection); recorded as forced",
        ),
    ] = False,
    set_: Annotated[list[str] | None, typer.Option("--set", help="override key=value")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines")] = False,
) -> None:
    """The only way to run a sealed test split: records when, with which writers and their
    hashes, once its first episode is stored; a second opening is refused unless --force
    (and the report says so), and so is an opening of an experiment with after_selection
    before that selection is recorded with its gates evaluated on an unchanged validation
    store."""
    from statelab.run.config import load_experiment
    from statelab.run.opening import Opening
    from statelab.run.runner import run_sync

    exp = load_experiment(config, set_ or [])
    progress = None if quiet else sys.stderr
    with Opening(exp, force=force) as opening:
        for w in opening.warnings:
            typer.echo(one_line(f"warning: {w}"), err=True)
        res = run_sync(exp, progress=progress, debug=debug_on(), open_test=True,
                       on_stored=opening.stored)  # fmt: skip
    for e in opening.recorded:
        after = (f", after the selection {e['selection']['id']!r}: {e['selection']['selected']}"
                 if e.get("selection") else "")  # fmt: skip
        why = f" (forced: {e['selection_forced']})" if e.get("selection_forced") else ""
        typer.echo(f"opened the {e['split']!r} split of {e['family']!r}: opening {e['opening']}"
                   f"{' (forced)' if e['forced'] and not why else ''}{after}, {e['opened']}"
                   f"{why}")  # fmt: skip
    if not opening.recorded:
        typer.echo("no episode was stored: the split was not opened (nothing recorded)", err=True)
    cut = f", {res.truncated} truncated by a limit" if res.truncated else ""
    typer.echo(one_line(f"{exp.name}: {res.done} episodes done{cut}, {res.failed} failed"
                     f" | {res.seconds:.1f} s"))  # fmt: skip
    if not res.ok:
        raise typer.Exit(1)


def amend(
    config: Annotated[Path, typer.Argument(help="experiment YAML (its out holds the ledgers)")],
    ident: Annotated[str, typer.Argument(help="the amendment's id, e.g. A5")],
    text: Annotated[str, typer.Argument(help="what changed after registration")],
    stage: Annotated[str | None, typer.Option(help="the stage it precedes")] = None,
) -> None:
    """Record an amendment (what changed after registration) in <out>/amendments.jsonl,
    beside the test-split ledger, with how many test openings and audits preceded it."""
    from statelab.run.config import load_experiment
    from statelab.run.ledgers import AMENDMENTS, add_amendment

    try:
        exp = load_experiment(config)
        e = add_amendment(Path(exp.out), ident, text, stage=stage)
    except ConfigError as err:
        raise fail(str(err)) from None
    after = f", after {e['openings_before']} test opening(s)" if e["openings_before"] else ""
    where = Path(exp.out) / AMENDMENTS
    typer.echo(f"amendment {e['id']} recorded in {where} at {e['recorded']}{after}")


__all__ = ["amend", "open_test"]
