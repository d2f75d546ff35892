"""A text game's state as the game says it: :class:`TextFacts`, rendered only ``natural``."""

from __future__ import annotations

from dataclasses import dataclass

from statelab.facts._formats import natural


@dataclass(frozen=True)
class TextFacts:
    """A text game's state as the game says it (TextWorld, ALFWorld, ScienceWorld, Textcraft).

    ``text`` is the game's own observation; ``location`` and ``inventory`` are what the agent
    can know from its own observations, when the env can tell them (None/() otherwise).
    """

    text: str
    location: str | None = None
    inventory: tuple[str, ...] = ()


@natural.register
def _(f: TextFacts) -> str:
    """The game's own words."""
    return f.text
