"""ScienceWorld's text as the seed-004 world model reads it: listing items as referents,
nesting, and the task description's target and the rooms it names.

The target of a task (:func:`parse_goal`) is the first object the agent has to find, as the
authors' world model keys its belief: the substance to boil, melt, freeze or change; the
organism or category to find, grow or stage ("animal", "living thing", "apple plant",
"banana"); the thermometer the measuring tasks focus on first; the component to turn on; the
substance to create; the material to test. The room the task names for it: "The X is
located around the R", "which is located around the R", "The plants/animals are located in
the R" / "are in the 'R' location" (the organisms of the life-stage and lifespan tasks) and
"Seeds can be found in the R" (the seeds of the grow tasks, the target's first form).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from statelab.worldmodels.adapters._scienceworld_rooms import ROOMS

_ROOM = "|".join(re.escape(r) for r in ROOMS)
_ARTICLE = re.compile(r"^(?:a|an|the|some)\s+", re.IGNORECASE)
_NUMBER = re.compile(r"^\d+\s+")
_INSIDE = re.compile(r"\b(?:In|On) the (.+?) is: (.*)$")
_CONTAINING = re.compile(r"\(containing ((?:[^()]|\([^()]*\))*)\)")

#: what a task text places in a room, read in order: (pattern, group of the type, of the room)
_NAMED: tuple[tuple[re.Pattern[str], int, int], ...] = (
    (re.compile(rf"move it to the ([\w -]+?) in the ({_ROOM})\b"), 1, 2),
    (re.compile(rf"The ([\w -]+?) is located around the ({_ROOM})\b"), 1, 2),
    (re.compile(rf"of ([\w -]+?), which is located around the ({_ROOM})\b"), 1, 2),
    (re.compile(rf"(\w+?)s can be found in the ({_ROOM})\b"), 1, 2),
    (re.compile(rf"The (plant|animal)s are located (?:around the |in the )?({_ROOM})\b"), 1, 2),
    (re.compile(rf"The (plant|animal)s are in the '({_ROOM})' location"), 1, 2),
    (re.compile(rf"(recipe) and some of the ingredients might be found near the ({_ROOM})"), 1, 2),
)
_BOXES = re.compile(rf"The boxes are located around the ({_ROOM})\b")
_BOX = re.compile(r"\bthe ((?:\w+[- ])?\w+ box)\b")
#: the target, by task form (first match wins): (form, pattern); a form is a family of tasks
#: whose worlds the package builds alike (boil, melt, freeze and change-state are "state")
_TARGET: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("state", re.compile(r"^Your task is to (?:boil|melt|freeze) ([\w -]+?)\.")),
    ("state", re.compile(r"^Your task is to change the state of matter of ([\w -]+?)\.")),
    ("lifespan", re.compile(r"^Your task is to find the (animal) with")),
    ("find", re.compile(r"^Your task is to find a\(n\) ([\w -]+?)\.")),
    ("grow", re.compile(r"^Your task is to grow an? ([\w -]+?)(?: from seed)?\.")),
    ("stages", re.compile(r"life stages of the ([\w -]+?), starting")),
    ("measure", re.compile(r"^Your task is to measure the .+? First, focus on the ([\w -]+?)\.")),
    ("power", re.compile(r"^Your task is to turn on the ([\w -]+?)(?: by |\.)")),
    ("chemistry", re.compile(r"^Your task is to use chemistry to create the substance '([^']+)'")),
    ("paint", re.compile(r"^Your task is to use chemistry to create ([\w -]+? paint)\.")),
    ("conductivity", re.compile(r"^Your task is to determine if ([\w -]+?) is electrically")),
)
#: the plural subjects whose room is the target's: the organisms, the seeds
_TARGET_KIND = ("plant", "animal", "seed")


@dataclass(frozen=True)
class Goal:
    """A task description as the world model reads it: the target type ('' when the text
    names none), the room the text names for the target (None when it names none), every
    type it places in a room ({type: room}) and the task's form."""

    target: str
    room: str | None = None
    named: dict[str, str] = field(default_factory=dict)
    #: the task form (:data:`_TARGET`), '' when no form matches
    form: str = ""


def referent(item: str) -> str:
    """An item of a listing as its referent: 'a glass cup (containing nothing)' -> 'glass
    cup', 'a substance called air' -> 'air', 'a sink, which is turned off. ...' -> 'sink'."""
    s = _ARTICLE.sub("", item.strip())
    s = _NUMBER.sub("", s)
    s = s.removeprefix("substance called ")
    s = re.split(r"[,.(]|\s+(?:which|that|currently|titled)\b", s, maxsplit=1)[0]
    return " ".join(s.lower().split())


def split_top(body: str) -> list[str]:
    """A comma list at the top level (commas inside parentheses kept)."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in [*parts, cur] if p.strip()]


def parse_item(line: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """One listed object: its referent and the (container, contents) pairs the line states,
    its own contents and, recursively, those of what it holds."""
    name = referent(line)
    nested: list[tuple[str, list[str]]] = []
    lists: list[tuple[str, str]] = []
    own = _CONTAINING.search(line)
    if own and not re.search(r"[,.]| is: ", line[: own.start()]):
        lists.append((name, own.group(1)))
    inside = _INSIDE.search(line)
    if inside and not (own and own.start() < inside.start() < own.end()):
        lists.append((" ".join(inside.group(1).lower().split()), inside.group(2).rstrip(".")))
    for container, body in lists:
        items = [i for i in split_top(body) if i.lower() != "nothing" and not i.startswith("which")]
        nested.append((container, [referent(i) for i in items]))
        for i in items:
            nested += parse_item(i)[1]
    return name, nested


def parse_goal(text: str) -> Goal:
    """The task description's target, the room it names for the target, and every type it
    places in a room (module docstring)."""
    text = " ".join(text.split())
    target, form = "", ""
    for name, pat in _TARGET:
        m = pat.search(text)
        if m:
            target, form = m.group(1).strip().lower(), name
            break
    named: dict[str, str] = {}
    for pat, g_type, g_room in _NAMED:
        for m in pat.finditer(text):
            named.setdefault(m.group(g_type).strip().lower(), m.group(g_room))
    m = _BOXES.search(text)
    if m:
        for box in _BOX.findall(text):
            named.setdefault(box.lower(), m.group(1))
    room = named.get(target)
    if room is None and target:
        room = next((named[k] for k in _TARGET_KIND if k in named), None)
    return Goal(target, room, named, form)


def matches(otype: str, name: str) -> bool:
    """Whether an observed referent is an instance of a tracked type: the same words, or the
    type as its head noun ('seed' ~ 'orange seed', 'bee' ~ 'adult bee', not 'bee hive')."""
    return name == otype or name.endswith(" " + otype) or name.endswith(" " + otype + "s")


__all__ = ["Goal", "matches", "parse_goal", "parse_item", "referent", "split_top"]
