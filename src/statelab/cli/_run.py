"""The commands that play episodes: ``statelab run`` (with ``--dry-run``) and ``tune``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from statelab.cli._common import debug_on, fail, one_line, say_safe
from statelab.core import ConfigError, ModelError


def run(
    config: Annotated[Path, typer.Argument(help="experiment YAML")],
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="override key=value (YAML)")
    ] = None,
    model: Annotated[str | None, typer.Option(help="model spec replacing the config's")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines")] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="check everything a run would build; call no model"),
    ] = False,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="play the episodes on Ray: auto (RAY_ADDRESS, this machine's cluster, or a "
            "new local one) or a cluster ADDRESS; this process alone writes the store "
            "(needs statelab[ray]; docs/run-on-ray.md)",
        ),
    ] = None,
) -> None:
    """Run (or resume) an experiment; finished episodes are never run twice.

    Exits 1 when an episode failed or the run stopped early (the reasons, grouped, go to
    stderr), 2 on a config error.
    """
    from statelab.run.config import load_experiment
    from statelab.run.runner import run_sync

    try:
        exp = load_experiment(config, set_ or [], model)
        for note in exp.notes():  # what runs otherwise than written, one line each
            typer.echo(one_line(f"warning: {note}"), err=True)
        if dry_run:
            _dry_run(exp)
            return
        if ray is not None:
            from statelab.run.on_ray import run_on_ray_sync

            progress = None if quiet else sys.stderr
            res = run_on_ray_sync(exp, ray, progress=progress, debug=debug_on())
        else:
            res = run_sync(exp, progress=None if quiet else sys.stderr, debug=debug_on())
    except (ConfigError, ModelError) as err:
        if debug_on():
            raise
        raise fail(str(err)) from None
    except KeyboardInterrupt as stop:  # Ctrl-C: what was done and what a rerun does, 130
        _interrupted(stop, quiet)
    typer.echo(
        f"{exp.name}: {res.done} episodes done"
        + (f", {res.truncated} truncated by a limit" if res.truncated else "")
        + f", {res.failed} failed, {res.skipped} already done"
        + (f", {res.not_started} not started" if res.not_started else "")
        + f" | model calls {res.model_calls}, cached {res.cached_calls} | tokens in "
        f"{res.tokens_in:,} out {res.tokens_out:,} | {res.seconds:.1f} s"
    )
    typer.echo(f"store: {exp.out_dir / 'store.sqlite'}  ->  statelab report {exp.out_dir}")
    for reason, n in res.reasons.most_common(10):
        typer.echo(one_line(f"failed: {n} episode{'s' * (n > 1)}: {reason}"), err=True)
    if res.stopped:
        typer.echo(one_line(f"{res.stopped}; {res.not_started} episodes not started"), err=True)
    if not res.ok:
        raise typer.Exit(1)


def _interrupted(stop: KeyboardInterrupt, quiet: bool) -> NoReturn:
    """Exit 130 (as a shell reports SIGINT) with the run's summary on stderr: the progress
    view printed it unless ``quiet``; a Ctrl-C before the run began says only that."""
    from statelab.run.runner import Interrupted

    if not isinstance(stop, Interrupted):
        typer.echo("interrupted before any episode was played; a rerun starts it", err=True)
    elif quiet:
        typer.echo(one_line(str(stop)), err=True)
    raise typer.Exit(130)


def tune(
    search: Annotated[Path, typer.Argument(help="search YAML (see statelab.tune.search)")],
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines")] = False,
) -> None:
    """Find the best representation with successive halving over paired seeds; episodes
    already in the store are reused, and a killed tune resumes. Writes tune.md, halving.png
    and winner.yaml into <out>/<name>/tune/."""
    from statelab.tune.report import write
    from statelab.tune.search import label, load_search
    from statelab.tune.tuner import tune as run_tune

    try:
        spec = load_search(search)
        result = run_tune(spec, progress=None if quiet else sys.stderr)
    except (ConfigError, ModelError) as err:
        if debug_on():
            raise
        raise fail(str(err)) from None
    paths = write(result, Path(spec.out) / spec.name / "tune")
    typer.echo(
        one_line(
            f"{spec.name}: winner {label(result.halving.winner)} | indistinguishable: "
            + "; ".join(label(c) for c in result.halving.indistinguishable)
        )
    )
    typer.echo(
        f"episodes: plan {result.planned} of the full grid's {result.full_grid}; played"
        f" {result.played}, reused {result.reused} | {result.seconds:.1f} s"
    )
    typer.echo(f"report: {paths['report']}  plot: {paths['plot']}  winner: {paths['winner']}")


def _dry_run(exp: Any) -> None:
    from statelab.run.dryrun import dry_run

    plan = dry_run(exp)
    for line in plan.lines:
        say_safe(line)
    for spec in plan.not_loaded:
        say_safe(f"model {spec}: spelling checked, weights not loaded", err=True)
    typer.echo(
        f"dry run: {exp.name}: {plan.runs} runs, {plan.episodes} episodes, "
        f"store {exp.out_dir / 'store.sqlite'}; no model called"
    )
