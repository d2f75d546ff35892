"""What every component on every axis shares: a description, and seven optional hooks.

A built component carries its ``spelling`` (the one it was built from: a run builds its
components from canonical spellings, :meth:`~statelab.core.Registry.canonical`), a display
``label``, ``tags`` and ``args`` (the values its registry parsed the spelling into); the run stores
them, and reports select and order rows by tags and arguments, never by parsing spellings.
The hooks are the one protocol through which the episode loop talks to any component (memory
writer, grounding, agent, world model):

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
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # the contexts the hooks are given (no import at run time: no cycle)
    from statelab.core._context import StepContext, Transition

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
    #: the parsed arguments of its spelling (JSON-able values by parameter name)
    args: Mapping[str, Any] = MappingProxyType({})

    def describe(self) -> dict[str, Any]:
        """Spelling, label, tags and parsed arguments (what the run stores)."""
        return describe(self)

    # -- the optional hooks --------------------------------------------------------------
    def reset(self, ctx: StepContext) -> None:
        """A new episode starts."""

    def answer(self, query: str, ctx: StepContext) -> str | None:
        """Answer a question asked during *decide* (``None``: not mine to answer)."""
        return None

    def validate(self, action: str, ctx: StepContext) -> str | None:
        """``None`` accepts ``action``; a string rejects it with that feedback."""
        return None

    def after_step(self, transition: Transition) -> None:
        """The env has stepped with ``transition.action``."""

    def intercept(self, action: str, ctx: StepContext) -> str | None:
        """A string answers ``action`` in place of the env (no env step); ``None``: the
        action is not mine."""
        return None

    def extra_actions(self) -> tuple[str, ...]:
        """Actions this component answers itself, offered with the admissible ones."""
        return ()

    def instructions(self) -> str:
        """A note for the prompt's static head ('' for none)."""
        return ""


def stamp(
    obj: C,
    spelling: str,
    tags: frozenset[str] = frozenset(),
    args: Mapping[str, Any] | None = None,
) -> C:
    """Give a built object its spelling, a default label (the spelling), its tags and its
    parsed arguments."""
    own = frozenset(getattr(obj, "tags", frozenset()))
    values: dict[str, Any] = {"spelling": spelling, "tags": own | tags}
    if args is not None:
        values["args"] = dict(args)  # a plain dict: a built env may be copied or pickled
    if not getattr(obj, "label", ""):
        values["label"] = spelling
    for key, value in values.items():
        # a builtin or a read-only attribute: nothing to stamp
        with contextlib.suppress(AttributeError):
            setattr(obj, key, value)
    return obj


def describe(obj: Any) -> dict[str, Any]:
    """The stored description of any built component: spelling, label, tags and ``args``
    (its parsed arguments)."""
    return {
        "spelling": getattr(obj, "spelling", ""),
        "label": getattr(obj, "label", ""),
        "tags": sorted(getattr(obj, "tags", ())),
        "args": dict(getattr(obj, "args", None) or {}),
    }
