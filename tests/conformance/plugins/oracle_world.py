"""``oracle-world``: a world model that answers one query and rejects one action."""

from __future__ import annotations

from typing import Any

from statelab.core import BuildContext, ConfigError, WorldModel
from statelab.worldmodels import WORLDMODELS

NAME = "oracle-world"
QUERY = "where is the key?"
ANSWER = "The key is under the mat."
REJECTED = "kick door"
FEEDBACK = "Kicking the door only hurts your foot; it stays locked."


class OracleWorld(WorldModel):
    name = NAME
    tags = frozenset({"answers-queries", "validates"})

    def answer(self, query: str, ctx: Any) -> str | None:
        return ANSWER if query.strip().lower() == QUERY else None

    def validate(self, action: str, ctx: Any) -> str | None:
        return FEEDBACK if action.strip().lower() == REJECTED else None


@WORLDMODELS.register(NAME, "oracle-world (test plugin)", tags=("answers-queries", "validates"))
def _factory(arg: str | None, ctx: BuildContext) -> WorldModel:
    if arg is not None:
        raise ConfigError(f"worldmodel {NAME!r} takes no argument, got '{NAME}:{arg}'")
    return OracleWorld()


def registered() -> bool:
    return NAME in WORLDMODELS


def unregister() -> None:
    WORLDMODELS.unregister(NAME)
