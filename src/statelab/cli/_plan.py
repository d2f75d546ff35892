"""``statelab plan``: how many seeds a comparison needs, from a pilot experiment or a stated
score distribution, and what they cost (:mod:`statelab.analysis.planning`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from statelab.cli._common import fail, say_safe, store_path
from statelab.core import ConfigError


def plan(
    exp: Annotated[
        str | None,
        typer.Argument(help="pilot: experiment name, results folder or config file"),
    ] = None,
    scores: Annotated[
        str | None,
        typer.Option(
            help="instead of a pilot, a run's per-seed scores: mean=M,sd=S (normal) or a"
            " list 0.2,0.5,0.4 (resampled)"
        ),
    ] = None,
    delta: Annotated[
        list[float] | None,
        typer.Option(help="mean difference to detect (repeatable; default 0.1, 0.2, 0.3)"),
    ] = None,
    power: Annotated[float, typer.Option(help="power wanted")] = 0.8,
    alpha: Annotated[float, typer.Option(help="level the adjusted p must be under")] = 0.05,
    adjust: Annotated[str, typer.Option(help="holm (the report's default) or none")] = "holm",
    comparisons: Annotated[
        int | None,
        typer.Option(help="comparisons adjusted over (default: the pilot's; 1 with --scores)"),
    ] = None,
    noise: Annotated[
        str, typer.Option(help="pilot scatter: bootstrap (its differences) or normal (its SD)")
    ] = "bootstrap",
    sims: Annotated[int, typer.Option(help="simulated experiments per power")] = 2000,
    max_seeds: Annotated[int, typer.Option(help="search no further than this many seeds")] = 500,
    out: Annotated[
        Path | None, typer.Option(help="folder for plan.md, plan.json, plan.png")
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="print JSON instead of Markdown")] = False,
) -> None:
    """Seeds needed to detect each Δ at the given power under the report's own test (exact
    paired sign-flip, Holm over the report's comparisons), by simulation of that test, with
    the episodes, tokens and dollars (LiteLLM's price table) of the pilot's grid at that many
    seeds. Writes plan.md, plan.json and plan.png (power against seeds)."""
    from statelab.analysis.plan_report import plan_data, plan_markdown, write_plan
    from statelab.analysis.planning import DEFAULT_DELTAS, make_plan, read_pilot, stated_scores

    if (exp is None) == (scores is None):
        raise fail("give a pilot experiment or --scores (one of them)")
    if scores is not None and noise != "bootstrap":
        raise fail("--noise: a pilot's option; --scores says its own distribution")
    try:
        if exp is not None:
            store = store_path(exp)
            pilot = read_pilot(store, noise=noise)
            where = out or store.parent / "plan"
        else:
            pilot = stated_scores(scores or "", comparisons if comparisons is not None else 1)
            where = out or Path("plan")
        got = make_plan(
            pilot, tuple(delta) if delta else DEFAULT_DELTAS, power=power, alpha=alpha,
            adjust=adjust, comparisons=comparisons, sims=sims, max_seeds=max_seeds,
        )  # fmt: skip
        files = write_plan(got, where)
    except ConfigError as err:
        raise fail(str(err)) from None
    except OSError as err:
        raise fail(f"--out: cannot write {err.filename or out}: {err.strerror or err}") from None
    if json_:
        typer.echo(json.dumps(plan_data(got), indent=2))
    else:
        say_safe(plan_markdown(got))
        typer.echo(f"files: {', '.join(str(p) for p in files.values())}", err=True)
