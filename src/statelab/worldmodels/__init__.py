"""World models (the ``worldmodel`` axis, seed 004): components that answer the agent's
questions during *decide*, may reject an action in *validate*, and update after each step.

Only the trivial one exists yet: ``none`` answers nothing and accepts every action.
"""

from __future__ import annotations

from statelab.core import BuildContext, ConfigError, Registry, WorldModel

WORLDMODELS: Registry[WorldModel] = Registry("worldmodel")


class NoWorldModel(WorldModel):
    """No world model: every query goes unanswered, every action is accepted."""

    name = "none"


@WORLDMODELS.register("none", "none")
def _none(arg: str | None, ctx: BuildContext) -> WorldModel:
    if arg is not None:
        raise ConfigError(f"worldmodel 'none' takes no argument, got 'none:{arg}'")
    return NoWorldModel()


__all__ = ["WORLDMODELS", "NoWorldModel"]
