"""``statelab envs`` and ``statelab list``: what a config can name (the environments, and
what every axis takes)."""

from __future__ import annotations

from typing import Annotated

import typer

from statelab.cli._common import fail
from statelab.core import ConfigError


def envs(
    capabilities: Annotated[
        bool, typer.Option("--capabilities", help="what each env offers and what it lacks")
    ] = False,
) -> None:
    """List the environments: the name a config takes, with its options, and its Gymnasium
    id; an env that cannot run here says what it needs and the command installing it."""
    from statelab.core import CAPABILITIES
    from statelab.envs import ENVS, GYM_IDS, env_class, missing_needs
    from statelab.envs.checker import capability_report

    if capabilities:
        typer.echo("capabilities (+ offered; - missing: what runs on the env lack then):")
        for c in CAPABILITIES:
            typer.echo(f"  {c.name:<14}  {c.help}; else {c.lacking}")
        width = max(len(n) for n in ENVS.names())
        for name in ENVS.names():
            rep = capability_report(env_class(name), name)
            offers, lacks = " ".join(rep.offers) or "(none)", " ".join(rep.lacks)
            typer.echo(f"{name:<{width}}  + {offers}  - {lacks}")
        return
    rows = [(n, spelling, GYM_IDS.get(n, "-")) for n, spelling in ENVS.describe()]
    width = max(len(r[1]) for r in rows)
    gid_width = max(len(r[2]) for r in rows)
    missing = {n: why for n, _, _ in rows if (why := missing_needs(n))}
    for name, spelling, gid in rows:
        note = f"  ({missing[name]})" if name in missing else ""
        typer.echo(f"{spelling:<{width}}  {gid:<{gid_width}}{note}".rstrip())
    typer.echo(f"{len(rows) - len(missing)} of {len(rows)} envs installed here", err=True)


def list_axis(
    axis: Annotated[
        str | None, typer.Argument(help="an axis (env, model, agent, history, ...); none: all")
    ] = None,
    long: Annotated[
        bool, typer.Option("--long", help="each component's parameters, with their help")
    ] = False,
) -> None:
    """List what an axis takes, as a config spells it (every axis when none is named)."""
    from statelab.run.axes import AXES
    from statelab.run.axes import axis as get_axis

    try:
        chosen = [get_axis(axis)] if axis else list(AXES)
    except ConfigError as err:
        raise fail(str(err)) from None
    for a in chosen:
        if not axis:
            default = f" (default: {a.default})" if a.default else ""
            typer.echo(f"{a.name}: {a.help}{default}")
        for name, spelling in a.listing():
            typer.echo(f"  {spelling}" if not axis else spelling)
            for line in a.registry.parameters(name) if long else ():
                typer.echo(f"{'  ' if axis else '      '}{line}")
