"""Seed 003's commands, the group ``statelab seed003``: ``train`` (reader or writer),
``retrain``, ``gates`` and ``tables``. :func:`statelab_seed003.plugin.register` mounts
:data:`app`; the old top-level names (``statelab gates``, ...) still run them, after a note.
An error a command lets through is one line on stderr (the lab's command line says it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from statelab.core import ConfigError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Seed 003, Decision-sufficient state: training the reader and the DSSR writer, the "
    "retrains, the pre-registered gates and the tables (docs/seed003.md).",
)


@app.command()
def train(
    what: Annotated[str, typer.Argument(help="reader (behaviour cloning) or writer (DSSR)")],
    config: Annotated[Path, typer.Argument(help="training YAML (configs/seed003/train_*.yaml)")],
) -> None:
    """Seed 003's training (the train extra): the reader by behaviour cloning on a*, or the
    writer by DSSR; writes LoRA adapters and summary.json into <out>/<name>/."""
    if what not in ("reader", "writer"):
        raise ConfigError(f"statelab seed003 train {what}: train 'reader' or 'writer'")
    from statelab_seed003.train._config import ReaderConfig, load_config
    from statelab_seed003.train.pipeline import train_reader, train_writer

    cfg = load_config(config, what)
    done = train_reader(cfg) if isinstance(cfg, ReaderConfig) else train_writer(cfg)
    typer.echo(json.dumps(done, indent=1))


@app.command()
def retrain(
    config: Annotated[Path, typer.Argument(help="retrain YAML (configs/seed003/retrain.yaml)")],
) -> None:
    """Seed 003: retrain the selected DSSR writer with several seeds from the same initial
    adapter and the same stored pairs (pairs_round<r>.jsonl); nothing is rescored."""
    from statelab_seed003.train.retrain import run_retrain

    done = run_retrain(config)
    typer.echo(json.dumps(done, indent=1))


@app.command()
def gates(
    plan: Annotated[
        Path, typer.Argument(help="seed-003 analysis plan (configs/seed003/analysis.yaml)")
    ],
) -> None:
    """Seed 003's pre-registered gates (G1 on validation, G2 on the opened test split) with
    their verdicts, and the selection rule's ranking on validation. Before the test opening,
    G1 and the selection are evaluated and each G2 line says it is pending."""
    from statelab.run.ledgers import SELECTIONS
    from statelab_seed003.analysis.gates import choose, evaluate_gates, record_choice, test_pending
    from statelab_seed003.analysis.plan import ledger_dir, load_plan

    p = load_plan(plan)
    pending = test_pending(p)
    choice = choose(p) if p.selection is not None else None
    selected = choice.selected if choice else None
    results = evaluate_gates(p, ("validation",) if pending else ("validation", "test"), selected)
    for r in results:
        typer.echo(r.line())
    for g in (g for g in p.gates if pending and g.split == "test"):
        typer.echo(f"{g.id} ({g.split}) {g.what}: not evaluated: {pending}")
    if p.selection is None or choice is None:
        return
    typer.echo(f"selection (validation, B = {p.selection.budget}, mean over F' "
               f"{p.selection.lags}): selected {choice.selected}")  # fmt: skip
    for name, mean, games in choice.ranking:
        typer.echo(f"  {name}: {100 * mean:.1f}% over {games} games")
    if choice.recorded is not None:
        typer.echo(f"the selection recorded before the test opening stands: {choice.selected} "
                   f"({choice.recorded['recorded']})" + (f"; {choice.note}" if choice.note else ""))
        return
    got = record_choice(p, choice, results, by=f"statelab seed003 gates {plan}")
    if got is None:
        typer.echo("selection not recorded: the plan names no test (`test:`)")
        return
    entry, wrote = got
    where = ledger_dir(p) / SELECTIONS  # type: ignore[operator]
    evaluated = ", ".join(f"{e['id']} {e['verdict']}" for e in entry["evaluated"]) or "no gate"
    typer.echo(f"selection {'recorded' if wrote else 'unchanged since'} {entry['recorded']} in "
               f"{where}: {entry['selected']} ({evaluated} on it; validation "
               f"{entry['source']['fingerprint']})")  # fmt: skip


@app.command()
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
    from statelab_seed003.analysis.gates import tables as make_tables
    from statelab_seed003.analysis.plan import load_plan

    p = load_plan(plan)
    records = None
    if p.fig4:  # the score files' recipes come from their re-simulated episodes
        from statelab_seed003.train.retrain import fig4_from_files

        records = fig4_from_files([(f.scores, f.store) for f in p.fig4])
    _, files = make_tables(p, out, records)
    for f in files.values():
        typer.echo(str(f))


__all__ = ["app", "gates", "retrain", "tables", "train"]
