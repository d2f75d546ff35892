"""The entry point: registers seed 001's components, report sections and commands with the lab."""

from __future__ import annotations


def register() -> None:
    """Called once per process by :func:`statelab.core.load_plugins`: the report section of
    :mod:`statelab_seed001.table1` registers on import."""
    from statelab_seed001 import table1  # noqa: F401 - registers its report section
