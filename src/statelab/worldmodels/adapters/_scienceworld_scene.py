"""ScienceWorld's observations as the seed-004 world model reads them, event by event: the
room a ``look around`` lists and what it lists (at any depth), the contents of containers, a
``look in``, and the one-line events (a teleport, a pick-up, a put-down, a pour, a focus).

Each reader takes the env's text and gives referents ("glass cup", "sodium chloride": lower
case, no article, no "substance called"), as the authors' world model reads the same text.
A room dump is "This room is called the R. In it, you see" only: the outside's "This
outside location is called the outside. Here you see:" is not one (in theirs neither), so a
look around outside searches nothing.
"""

from __future__ import annotations

import re

from statelab.worldmodels.adapters._scienceworld_rooms import ROOMS

NO_MATCH = "No known action matches that input"
DUMP = re.compile(r"This room is called the (.+?)\. In it, you see", re.IGNORECASE)
_TELEPORTED = re.compile(r"You teleport to the (.+?)\.?$", re.IGNORECASE)
_TELEPORT = re.compile(r"^\s*teleport to (?:the )?(.+?)\s*$", re.IGNORECASE)
_PICKED = re.compile(r"You move the (.+?) to the inventory\.?$", re.IGNORECASE)
_MOVED = re.compile(r"You move the (.+?) to the (.+?)\.?$", re.IGNORECASE)
_POURED = re.compile(r"You pour the (?!contents of )(.+?) into the (.+?)\.?$", re.IGNORECASE)
_POURED_OUT = re.compile(r"You pour the contents of the (.+?) into the (.+?)\.?$", re.IGNORECASE)
_FOCUSED = re.compile(r"You focus on the (.+?)\.?$", re.IGNORECASE)
_CONTAINING = re.compile(r"\(containing (.+?)\)", re.IGNORECASE)
_ON_IN = re.compile(r"(?:On|In) the (.+?) is:\s*(.+?)\.?$", re.IGNORECASE)
_HOLDER = re.compile(r"\ba ([^.:,()]+?) \(containing (.+?)\)", re.IGNORECASE)
_INSIDE = re.compile(r"\bInside the (.+?) is:\s*(.+)", re.IGNORECASE | re.DOTALL)
_NOT_AN_ITEM = ("a door", "the agent", "a substance called air")


def ref(text: str) -> str:
    """A phrase as a referent: lower case, no leading article or "substance called"."""
    t = re.sub(r"^(?:a|an|the|some)\s+", "", text.strip().lower())
    t = re.sub(r"^substance called\s+", "", t)
    return " ".join(t.split()).strip(" .")


def room_of(name: str) -> str | None:
    n = name.strip().lower()
    return n if n in ROOMS else None


def items(blob: str) -> list[str]:
    """'a X, a Y and a Z' as referents ('nothing': none); nested "(containing ...)" cut."""
    b = blob.strip()
    if b.lower().startswith("nothing"):
        return []
    parts = re.split(r",\s*|\s+and\s+", _CONTAINING.sub("", b))
    return [r for r in (ref(p) for p in parts) if r]


def item_of_line(line: str) -> str | None:
    """The object a listing line starts with ('a stopwatch, which is ...' -> 'stopwatch'),
    None for a door, the agent, the air or a line that names none."""
    if not re.match(r"^(?:a|an|the)\s", line, re.IGNORECASE):
        return None
    if line.lower().startswith(_NOT_AN_ITEM):
        return None
    return ref(re.split(r"[,.]|\(", line, maxsplit=1)[0])


def dump_room(text: str) -> str | None:
    """The room a ``look around`` lists (None: the text is no room dump)."""
    m = DUMP.search(text)
    return room_of(m.group(1)) if m else None


def dump_referents(text: str) -> list[str]:
    """Every referent a room dump names: what containers hold ("(containing ...)"), the
    surface lists ("On the X is: ..."), and each line's own object; in order, once each."""
    found: list[str] = []
    for m in _CONTAINING.finditer(text):
        found += items(m.group(1))
    lines = [line.strip() for line in text.split("\n")]
    for line in lines:
        on = _ON_IN.search(line)
        if on:
            found += items(on.group(2))
    found += [i for i in (item_of_line(line) for line in lines) if i]
    return list(dict.fromkeys(r for r in found if r))


def surface_contents(text: str) -> list[tuple[str, list[str]]]:
    """(container, its items) of every "On/In the X is: ..." line."""
    out = []
    for line in text.split("\n"):
        m = _ON_IN.search(line.strip())
        if m:
            out.append((ref(m.group(1)), items(m.group(2))))
    return out


def inline_contents(text: str) -> dict[str, list[str]]:
    """{container: its items, once each in the text's order} of every "a X (containing
    ...)" (the last one of a name wins)."""
    return {ref(m.group(1)): list(dict.fromkeys(items(m.group(2)))) for m in _HOLDER.finditer(text)}


def look_inside(text: str) -> tuple[str, list[str]] | None:
    """(container, its items) of a ``look in`` ("Inside the X is: ..."), else None."""
    m = _INSIDE.search(text)
    if not m:
        return None
    found: list[str] = []
    for line in m.group(2).split("\n"):
        s = line.strip()
        if not s:
            continue
        first = item_of_line(s)
        found += [first] if first else items(s)
        for cm in _CONTAINING.finditer(s):
            found += items(cm.group(1))
    return ref(m.group(1)), list(dict.fromkeys(i for i in found if i))


def moved_to(action: str, text: str) -> str | None:
    """The room a teleport took the agent to (the text's, else the action's)."""
    m = _TELEPORTED.search(text)
    if m:
        return room_of(m.group(1))
    m = _TELEPORT.match(action)
    return room_of(m.group(1)) if m else None


def picked(text: str) -> str | None:
    m = _PICKED.search(text)
    return ref(m.group(1)) if m else None


def dropped(text: str) -> str | None:
    """What left the inventory: moved anywhere but the inventory, or poured by name."""
    m = _MOVED.search(text)
    if m and ref(m.group(2)) != "inventory":
        return ref(m.group(1))
    m = _POURED.search(text)
    return ref(m.group(1)) if m else None


def poured(text: str) -> tuple[str, str] | None:
    """(substance, destination) of "You pour the S into the D." (not "the contents of")."""
    m = _POURED.search(text)
    return (ref(m.group(1)), ref(m.group(2))) if m else None


def poured_out(text: str) -> tuple[str, str] | None:
    """(source, destination) of "You pour the contents of the S into the D."."""
    m = _POURED_OUT.search(text)
    return (ref(m.group(1)), ref(m.group(2))) if m else None


def focused(text: str) -> str | None:
    m = _FOCUSED.search(text)
    return ref(m.group(1)) if m else None


__all__ = [
    "DUMP",
    "NO_MATCH",
    "dropped",
    "dump_referents",
    "dump_room",
    "focused",
    "inline_contents",
    "items",
    "look_inside",
    "moved_to",
    "picked",
    "poured",
    "poured_out",
    "ref",
    "surface_contents",
]
