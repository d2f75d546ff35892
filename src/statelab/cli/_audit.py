"""``statelab audit``: the decision-sufficiency audit of a stored experiment (docs/audit.md),
by the audit kind ``--kind`` names (:mod:`statelab.analysis.audit.kinds`)."""

from __future__ import annotations

from typing import Annotated

import typer

from statelab.cli._common import fail, one_line, stored_experiment
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
    kind: Annotated[
        str, typer.Option(help="auto, general or a plugin's audit kind (docs/audit.md)")
    ] = "auto",
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
    point twice. --kind names an audit kind: general (any env), one a plugin adds, or auto
    (a plugin's kind that claims the experiment, else general). A sealed test split is
    audited only with --open-test, once, and the audit is recorded."""
    from statelab.analysis.audit.kinds import AuditRequest, resolve_kind

    try:
        exp = stored_experiment(config)
    except ConfigError as err:
        raise fail(str(err)) from None
    if sample not in ("spread", "first"):
        raise fail("--sample is spread or first")
    request = AuditRequest(reader=model, points=points, how=sample, relevance=relevance,
                           samples=samples, max_budget=max_budget, open_test=open_test,
                           force=force, concurrency=concurrency, say=typer.echo)  # fmt: skip
    try:
        got = resolve_kind(kind, exp).run(exp, request)
    except ConfigError as err:
        raise fail(str(err)) from None
    typer.echo(got.line)
    for why in got.failed[:5]:
        typer.echo(one_line(f"failed: {why}"), err=True)
