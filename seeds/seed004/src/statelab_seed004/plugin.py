"""The entry point: registers seed 004's components, report sections and commands with the lab."""

from __future__ import annotations


def register() -> None:
    """Called once per process by :func:`statelab.core.load_plugins`: seed 004's few-shot
    example sets (:mod:`statelab_seed004.examples`)."""
    from statelab_seed004 import examples

    examples.register()
