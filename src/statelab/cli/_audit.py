"""``statelab audit``: the decision-sufficiency audit of a stored experiment (docs/audit.md),
the general one on any env or seed 003's on its cooking games."""

from __future__ import annotations

from typing import Annotated

import typer

from statelab.cli._common import _fail, _line, stored_experiment
from statelab.core import ConfigError


def audit(
    config: Annotated[
        str, typer.Argument(help="experiment name, results folder or config file (audited)")
    ],
    points: Annotated[int, typer.Option(help="decision points per episode at most")] = 8,
    relevance: Annotated[bool, typer.Option(help="also leave-one-chunk-out lag")] = False,
    samples: Annotated[int, typer.Option(help="hindsight compressions per point")] = 8,
    max_budget: Annotated[
        int, typer.Option(help="general: no read-time oracle for unbudgeted states over this")
    ] = 256,
    model: Annotated[
        str | None,
        typer.Option("--reader", "--model", help="reader model (default: each run's own)"),
    ] = None,
    sample: Annotated[
        str, typer.Option(help="which points: spread (over the episode) or first")
    ] = "spread",
    kind: Annotated[str, typer.Option(help="general, seed003 or auto (docs/audit.md)")] = "auto",
    open_test: Annotated[
        bool, typer.Option("--open-test", help="audit a sealed test split (once, recorded)")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="with --open-test: again")] = False,
    concurrency: Annotated[
        int,
        typer.Option(
            min=1,
            help="episodes audited at once (a served reader takes their requests together; "
            "hf: merges their batches)",
        ),
    ] = 1,
) -> None:
    """Decision-sufficiency audit of a finished experiment (docs/audit.md): at sampled
    decision points the reader's NLL of a* under each run's own state, the full history, the
    true state and the read-time oracle of the same size (beta, kappa, lost vs full),
    optionally the relevance lag; stored for `statelab report`, resumable, never scoring a
    point twice. --kind seed003 is seed 003's cooking audit (with its prompt leak check). A
    sealed test split is audited only with --open-test, once, and the audit is recorded."""
    from statelab.analysis.seed003.audit import lag_of

    try:
        exp = stored_experiment(config)
    except ConfigError as err:
        raise _fail(str(err)) from None
    if kind not in ("auto", "general", "seed003") or sample not in ("spread", "first"):
        raise _fail("--kind is auto, general or seed003 and --sample spread or first")
    if kind == "auto":
        kind = "seed003" if all(lag_of(e) is not None for e in exp.grid.env) else "general"
    try:
        if kind == "seed003":
            from statelab.analysis.seed003 import audit_experiment

            got = audit_experiment(exp, reader=model, points=points, relevance=relevance,
                                   samples=samples, open_test=open_test, force=force,
                                   concurrency=concurrency)  # fmt: skip
            typer.echo(f"{exp.name}: {got['points']} decision points audited, {got['leaks']} "
                       f"leaks in {got['episodes']} episodes, {len(got['failed'])} failed"
                       f" | {got['seconds']:.1f} s")  # fmt: skip
        else:
            from statelab.analysis.audit import audit_experiment as audit_any

            got = audit_any(exp, reader=model, points=points, how=sample, relevance=relevance,
                            samples=samples, max_budget=max_budget, open_test=open_test,
                            force=force, say=typer.echo, concurrency=concurrency)  # fmt: skip
            skips = ", ".join(f"{n} {why}" for why, n in sorted(got["skipped"].items()))
            typer.echo(f"{exp.name}: {got['points']} decision points audited in "
                       f"{got['episodes']} episodes, {len(got['failed'])} failed; skipped: "
                       f"{skips or 'none'} | {got['seconds']:.1f} s")  # fmt: skip
    except ConfigError as err:
        raise _fail(str(err)) from None
    for why in got["failed"][:5]:
        typer.echo(_line(f"failed: {why}"), err=True)
