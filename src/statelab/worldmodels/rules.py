"""WALL-E-style rule checks (seed 004): does a proposed action fail, given what the world
model has observed? Each rule reads one env's view of the memory and returns feedback when it
predicts failure, ``None`` when it has no objection (which never confirms the action works).
:func:`first_failure` runs a rule list in order; an adapter's ``check`` is that call.

- household: WALL-E's released ALFWorld rules (15, numbered 100-114), over the
  :class:`HouseholdRuleState` WALL-E's state extractor keeps: :data:`HOUSEHOLD_RULES`,
  :func:`household_failure`;
- BabyAI (Appendix C.5): :data:`BABYAI_RULES`, on the cell in front of the agent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from statelab.facts.egoview import DOOR, EMPTY, WALL, thing

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


class GridView(Protocol):
    inventory: str | None

    def front(self) -> tuple[int, int, int]: ...


# -- household: WALL-E's released ALFWorld rules ----------------------------------------------
@dataclass
class HouseholdRuleState:
    """What WALL-E's ALFWorld rules read, kept from the accepted steps the way WALL-E's own
    state extractor reads a transcript: the receptacles of the room (``reachable``), the
    objects seen in each (``seen``; a take removes, a put adds), the object in hand, and the
    current position with its status ("closed" when the arrival saw it closed, "open" after
    opening it there; closing does not change it, as in WALL-E's extractor)."""

    reachable: list[str] = field(default_factory=list)
    seen: dict[str, list[str]] = field(default_factory=dict)
    in_hand: str | None = None
    position: str | None = None
    status: str | None = None


@dataclass(frozen=True)
class RuleAction:
    """A command in WALL-E's nine-verb schema (``put`` is the game's ``move O to R``)."""

    verb: str
    obj: str = ""
    place: str = ""


_VERBS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("go to", re.compile(r"^go to (?P<place>.+)$")),
    ("open", re.compile(r"^open (?P<place>.+)$")),
    ("close", re.compile(r"^close (?P<place>.+)$")),
    ("take", re.compile(r"^take (?P<obj>.+) from (?P<place>.+)$")),
    ("put", re.compile(r"^move (?P<obj>.+) to (?P<place>.+)$")),
    ("clean", re.compile(r"^clean (?P<obj>.+) with (?P<place>.+)$")),
    ("heat", re.compile(r"^heat (?P<obj>.+) with (?P<place>.+)$")),
    ("cool", re.compile(r"^cool (?P<obj>.+) with (?P<place>.+)$")),
    ("use", re.compile(r"^use (?P<obj>.+)$")),
)


def rule_action(cmd: str) -> RuleAction | None:
    """A normalised household command in WALL-E's schema; None for anything else (look,
    examine, inventory, a query), which the rules never check."""
    for verb, pat in _VERBS:
        m = pat.match(cmd)
        if m:
            d = m.groupdict()
            return RuleAction(verb, d.get("obj", ""), d.get("place", ""))
    return None


HouseholdRule = Callable[[HouseholdRuleState, RuleAction], "str | None"]


def _walle(feedback: str, suggestion: str) -> str:
    """A rejection in WALL-E's words: the rule's feedback, then its suggestion, as the
    seed's authors show it after "[World model] " (``envs/walle_alfworld_env.py``)."""
    return f"{feedback} {suggestion}".strip()


def _r100(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "take" and s.in_hand:
        return _walle("Action failed: The agent is already holding an item.",
                      "Put down the current item before taking another one.")
    return None


def _r101(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "take" and a.obj not in s.seen.get(a.place, []):
        return _walle(f"Action failed: {a.obj} is not present in {a.place}.",
                      f"Check the items in {a.place} and try taking an available item.")
    return None


def _r102(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "take" and s.position != a.place:
        return _walle("Action failed: You are not at the specified location to take the item.",
                      f"Move to {a.place} before attempting to take the item.")
    return None


def _r103(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "open" and a.place not in s.reachable:
        return _walle(f"Action failed: The target location '{a.place}' is not reachable.",
                      f"Try moving closer to '{a.place}' before attempting to open it.")
    return None


def _r104(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "open" and "fridge" in a.place and s.position != a.place:
        return _walle("Action failed: You must be at the fridge to open it.",
                      f"Move to {a.place} before trying to open it.")
    return None


def _r105(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "open" and a.place.startswith("drawer") and s.position != a.place:
        return _walle("Action failed: You must be at the drawer to open it.",
                      f"Move to {a.place} before trying to open it.")
    return None


def _r106(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "heat" and s.in_hand == a.obj and s.position != a.place:
        return _walle(f"Failed to heat {a.obj}. It must be placed in {a.place} to be heated.",
                      f"Place {a.obj} in {a.place} before heating.")
    return None


def _r107(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "put" and a.obj != s.in_hand:
        return _walle(f"Action failed: {a.obj} is not in hand.",
                      f"Ensure you have {a.obj} in hand before attempting to put it.")
    return None


def _r108(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "put" and s.position != a.place:
        return _walle("Action failed: You must be at the target location to put the item.",
                      f"Move to {a.place} before attempting to put the item.")
    return None


def _r109(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "use" and a.obj not in s.seen.get(s.position or "", []):
        return _walle(f"Action failed: {a.obj} is not in the current location {s.position}.",
                      f"Move to the location where {a.obj} is present or bring {a.obj} to the "
                      "current location.")
    return None


def _r110(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "clean" and a.obj != s.in_hand:
        return _walle(f"Action failed: {a.obj} is not in hand.",
                      f"Please ensure {a.obj} is in hand before cleaning.")
    return None


def _r112(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "take" and a.place not in s.reachable:
        return _walle(f"Failed to take the item from {a.place} as it is not reachable.",
                      "Please go to a reachable location to take the item.")
    return None


def _r114(s: HouseholdRuleState, a: RuleAction) -> str | None:
    if a.verb == "take" and a.place == s.position and s.status == "closed":
        return _walle("The action failed because the source location is closed.",
                      f"Please open the {a.place} before trying to take the item.")
    return None


#: WALL-E's released ALFWorld rules (``rules_code.json`` of elated-sawyer/WALL-E), numbered
#: 100-114, in their order; 111 repeats 101 and 113 repeats 112, as released. ``go to``,
#: ``close`` and ``cool`` have no rule; a ``heat`` or ``clean`` with the wrong appliance and
#: a ``put`` into a closed receptacle pass.
HOUSEHOLD_RULES: tuple[tuple[int, HouseholdRule], ...] = (
    (100, _r100), (101, _r101), (102, _r102), (103, _r103), (104, _r104), (105, _r105),
    (106, _r106), (107, _r107), (108, _r108), (109, _r109), (110, _r110), (111, _r101),
    (112, _r112), (113, _r112), (114, _r114),
)  # fmt: skip


def household_failure(state: HouseholdRuleState, cmd: str) -> str | None:
    """The feedback of the first of :data:`HOUSEHOLD_RULES` that rejects ``cmd`` (a
    normalised command), else None."""
    action = rule_action(cmd)
    if action is None:
        return None
    for _, rule in HOUSEHOLD_RULES:
        feedback = rule(state, action)
        if feedback:
            return feedback
    return None


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


__all__ = [
    "APPLIANCE",
    "BABYAI_RULES",
    "HOUSEHOLD_RULES",
    "HouseholdRuleState",
    "RuleAction",
    "first_failure",
    "free",
    "household_failure",
    "kind_of",
    "rule_action",
]
