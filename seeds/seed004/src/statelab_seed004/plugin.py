"""The entry point: registers seed 004's components, report sections and commands with the lab."""

from __future__ import annotations


def register() -> None:
    """Called once per process by :func:`statelab.core.load_plugins`: seed 004's few-shot
    example sets (:mod:`statelab_seed004.examples`) and the renamed agent option."""
    from statelab.run._rekey import register_rename
    from statelab_seed004 import examples

    examples.register()
    # the agent option ``seed004`` (this seed's authors' prompt) is the lab's conversation
    # layout with this seed's example set now
    register_rename("agent", r"(?<=[:/])seed004(?=$|/|@)", "prompt=conversation/examples=seed004")
