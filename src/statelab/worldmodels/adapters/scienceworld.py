"""The ScienceWorld adapter: Appendix B of seed 004, room-level.

It claims the envs of kind ``"scienceworld"``, whose rooms read "This room is called the X. In
it, you see:" (outside: "This outside location is called the outside. Here you see:"). It
reads observations only (the text, and the room and
inventory the env's ``TextFacts`` carry: what the agent saw when it moved and picked things
up), never privileged info.

Deterministic state (B.4.1): the goal (target type, named rooms), the ten rooms (searched: a
``look around`` was seen there; contents: the objects it listed), object nesting (what was
seen in or on each container, and each object's room and container), the doors seen open or
closed, the agent's room, inventory and focused object.

Beliefs (B.4.2): one per task-relevant object type -- the target the task names and every
object the task text places in a room ("move it to the orange box in the living room",
"Seeds can be found in the bathroom", "which is located around the kitchen") -- a categorical
distribution over the ten rooms and the inventory. The prior puts 0.9 on the room the task
names (the rest uniform over the other nine rooms); an object no room is named for starts
uniform over the ten. A ``look around`` that lists no instance of the type rules that room
out (renormalising), unless the room shows a closed container (the object may be inside); a
sighting collapses the belief to its room (the inventory when carried). An object seen in a
room and later missing from it (a bee flies, an object is moved without us seeing it) starts
again from the prior without the rooms searched since. Other types asked about get the same
uniform prior at query time, conditioned on the rooms searched without them.

Queries (B.5): ``where is <obj>`` (rooms by belief until 90%, "and other rooms (X%)"; once
observed, the room and container from the deterministic state; carried: the inventory),
``what is in <room or container>``, ``searched <room>``, ``state`` (room, inventory with
the known contents of carried containers, focused object, searched rooms).

WALL-E: the seed's oracle (B.2, section 4.2: "we use the environment to check if the action
is valid"): :meth:`check` asks the env's oracle, which the episode hands to the validate
stage only (the ScienceWorld env's ``would_accept``: the simulator's parser, without running
the action).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from statelab.core import Observation
from statelab.worldmodels import queries as Q
from statelab.worldmodels.adapters import Adapter, register_adapter
from statelab.worldmodels.belief import INVENTORY, Belief

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
#: types that name a category, not a referent ("find the animal with ..."): no observed name
#: tells an instance from the rest, so only a sighting by name moves their belief
CATEGORIES = frozenset({"animal", "living thing", "non-living thing", "plant", "thing"})
#: the prior's mass on a room the task names (B.4.2)
NAMED_MASS = 0.9
#: the generic feedback of the oracle (the seed gives "generic feedback and asks to retry")
INVALID = (
    "That action is not valid here (the simulator matches it to no action). Check the action "
    "templates and the objects you can see, then choose again."
)

_ROOM = "|".join(re.escape(r) for r in ROOMS)
_LOOK = re.compile(
    rf"This (?:room|outside location) is called the ({_ROOM})\. (?:In it, you see|Here you see):"
)
_MOVED = re.compile(rf"You (?:move|teleport) to the ({_ROOM})\.")
_DOOR = re.compile(rf"A door to the ({_ROOM}) \(that is (open|closed)\)")
_DOOR_ACTION = re.compile(rf"^(open|close) door to ({_ROOM})$")
_DOOR_RESULT = re.compile(r"The door is (?:now|already) (open|closed)\.")
_FOCUS = re.compile(r"You focus on the (.+?)\.$", re.MULTILINE)
_PUT = re.compile(r"^You move the (.+?) to the (.+?)\.$", re.MULTILINE)
_ARTICLE = re.compile(r"^(?:a|an|the|some)\s+", re.IGNORECASE)
_NUMBER = re.compile(r"^\d+\s+")
_INSIDE = re.compile(r"\b(?:In|On) the (.+?) is: (.*)$")
_CONTAINING = re.compile(r"\(containing ((?:[^()]|\([^()]*\))*)\)")
_CLOSED = re.compile(r"\bclosed\b")
_PRODUCE = re.compile(r"\bto produce (.+?)\.")

#: what a task text says, read in order: (pattern, group of the type, group of the room)
_NAMED: tuple[tuple[re.Pattern[str], int, int], ...] = (
    (re.compile(rf"move it to the ([\w -]+?) in the ({_ROOM})\b"), 1, 2),
    (re.compile(rf"The ([\w -]+?) is located around the ({_ROOM})\b"), 1, 2),
    (re.compile(rf"(\w+?)s can be found in the ({_ROOM})\b"), 1, 2),
    (re.compile(rf"The (plant|animal)s are located (?:around the |in the )?({_ROOM})\b"), 1, 2),
    (re.compile(rf"The (plant|animal)s are in the '({_ROOM})' location"), 1, 2),
    (re.compile(rf"(recipe) and some of the ingredients might be found near the ({_ROOM})"), 1, 2),
)
_BOXES = re.compile(rf"The boxes are located around the ({_ROOM})\b")
_BOX = re.compile(r"\bthe ((?:\w+[- ])?\w+ box)\b")
_TARGET: tuple[re.Pattern[str], ...] = (
    re.compile(r"^Your task is to (?:boil|melt|freeze) ([\w -]+?)\."),
    re.compile(r"^Your task is to change the state of matter of ([\w -]+?)\."),
    re.compile(r"^Your task is to use chemistry to create the substance '([^']+)'"),
    re.compile(r"^Your task is to use chemistry to create ([\w -]+? paint)\."),
    re.compile(r"^Your task is to measure the (?:melting point|temperature) of ([\w -]+?),"),
    re.compile(r"^Your task is to determine if ([\w -]+?) is electrically conductive"),
    re.compile(r"^Your task is to turn on the ([\w -]+?)(?: by |\.)"),
    re.compile(r"life stages of the ([\w -]+?), starting"),
    re.compile(r"^Your task is to grow a ([\w -]+? plant) from seed"),
    re.compile(r"^Your task is to find the (animal) with"),
)

Oracle = Callable[[str], bool]


def referent(item: str) -> str:
    """An item of a listing as its referent: 'a glass cup (containing nothing)' -> 'glass
    cup', 'a substance called air' -> 'air', 'a sink, which is turned off. ...' -> 'sink'."""
    s = _ARTICLE.sub("", item.strip())
    s = _NUMBER.sub("", s)
    s = s.removeprefix("substance called ")
    s = re.split(r"[,.(]|\s+(?:which|that|currently|titled)\b", s, maxsplit=1)[0]
    return " ".join(s.lower().split())


def _split(body: str) -> list[str]:
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
        items = [i for i in _split(body) if i.lower() != "nothing" and not i.startswith("which")]
        nested.append((container, [referent(i) for i in items]))
        for i in items:
            nested += parse_item(i)[1]
    return name, nested


def parse_goal(text: str) -> tuple[str, dict[str, str]]:
    """The task's target type ('' when it names none, e.g. find a(n) animal) and the types
    it places in a room ({type: room})."""
    text = " ".join(text.split())
    target = ""
    for pat in _TARGET:
        m = pat.search(text)
        if m:
            target = m.group(1).strip().lower()
            break
    named: dict[str, str] = {}
    for pat, g_type, g_room in _NAMED:
        for m in pat.finditer(text):
            named.setdefault(m.group(g_type).strip().lower(), m.group(g_room))
    m = _BOXES.search(text)
    if m:
        for box in _BOX.findall(text):
            named.setdefault(box.lower(), m.group(1))
    if target and target not in named:
        m = re.search(rf"{re.escape(target)}, which is located around the ({_ROOM})", text, re.I)
        if m:
            named[target] = m.group(1)
    return target, named


def matches(otype: str, name: str) -> bool:
    """Whether an observed referent is an instance of a tracked type: the same words, or the
    type as its head noun ('seed' ~ 'orange seed', 'bee' ~ 'adult bee', not 'bee hive')."""
    return name == otype or name.endswith(" " + otype) or name.endswith(" " + otype + "s")


class ScienceWorldAdapter(Adapter):
    other = "rooms"

    def __init__(self, obs: Observation, prior: str = "uniform") -> None:
        super().__init__(obs, prior)
        self.goal = obs.goal
        self.target, self.named = parse_goal(obs.goal)
        #: room -> referents its last look around listed (searched rooms only)
        self.rooms: dict[str, set[str]] = {}
        #: rooms whose last look around showed a closed container
        self.hidden: set[str] = set()
        #: container -> referents seen in or on it
        self.containers: dict[str, set[str]] = {}
        #: referent -> (room, container or None) where it was last seen
        self.where_seen: dict[str, tuple[str, str | None]] = {}
        self.doors: dict[str, str] = {}
        self.location: str | None = None
        self.inventory: tuple[str, ...] = ()
        #: what is carried: the inventory and the known contents of carried containers
        self.carried: set[str] = set()
        self.focus: str | None = None
        tracked = ([self.target] if self.target else []) + list(self.named)
        self._beliefs = {t: self.prior_for(t) for t in dict.fromkeys(tracked)}
        self._read(obs, "look around")

    # -- the prior ----------------------------------------------------------------------------
    def prior_for(self, otype: str) -> Belief:
        room = self.named.get(otype)
        if room is None:
            return Belief.from_weights([(r, 1.0) for r in ROOMS])
        rest = (1.0 - NAMED_MASS) / (len(ROOMS) - 1)
        return Belief.from_weights([(r, NAMED_MASS if r == room else rest) for r in ROOMS])

    def beliefs(self) -> dict[str, Belief]:
        return dict(self._beliefs)

    # -- updates ------------------------------------------------------------------------------
    def update(self, action: str, obs: Observation, valid: bool) -> None:
        if valid:
            self._read(obs, " ".join(action.lower().split()).rstrip("."))

    def _read(self, obs: Observation, action: str) -> None:
        text = obs.text
        facts = obs.facts
        loc = getattr(facts, "location", None)
        m = _MOVED.search(text) or _LOOK.search(text)
        self.location = m.group(1) if m else (loc if loc in ROOMS else self.location)
        m = _DOOR_ACTION.match(action)
        r = _DOOR_RESULT.search(text)
        if m and r:
            self.doors[m.group(2)] = r.group(1)
        for m in _DOOR.finditer(text):
            self.doors[m.group(1)] = m.group(2)
        m = _FOCUS.search(text)
        if m:
            self.focus = referent(m.group(1))
        for m in _PUT.finditer(text):
            name, dest = referent(m.group(1)), referent(m.group(2))
            for c in self.containers.values():
                c.discard(name)
            if dest == INVENTORY:
                self.where_seen.pop(name, None)
            elif self.location:
                self.containers.setdefault(dest, set()).add(name)
                self.where_seen[name] = (self.location, dest)
        inv = getattr(facts, "inventory", None)
        if inv is not None:
            self.inventory = tuple(referent(i) for i in inv)
            self.carried = set(self.inventory)
            for line in inv:
                for container, contents in parse_item(line)[1]:
                    self.containers[container] = set(contents)
                    self.carried |= set(contents)
        look = _LOOK.search(text)
        if look:
            self._looked(look.group(1), text[look.end() :])
        elif self.location:
            self._made_or_shown(text, self.location)
        for t in self._beliefs:
            if any(matches(t, n) for n in self.carried):
                self._beliefs[t] = self._beliefs[t].seen(INVENTORY)
            elif self._beliefs[t].located_at == INVENTORY and self.location:
                # put down (or moved into something) here, out of the inventory
                self._beliefs[t] = self._beliefs[t].seen(self.location)

    def _looked(self, room: str, body: str) -> None:
        lines = body.split("You also see:")[0].split("\n")
        seen: set[str] = set()
        hidden = False
        for line in lines:
            if not line.startswith("\t"):
                continue
            name, nested = parse_item(line)
            if name == "agent":
                continue
            seen.add(name)
            self.where_seen[name] = (room, None)
            hidden = hidden or bool(_CLOSED.search(line))
            for container, contents in nested:
                self.containers[container] = set(contents)
                for c in contents:
                    seen.add(c)
                    self.where_seen[c] = (room, container)
        for name, (r, _) in list(self.where_seen.items()):
            if r == room and name not in seen:
                del self.where_seen[name]
        self.rooms[room] = seen
        if hidden:
            self.hidden.add(room)
        else:
            self.hidden.discard(room)
        for t, b in self._beliefs.items():
            if any(matches(t, n) for n in seen):
                self._beliefs[t] = b.seen(room)
            elif room not in self.hidden and b.located_at != INVENTORY and t not in CATEGORIES:
                self._beliefs[t] = self._absent(t, b, room)

    def _made_or_shown(self, text: str, room: str) -> None:
        """Objects an action made ("... mix to produce violet paint.") or showed inside a
        container ("a glass cup (containing ...)", "In the X is: ...") are in this room."""
        shown: list[tuple[str | None, str]] = [(None, referent(m)) for m in _PRODUCE.findall(text)]
        for line in text.split("\n"):
            for holder, contents in parse_item(line)[1]:
                self.containers[holder] = set(contents)
                shown += [(holder, c) for c in contents]
        for where, name in shown:
            if name not in self.carried:
                self.where_seen[name] = (room, where)
            for t, b in self._beliefs.items():
                if matches(t, name) and b.located_at != INVENTORY:
                    self._beliefs[t] = b.seen(room)

    def _absent(self, otype: str, b: Belief, room: str) -> Belief:
        after = b.absent([room])
        if after.empty and b.located_at is not None:
            # seen here before and gone now: start again without the rooms seen without it
            ruled = [r for r, names in self.rooms.items() if r not in self.hidden
                     and not any(matches(otype, n) for n in names)]  # fmt: skip
            return self.prior_for(otype).absent(ruled)
        return after

    # -- queries ------------------------------------------------------------------------------
    def query_forms(self) -> tuple[str, ...]:
        forms = [f"where is {t}" for t in self._beliefs][:3]
        return (*forms, "state")

    def answer(self, q: str, mode: str, rng: random.Random) -> str:
        query = Q.parse(q)
        if query.kind == "where":
            return self.where(query.arg, mode, rng)
        if query.kind == "in":
            return self.contents(query.arg)
        if query.kind == "searched":
            room = query.arg
            if room not in ROOMS:
                return f"{room} is not a room. Rooms: {', '.join(ROOMS)}."
            return Q.searched(room, room in self.rooms)
        if query.kind == "state":
            return self.state()
        return Q.help_text(("where is <object>", "what is in <room or container>",
                            "searched <room>", "state"))  # fmt: skip

    def contents(self, place: str) -> str:
        if place in ROOMS:
            got = self.rooms.get(place)
            return Q.contents(place, sorted(got) if got is not None else None)
        if place in self.containers:
            return Q.contents(place, sorted(self.containers[place]))
        return f"{place} has not been observed yet."

    def state(self) -> str:
        def held(n: str) -> str:
            inside = self.containers.get(n)
            if inside is None:
                return n
            return f"{n} (containing {', '.join(sorted(inside)) or 'nothing'})"

        inv = ", ".join(held(n) for n in self.inventory) or "nothing"
        return (
            f"You are in the {self.location or 'unknown room'}, holding {inv}. "
            f"Focused on: {self.focus or 'nothing'}. "
            f"Searched rooms: {', '.join(sorted(self.rooms)) or 'none'}."
        )

    def _observed(self, otype: str) -> list[str]:
        """Where instances of ``otype`` were observed, in the deterministic state's words."""
        if any(matches(otype, n) for n in self.carried):
            return [INVENTORY]
        out = []
        for name, (room, container) in sorted(self.where_seen.items()):
            if matches(otype, name):
                out.append(f"{room} (in the {container})" if container else room)
        return list(dict.fromkeys(out))

    def where(self, otype: str, mode: str, rng: random.Random) -> str:
        if otype in ROOMS:
            return f"{otype} is a room, not an object. Try 'query what is in {otype}'."
        seen = self._observed(otype)
        if seen == [INVENTORY] and mode != "memory":
            return Q.most_likely(otype, [(INVENTORY, 1.0)], self.other)
        if seen:
            return Q.observed_at(otype, seen)
        if mode == "memory":
            return Q.not_observed(otype, "rooms")
        belief = self.belief_of(otype)
        if belief.empty:
            return Q.no_candidates(otype, "rooms")
        if mode == "noprob":
            return Q.may_be(otype, [a for a, _ in belief.dist], rng)
        return Q.most_likely(otype, belief.ranked(), self.other)

    def belief_of(self, otype: str) -> Belief:
        """The belief a where-is reads: the tracked one, else the prior conditioned on the
        rooms searched without the type."""
        if otype in self._beliefs:
            return self._beliefs[otype]
        if otype in CATEGORIES:
            return self.prior_for(otype)
        ruled = [r for r, names in self.rooms.items() if r not in self.hidden
                 and not any(matches(otype, n) for n in names)]  # fmt: skip
        return self.prior_for(otype).absent(ruled)

    # -- WALL-E (the env's oracle) ------------------------------------------------------------
    def check(self, action: str, oracle: Oracle | None = None) -> str | None:
        if oracle is None or oracle(action):
            return None
        return INVALID


register_adapter("scienceworld", ScienceWorldAdapter)  # the envs declaring kind "scienceworld"

__all__ = ["ROOMS", "ScienceWorldAdapter", "matches", "parse_goal", "parse_item", "referent"]
