"""The ``statelab`` command: envs, play, run, report.

Each command group lives in its own module, registered here in the order ``--help`` lists
them: :mod:`~statelab.cli._listing` (envs, list), :mod:`~statelab.cli._play` (play),
:mod:`~statelab.cli._run` (run, tune), :mod:`~statelab.cli._results` (report, view,
export), :mod:`~statelab.cli._plan` (plan), :mod:`~statelab.cli._sealed` (open-test, amend:
the sealed test split's ledgers), :mod:`~statelab.cli._audit` (audit) and
:mod:`~statelab.cli._cache` (cache stats, prune, clear). Plugins add their
commands as groups (:mod:`statelab.cli.groups`: ``statelab seed003 gates``).
:mod:`~statelab.cli._errors` turns every error a command lets through into one line.
"""

from __future__ import annotations

import typer

from statelab.cli import _audit, _cache, _sealed
from statelab.cli._errors import OneLine
from statelab.cli._listing import envs, list_axis
from statelab.cli._plan import plan
from statelab.cli._play import play
from statelab.cli._results import export, report, view
from statelab.cli._run import run, tune

app = typer.Typer(
    cls=OneLine,
    add_completion=False,
    no_args_is_help=True,
    help="Run LLM agents in dynamic environments and compare state representations. "
    "`statelab list` shows every axis a config crosses and what each takes.",
)

app.command()(envs)
app.command("list")(list_axis)
app.command()(play)
app.command()(run)
app.command()(tune)
app.command()(report)
app.command()(plan)
app.command()(view)
app.command()(export)
# -- the sealed test split, opened once; the decision-loss audit ---------------------------
app.command("open-test")(_sealed.open_test)
app.command()(_audit.audit)
app.command()(_sealed.amend)
# -- the response cache ---------------------------------------------------------------------
app.add_typer(_cache.app, name="cache")


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
