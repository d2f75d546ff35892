"""ScienceWorld's text as the seed-004 world model reads it: listing items as referents,
nesting, and the task description's target and the rooms it names.

The target of a task (:func:`parse_goal`) is the first object the agent has to find, as the
authors' world model keys its belief: the substance to boil, melt, freeze or change; the
organism or category to find, grow or stage ("animal", "living thing", "apple plant",
"banana"); the thermometer the measuring tasks focus on first; the component to turn on; the
substance to create; the material to test.

The room the task names for the target and the other subjects it places are read as the
authors' world model reads them (:func:`named_room`, :func:`stated_rooms`): "The X is
located around the R", "X, which is located around the R", "The animals are in the 'R'
location", "Seeds can be found in the R"; a subject in the words the text uses ("seeds",
"animals", "boxes", "unknown substance b"), not its singular.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from statelab.worldmodels.adapters._scienceworld_rooms import ROOMS

_ARTICLE = re.compile(r"^(?:a|an|the|some)\s+", re.IGNORECASE)
_NUMBER = re.compile(r"^\d+\s+")
_INSIDE = re.compile(r"\b(?:In|On) the (.+?) is: (.*)$")
_CONTAINING = re.compile(r"\(containing ((?:[^()]|\([^()]*\))*)\)")

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
    ("conductivity", re.compile(r"^Your task is to determine if (.+?) is electrically")),
)
# -- the rooms a task text states (the authors' reading) ----------------------------------------
#: a room the text names, in the order tried: (pattern, its room group is 1)
_ROOM_NAMED = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"located (?:around|in|near)?\s*(?:the\s+)?(.+?)[.,]",
        r"can be found (?:in|near|around)\s+(?:the\s+)?(.+?)[.,]",
        r"are in the '?(.+?)'? location",
        r"is (?:around|in|near)\s+(?:the\s+)?(.+?)[.,]",
    )
)
_ROOM_TRIGGER = re.compile(r"\b(located|can be found|are in the|is (?:around|in|near))\b", re.I)
#: subject -> room sentences: (pattern: group 1 the subject, group 2 the room)
_SUBJECT_ROOM = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"(?:the\s+)?([\w ]+?)\s+are in the '?([\w ]+?)'? location",
        r"(?:the\s+)?([\w ]+?),?\s+which is located (?:around|in|near)?\s*(?:the\s+)?([\w ]+?)[.,]",
        r"(?:the\s+)?([\w ]+?)\s+(?:is|are) located (?:around|in|near)?\s*(?:the\s+)?([\w ]+?)[.,]",
        r"(?:the\s+)?([\w ]+?)\s+can be found (?:in|near|around)\s+(?:the\s+)?([\w ]+?)[.,]",
        r"(?:the\s+)?([\w ]+?)\s+(?:is|are) (?:around|in|near)\s+(?:the\s+)?([\w ]+?)[.,]",
    )
)
#: words a stated subject starts after (the last one wins: "... temperature of unknown
#: substance b" -> "unknown substance b"), and subjects that name nothing
_SUBJECT_AFTER = frozenset({
    "of", "on", "is", "are", "measure", "temperature", "melting", "point", "the", "your",
    "task", "to", "find", "determine",
})  # fmt: skip
_NO_SUBJECT = frozenset({
    "it", "they", "them", "this", "that", "which", "object", "objects", "target", "task",
})  # fmt: skip


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


def _clean(text: str) -> str:
    """A phrase of the task text as a type: lower case, no leading article."""
    t = re.sub(r"^(?:a\(n\)|a|an|the|some)\s+", "", text.strip().lower())
    return " ".join(t.split()).strip(" .,")


def named_room(text: str, target: str) -> str | None:
    """The room the task text names for ``target`` (the prior's point mass): the first
    location phrase of each form (:data:`_ROOM_NAMED`, in order) that names a room and whose
    subject (the 60 characters before its trigger) has a word of the target's longer than two
    letters, or "seed"."""
    text = " ".join(text.replace("Task Description:", "").split())
    words = [w for w in target.split() if len(w) > 2]
    for pat in _ROOM_NAMED:
        m = pat.search(text)
        if not m:
            continue
        room = m.group(1).strip().lower().strip("'\"")
        if room not in ROOMS:
            continue
        trig = _ROOM_TRIGGER.search(text, 0, m.start() + 1) or _ROOM_TRIGGER.search(text)
        at = trig.start() if trig else m.start()
        subject = text[max(0, at - 60) : at].lower()
        if (any(w in subject for w in words) if words else True) or "seed" in subject:
            return room
    return None


def stated_rooms(text: str) -> dict[str, str]:
    """Every subject the task text places in a room, in its own words ({"seeds":
    "bathroom"}, {"unknown substance b": "kitchen", "boxes": "kitchen"}): the sentences of
    :data:`_SUBJECT_ROOM`, the subject cut after its last :data:`_SUBJECT_AFTER` word; the
    first room stated for a subject wins."""
    text = " ".join(text.replace("Task Description:", "").split())
    out: dict[str, str] = {}
    for pat in _SUBJECT_ROOM:
        for m in pat.finditer(text):
            subject, room = _clean(m.group(1)), m.group(2).strip().lower().strip("'\"")
            if room not in ROOMS or not subject:
                continue
            words = subject.split()
            cut = max((i + 1 for i, w in enumerate(words) if w in _SUBJECT_AFTER), default=0)
            subject = " ".join(words[cut:]).strip()
            if subject and subject not in _NO_SUBJECT:
                out.setdefault(subject, room)
    return out


def parse_goal(text: str) -> Goal:
    """The task description's target, the room it names for the target
    (:func:`named_room`), every subject it places in a room (:func:`stated_rooms`) and its
    form."""
    text = " ".join(text.split())
    target, form = "", ""
    for name, pat in _TARGET:
        m = pat.search(text)
        if m:
            target, form = m.group(1).strip().lower(), name
            break
    room = named_room(text, target) if target else None
    return Goal(target, room, stated_rooms(text), form)


def matches(otype: str, name: str) -> bool:
    """Whether an observed referent is an instance of a tracked type: the same words, or the
    type as its head noun ('seed' ~ 'orange seed', 'bee' ~ 'adult bee', not 'bee hive')."""
    return name == otype or name.endswith(" " + otype) or name.endswith(" " + otype + "s")


__all__ = ["Goal", "matches", "parse_goal", "parse_item", "referent", "split_top"]
