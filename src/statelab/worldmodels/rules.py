"""WALL-E-style rule checks (seed 004): does a proposed action fail, given what the world
model has observed? Each rule reads one env's view of the memory and returns feedback when it
predicts failure, ``None`` when it has no objection (which never confirms the action works).
:func:`first_failure` runs a rule list in order; an adapter's ``check`` is that call.

- household (Appendix A; our hand-written ALFRED PDDL preconditions): :data:`HOUSEHOLD_RULES`;
- BabyAI (Appendix C.5): :data:`BABYAI_RULES`, on the cell in front of the agent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from statelab.facts.egoview import DOOR, EMPTY, WALL, thing
from statelab.worldmodels.belief import INVENTORY
from statelab.worldmodels.memory import WorldMemory

#: the appliance each household transform needs
APPLIANCE = {"clean": "sinkbasin", "heat": "microwave", "cool": "fridge"}
#: BabyAI's six actions
ACTIONS = ("turn left", "turn right", "go forward", "pick up", "drop", "toggle")
FLOOR, GOAL = 3, 8
_ALIAS = re.compile(r"^(?:go|move|walk|step)\s+(back|backward|backwards|left|right)\b")

V = TypeVar("V")


def first_failure(
    rules: Sequence[Callable[[V, str], str | None]], view: V, action: str
) -> str | None:
    """The feedback of the first rule that predicts ``action`` fails, else None."""
    for rule in rules:
        feedback = rule(view, action)
        if feedback:
            return feedback
    return None


def kind_of(name: str) -> str:
    """'cabinet 3' -> 'cabinet'."""
    return name.rsplit(" ", 1)[0]


def free(cell: tuple[int, int, int]) -> bool:
    """Whether minigrid lets the agent step onto a cell so encoded."""
    kind, _, state = cell
    return kind in (EMPTY, FLOOR, GOAL) or (kind == DOOR and state == 0)


class HouseholdView(Protocol):
    mem: WorldMemory

    def at(self, place: str) -> bool: ...

    def holding(self) -> list[str]: ...


class GridView(Protocol):
    inventory: str | None

    def front(self) -> tuple[int, int, int]: ...


# -- household ---------------------------------------------------------------------------------
def _go(a: HouseholdView, cmd: str) -> str | None:
    m = re.match(r"^go to (.+)$", cmd)
    if not m:
        return None
    r = m.group(1)
    if r not in a.mem.places:
        return f"There is no {r} here. Receptacles: {', '.join(a.mem.places)}."
    if a.at(r):
        return f"You are already at {r}."
    return None


def _take(a: HouseholdView, cmd: str) -> str | None:
    m = re.match(r"^take (.+?) from (.+)$", cmd)
    if not m:
        return None
    o, r = m.groups()
    if a.holding():
        return (
            f"You are already holding {a.holding()[0]}; you can carry one object at a time. "
            "Put it somewhere first."
        )
    if not a.at(r):
        return f"You are not at {r}. Go to {r} first."
    p = a.mem.places.get(r)
    if p is not None and p.open is False:
        return f"{r} is closed. Open it first."
    if p is not None and p.searched and o not in p.contents:
        return f"There is no {o} in {r}."
    return None


def _put(a: HouseholdView, cmd: str) -> str | None:
    m = re.match(r"^move (.+?) to (.+)$", cmd)
    if not m:
        return None
    o, r = m.groups()
    if o not in a.holding():
        return f"You are not holding {o}."
    if not a.at(r):
        return f"You are not at {r}. Go to {r} first."
    p = a.mem.places.get(r)
    if p is not None and p.open is False:
        return f"{r} is closed. Open it first."
    return None


def _open_close(a: HouseholdView, cmd: str) -> str | None:
    m = re.match(r"^(open|close) (.+)$", cmd)
    if not m:
        return None
    verb, r = m.groups()
    if not a.at(r):
        return f"You are not at {r}. Go to {r} first."
    p = a.mem.places.get(r)
    if p is not None and p.open is (verb == "open"):
        return f"{r} is already {'open' if verb == 'open' else 'closed'}."
    return None


def _appliance(a: HouseholdView, cmd: str) -> str | None:
    m = re.match(r"^(heat|cool|clean) (.+?) with (.+)$", cmd)
    if not m:
        return None
    verb, o, r = m.groups()
    if kind_of(r) != APPLIANCE[verb]:
        return f"You can only {verb} something with a {APPLIANCE[verb]}."
    if o not in a.holding():
        return f"You are not holding {o}. Take it first."
    if not a.at(r):
        return f"You are not at {r}. Go to {r} first."
    return None


def _use(a: HouseholdView, cmd: str) -> str | None:
    m = re.match(r"^use (.+)$", cmd)
    if not m:
        return None
    t = a.mem.things.get(m.group(1))
    if t is not None and t.location not in (None, INVENTORY) and not a.at(t.location):
        return f"{m.group(1)} is at {t.location}. Go there first."
    return None


#: the household WALL-E rules, in the order they are checked
HOUSEHOLD_RULES: tuple[Callable[[HouseholdView, str], str | None], ...] = (
    _go,
    _take,
    _put,
    _open_close,
    _appliance,
    _use,
)


# -- BabyAI ------------------------------------------------------------------------------------
def _forward(a: GridView, act: str) -> str | None:
    if act != "go forward":
        return None
    kind = a.front()[0]
    if kind == WALL:
        return "There is a wall in front of you: going forward would fail. Turn first."
    if not free(a.front()):
        return f"There is a {thing(a.front())} in front of you: going forward would fail."
    return None


def _pickup(a: GridView, act: str) -> str | None:
    if act != "pick up":
        return None
    cell = a.front()
    if free(cell):
        return "There is nothing in front of you to pick up."
    if cell[0] in (WALL, DOOR):
        return (
            f"The {'wall' if cell[0] == WALL else thing(cell)} in front of you cannot be carried."
        )
    if a.inventory is not None:
        return f"You are already carrying a {a.inventory}; drop it first."
    return None


def _drop(a: GridView, act: str) -> str | None:
    if act != "drop":
        return None
    if a.inventory is None:
        return "You are not carrying anything to drop."
    if a.front()[0] != EMPTY:
        return "The cell in front of you is occupied: you cannot drop there."
    return None


def _toggle(a: GridView, act: str) -> str | None:
    if act == "toggle" and a.front()[0] == EMPTY:
        return "There is nothing in front of you to toggle."
    return None


def _aliases(a: GridView, act: str) -> str | None:
    m = _ALIAS.match(act)
    if not m:
        return None
    d = m.group(1)
    if d in ("left", "right"):
        how = f"turn {d}, then go forward"
    else:
        how = "turn left twice (or turn right twice), then go forward"
    return f"'{act}' is not an action. The actions are: {', '.join(ACTIONS)}. To go {d}, {how}."


#: the BabyAI WALL-E rules of Appendix C.5, in the order they are checked
BABYAI_RULES: tuple[Callable[[GridView, str], str | None], ...] = (
    _aliases,
    _forward,
    _pickup,
    _drop,
    _toggle,
)


__all__ = ["APPLIANCE", "BABYAI_RULES", "HOUSEHOLD_RULES", "first_failure", "free", "kind_of"]
