"""Seed 003's commands (``statelab retrain``, ``open-test``, ``amend``, ``gates``,
``tables``): the functions :mod:`statelab.cli` registers, in its order."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from statelab.cli._common import _debug, _fail, _line
from statelab.core import ConfigError, ModelError


def retrain(
    config: Annotated[Path, typer.Argument(help="retrain YAML (configs/seed003/retrain.yaml)")],
) -> None:
    """Seed 003: retrain the selected DSSR writer with several seeds from the same initial
    adapter and the same stored pairs (pairs_round<r>.jsonl); nothing is rescored."""
    from statelab.train.retrain import run_retrain

    try:
        done = run_retrain(config)
    except (ConfigError, ModelError) as err:
        if _debug():
            raise
        raise _fail(str(err)) from None
    typer.echo(json.dumps(done, indent=1))


def open_test(
    config: Annotated[Path, typer.Argument(help="experiment YAML whose seeds are a test split")],
    force: Annotated[bool, typer.Option("--force", help="open a split opened before")] = False,
    set_: Annotated[list[str] | None, typer.Option("--set", help="override key=value")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines")] = False,
) -> None:
    """The only way to run a sealed test split: records when, with which writers and their
    hashes, once its first episode is stored; a second opening is refused unless --force
    (and the report says so)."""
    from statelab.run.config import load_experiment
    from statelab.run.opening import Opening
    from statelab.run.runner import run_sync

    exp = load_experiment(config, set_ or [])
    progress = None if quiet else sys.stderr
    with Opening(exp, force=force) as opening:
        for w in opening.warnings:
            typer.echo(_line(f"warning: {w}"), err=True)
        res = run_sync(exp, progress=progress, debug=_debug(), open_test=True,
                       on_stored=opening.stored)  # fmt: skip
    for e in opening.recorded:
        typer.echo(f"opened the {e['split']!r} split of {e['family']!r}: opening {e['opening']}"
                   f"{' (forced)' if e['forced'] else ''}, {e['opened']}")  # fmt: skip
    if not opening.recorded:
        typer.echo("no episode was stored: the split was not opened (nothing recorded)", err=True)
    cut = f", {res.truncated} truncated by a limit" if res.truncated else ""
    typer.echo(_line(f"{exp.name}: {res.done} episodes done{cut}, {res.failed} failed"
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
        raise _fail(str(err)) from None
    after = f", after {e['openings_before']} test opening(s)" if e["openings_before"] else ""
    where = Path(exp.out) / AMENDMENTS
    typer.echo(f"amendment {e['id']} recorded in {where} at {e['recorded']}{after}")


def gates(
    plan: Annotated[
        Path, typer.Argument(help="seed-003 analysis plan (configs/seed003/analysis.yaml)")
    ],
) -> None:
    """Seed 003's pre-registered gates (G1 on validation, G2 on the opened test split) with
    their verdicts, and the selection rule's ranking on validation. Before the test opening,
    G1 and the selection are evaluated and each G2 line says it is pending."""
    from statelab.analysis.seed003.gates import evaluate_gates, select, test_pending
    from statelab.analysis.seed003.plan import load_plan

    try:
        p = load_plan(plan)
        pending = test_pending(p)
        for r in evaluate_gates(p, ("validation",) if pending else ("validation", "test")):
            typer.echo(r.line())
        for g in (g for g in p.gates if pending and g.split == "test"):
            typer.echo(f"{g.id} ({g.split}) {g.what}: not evaluated: {pending}")
        if p.selection is not None:
            ranked = select(p)
            typer.echo(f"selection (validation, B = {p.selection.budget}, mean over F' "
                       f"{p.selection.lags}): selected {ranked[0][0]}")  # fmt: skip
            for name, mean, games in ranked:
                typer.echo(f"  {name}: {100 * mean:.1f}% over {games} games")
    except ConfigError as err:
        raise _fail(str(err)) from None


def tables(
    plan: Annotated[
        Path, typer.Argument(help="seed-003 analysis plan (configs/seed003/analysis.yaml)")
    ],
    out: Annotated[
        Path | None, typer.Option(help="output folder (default: the plan's out)")
    ] = None,
) -> None:
    """Seed 003's tables and figures from the stores and score files the plan names (markdown
    and PNGs): Tables 2, 7 and 14, Figures 4, 9 and 10, the kappa contrasts, the pairwise
    differences among trained writers, the lag grid, the tie check and the filler contrast;
    each once per filler protocol a store holds."""
    from statelab.analysis.seed003.gates import tables as make_tables
    from statelab.analysis.seed003.plan import load_plan

    try:
        p = load_plan(plan)
        records = None
        if p.fig4:  # the score files' recipes come from their re-simulated episodes
            from statelab.train.retrain import fig4_from_files

            records = fig4_from_files([(f.scores, f.store) for f in p.fig4])
        _, files = make_tables(p, out, records)
    except ConfigError as err:
        raise _fail(str(err)) from None
    for f in files.values():
        typer.echo(str(f))


__all__ = ["amend", "gates", "open_test", "retrain", "tables"]
