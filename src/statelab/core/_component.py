"""What every component on every axis shares: a description, and four optional hooks.

A built component carries its ``spelling`` (as the config wrote it), a display ``label`` and
``tags``; the run stores them, and reports select and order rows by tags, never by parsing
spellings. The hooks are the one protocol through which the episode loop talks to any
component (memory writer, grounding, agent, world model):

- ``reset(ctx)``: a new episode starts (``ctx`` is the first step's context);
- ``answer(query, ctx)``: a question asked during *decide* (world models answer; ``None``:
  not mine to answer);
- ``validate(action, ctx)``: ``None`` accepts the proposed action, a string rejects it with
  that feedback, and the agent decides again (bounded);
- ``after_step(transition)``: the env has stepped;
- ``intercept(action, ctx)``: a string answers the proposed action instead of the env (a
  world-model query on the action channel, ``query <q>``): the env is not stepped, the text is
  shown to the agent as the next observation and it decides again (bounded);
- ``extra_actions()``: actions the component answers itself (those query forms), offered with
  the env's admissible ones (constrained decoding can then choose them);
- ``instructions()``: a note for the static head of the prompt, after the env's manual.

Every hook is optional: the base class does nothing.
"""

from __future__ import annotations

import contextlib
from typing import Any, TypeVar

#: the tags a component may carry, with what they mean (reports and checks read them)
TAGS: dict[str, str] = {
    "needs-model": "makes model calls (an expert or an oracle does not)",
    "reads-privileged": "reads the env's privileged view (oracle-*, experts); reported apart",
    "tracks-state": "writes the tracked state in its reply (StateAct's state field)",
    "thinks": "writes reasoning before its action",
    "needs-vision": "sends images: the model must take image parts",
    "decomposes": "splits the task into sub-tasks at test time (ADaPT)",
    "structured-turns": "writes seed 002's turn: 'key: value' fields, then the action",
    "states-goal": "writes the goal in its turn (StateAct's goal field)",
    "json-turns": "writes its turn as one JSON object",
    "uses-tools": "chooses among a tool library (seed 001's geodesic tools)",
    "plans-moves": "proposes its next k primitive moves itself (seed 001's plan:k)",
    "collision-check": "offers only the tools a code check finds safe (seed 001)",
    "close-up": "adds an agent-centred close-up of the observation (seed 001's zoom)",
    "answers-queries": "a world model that answers questions during decide",
    "validates": "may reject a proposed action before the env runs it",
    "expert": "the env's own expert policy: the ceiling row",
    "floor": "plays uniformly at random among the admissible actions: the floor row",
}

C = TypeVar("C")


class Component:
    """Base class of axis components: a description and no-op hooks."""

    spelling: str = ""
    label: str = ""
    #: tags of the component class; a registry adds the tags registered with its name
    tags: frozenset[str] = frozenset()

    def describe(self) -> dict[str, Any]:
        return {"spelling": self.spelling, "label": self.label, "tags": sorted(self.tags)}

    # -- the optional hooks --------------------------------------------------------------
    def reset(self, ctx: Any) -> None:
        """A new episode starts."""

    def answer(self, query: str, ctx: Any) -> str | None:
        """Answer a question asked during *decide* (``None``: not mine to answer)."""
        return None

    def validate(self, action: str, ctx: Any) -> str | None:
        """``None`` accepts ``action``; a string rejects it with that feedback."""
        return None

    def after_step(self, transition: Any) -> None:
        """The env has stepped with ``transition.action``."""

    def intercept(self, action: str, ctx: Any) -> str | None:
        """A string answers ``action`` in place of the env (no env step); ``None``: the
        action is not mine."""
        return None

    def extra_actions(self) -> tuple[str, ...]:
        """Actions this component answers itself, offered with the admissible ones."""
        return ()

    def instructions(self) -> str:
        """A note for the prompt's static head ('' for none)."""
        return ""


def stamp(obj: C, spelling: str, tags: frozenset[str] = frozenset()) -> C:
    """Give a built object its spelling, a default label (the spelling) and its tags."""
    own = frozenset(getattr(obj, "tags", frozenset()))
    values = {"spelling": spelling, "tags": own | tags}
    if not getattr(obj, "label", ""):
        values["label"] = spelling
    for key, value in values.items():
        # a builtin or a read-only attribute: nothing to stamp
        with contextlib.suppress(AttributeError):
            setattr(obj, key, value)
    return obj


def describe(obj: Any) -> dict[str, Any]:
    """The stored description of any built component."""
    return {
        "spelling": getattr(obj, "spelling", ""),
        "label": getattr(obj, "label", ""),
        "tags": sorted(getattr(obj, "tags", ())),
    }
