"""The entry point: registers seed 002's components, report sections and commands with the lab."""

from __future__ import annotations


def register() -> None:
    """Called once per process by :func:`statelab.core.load_plugins`: the report section of
    :mod:`statelab_seed002.agents_table` registers on import."""
    from statelab_seed002 import agents_table  # noqa: F401 - registers its report section
