"""ScienceWorld's object -> starting-room table, derived from the package.

``scienceworld_rooms.json`` (next to this module) maps every object name the package's task
builders put in a room to the rooms it starts in, over every variation of the seed's 24 tasks,
per task form (the family of tasks a description's opening names, as
:func:`~statelab.worldmodels.adapters._scienceworld_text.parse_goal` reads it) and over all
(``scripts/scienceworld_rooms.py`` regenerates it from the simulator's object trees).
:func:`candidate_rooms` reads it, as the seed-004 world model's room prior does.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

#: ScienceWorld's ten rooms (B.4.1)
ROOMS = (
    "kitchen",
    "bathroom",
    "living room",
    "bedroom",
    "workshop",
    "greenhouse",
    "art studio",
    "foundry",
    "outside",
    "hallway",
)
ROOM_TABLE = Path(__file__).with_name("scienceworld_rooms.json")


#: the key of the table over every task form
ALL = "*"
#: categories no object is called by, and the broader one every instance is called by: an
#: animal is a living thing (the package's referents name no "animal"), so it starts in one
#: of the rooms a living thing starts in
BROADER = {"animal": "living thing"}


@functools.cache
def room_table() -> dict[str, dict[str, tuple[str, ...]]]:
    """{task form or :data:`ALL`: {object name: the rooms it starts in}} (empty when the data
    file is missing)."""
    if not ROOM_TABLE.exists():
        return {}
    raw = json.loads(ROOM_TABLE.read_text())
    return {form: {k: tuple(v) for k, v in t.items()} for form, t in raw.items()}


def _lookup(table: dict[str, tuple[str, ...]], words: list[str]) -> tuple[str, ...]:
    for i in range(len(words)):
        got = table.get(" ".join(words[i:]))
        if got:
            return got
    return ()


def candidate_rooms(otype: str, form: str = "") -> tuple[str, ...]:
    """The rooms an object of type ``otype`` may start in, in a task of ``form``: the form's
    table entry for the name, else for the name without its leading words ('red light bulb'
    -> 'light bulb'); then the same over every form; for "animal", the rooms of a living thing
    (:data:`BROADER`); () for a type no world starts with."""
    words = otype.lower().split()
    tables = room_table()
    got = _lookup(tables.get(form, {}), words) or _lookup(tables.get(ALL, {}), words)
    broader = BROADER.get(otype.lower())
    return got or (candidate_rooms(broader, form) if broader else ())
