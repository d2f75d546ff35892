"""The entry point: registers seed 003's components, report sections and commands with the lab."""

from __future__ import annotations


def register() -> None:
    """Called once per process by :func:`statelab.core.load_plugins`."""
