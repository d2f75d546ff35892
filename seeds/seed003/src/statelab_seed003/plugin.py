"""The entry point: registers seed 003's components, report sections and commands with the lab."""

from __future__ import annotations

#: the old top-level names of the group's commands (``statelab gates`` runs ``statelab
#: seed003 gates`` after a note saying where it moved)
ALIASES = {"retrain": "retrain", "gates": "gates", "tables": "tables", "train": "train"}


def register() -> None:
    """Called once per process by :func:`statelab.core.load_plugins`: the report section
    ``seed003-diagnostics``, the audit kind ``seed003``, the command group ``seed003`` and the
    opening check that the DSSR retrains a test opening plays are the recorded selection's."""
    from statelab.analysis.audit.kinds import register_audit_kind
    from statelab.cli.groups import register_group
    from statelab.run.opening import register_opening_check
    from statelab_seed003.analysis import report  # noqa: F401 - registers the section
    from statelab_seed003.analysis.audit import AUDIT_KIND
    from statelab_seed003.cli import app
    from statelab_seed003.train.retrain import retrains_follow_selection

    register_audit_kind(AUDIT_KIND)
    register_opening_check("seed003-retrains", retrains_follow_selection)
    register_group("seed003", app, aliases=ALIASES)
