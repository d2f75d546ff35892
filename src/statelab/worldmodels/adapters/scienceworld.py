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

Beliefs (B.4.2): one per task-relevant object type -- the target (the first object the task
needs: :func:`parse_goal`) and every object the task text places in a room ("move it to the
orange box in the living room", "Seeds can be found in the bathroom", "which is located
around the kitchen") -- a categorical distribution over the ten rooms and the inventory. The
prior is the authors': a point mass on a room the task names for the target; for another
type the task places, 0.9 on its room and the rest over the other rooms it may start in;
else uniform over the rooms it may start in. Which rooms an object may start in is the
package's own table (``scienceworld_rooms.json``, derived from the starting world of every
variation by ``scripts/scienceworld_rooms.py``), for the task's form, else over all tasks;
a type it does not know starts uniform over the ten. A ``look around`` that lists no
instance of the type rules that room out (renormalising), unless the room shows a closed
container (the object may be inside); a sighting collapses the belief to its room (the
inventory when carried). An object seen in a room and later missing from it (a bee flies,
an object is moved without us seeing it) starts again from the prior without the rooms
searched since. Other types asked about get their prior at query time, conditioned on the
rooms searched without them.

Queries (B.5), in the authors' words: ``where is <obj>`` ("X is in the R, in the C." once
seen in a container; "X is most likely in: R (1.00)." once seen in a room or carried; else
the unsearched rooms by belief until 90%, "and other rooms (N%)"; "The world model cannot
help you with this query." for a type neither the task, the table nor the episode tells of),
``what is in <room or container>``, ``searched <room>``, ``state`` (room, inventory with
the known contents of carried containers, focused object, searched rooms).

The first observation: the env's look around, folded in; or, on the authors' start (the
env's ``start=task``: the observation is the task description), nothing is folded.

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
from statelab.worldmodels.adapters._scienceworld_rooms import ROOMS, candidate_rooms
from statelab.worldmodels.adapters._scienceworld_text import (
    Goal,
    matches,
    parse_goal,
    parse_item,
    referent,
)
from statelab.worldmodels.belief import INVENTORY, Belief

#: types that name a category, not a referent ("find the animal with ..."): no observed name
#: tells an instance from the rest, so only a sighting by name moves their belief
CATEGORIES = frozenset({"animal", "living thing", "non-living thing", "plant", "thing"})
#: a where-is of a type the world model knows nothing of (the authors' words)
CANNOT_HELP = "The world model cannot help you with this query."
#: the prior's mass on a room the task names for a type other than the target (B.4.2)
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
_CLOSED = re.compile(r"\bclosed\b")
_PRODUCE = re.compile(r"\bto produce (.+?)\.")

Oracle = Callable[[str], bool]


class ScienceWorldAdapter(Adapter):
    other = "rooms"

    def __init__(self, obs: Observation, prior: str = "uniform") -> None:
        super().__init__(obs, prior)
        self.goal = obs.goal
        self.parsed: Goal = parse_goal(obs.goal)
        self.target, self.named = self.parsed.target, self.parsed.named
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
        if " ".join(obs.text.split()) != " ".join(obs.goal.split()):
            self._read(obs, "look around")
        # else the authors' start (the env's ``start=task``): the task description alone

    # -- the prior ----------------------------------------------------------------------------
    def prior_for(self, otype: str) -> Belief:
        """The room prior (B.4.2): a point mass on the room the task names for the target;
        for another type the task places, :data:`NAMED_MASS` on its room and the rest over
        the other rooms it may start in (the package's table); else uniform over the rooms
        it may start in, or over all ten for a type the table does not know. Rooms in name
        order (ties rank by name)."""
        rooms = sorted(candidate_rooms(otype, self.parsed.form) or ROOMS)
        if otype == self.target and self.parsed.room is not None:
            return Belief.from_weights([(self.parsed.room, 1.0)])
        room = self.named.get(otype)
        if room is None:
            return Belief.from_weights([(r, 1.0) for r in rooms])
        others = [r for r in rooms if r != room]
        if not others:
            return Belief.from_weights([(room, 1.0)])
        rest = (1.0 - NAMED_MASS) / len(others)
        return Belief.from_weights(
            [(r, NAMED_MASS if r == room else rest) for r in sorted({room, *others})]
        )

    def informed(self, otype: str) -> bool:
        """Whether the world model knows anything of ``otype``: tracked, placed by the task,
        seen, or in the package's room table ("The world model cannot help you" otherwise)."""
        return (
            otype in self._beliefs
            or bool(candidate_rooms(otype, self.parsed.form))
            or bool(self._observed(otype))
            or any(matches(otype, n) for names in self.rooms.values() for n in names)
        )

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
            elif dest in ROOMS:  # put down: on the room's floor, in no container
                self.where_seen[name] = (dest, None)
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
        """``where is`` in the authors' words: "X is in the R, in the C." once seen in a
        container; "X is most likely in: R (1.00)." once seen in a room or carried (the
        inventory; seen in several rooms: split evenly); else the rooms by belief ("and other
        rooms (N%)"), the searched ones left out; "The world model cannot help you with this
        query." for a type it knows nothing of; a plural ("seeds") as its singular."""
        if otype in ROOMS:
            return f"{otype} is a room, not an object. Try 'query what is in {otype}'."
        if not self.informed(otype) and otype.endswith("s") and self.informed(otype[:-1]):
            # "seeds", "plants": the type the task places, answered in the asker's word
            answer = self.where(otype[:-1], mode, rng)
            return (
                otype + answer.removeprefix(otype[:-1]) if answer.startswith(otype[:-1]) else answer
            )
        inside = self._inside(otype)
        if inside is not None and mode != "memory":
            return f"{otype} is in the {inside[0]}, in the {inside[1]}."
        seen = self._observed(otype)
        if seen and mode != "memory":
            rooms = list(dict.fromkeys(r.split(" (in the ")[0] for r in seen))
            return self._likely(otype, [(r, 1.0 / len(rooms)) for r in rooms])
        if seen:
            return Q.observed_at(otype, seen)
        if mode == "memory":
            return Q.not_observed(otype, "rooms")
        if not self.informed(otype):
            return CANNOT_HELP
        belief = self.belief_of(otype)
        ranked = [(r, p) for r, p in belief.ranked() if r not in self.rooms]
        if not ranked:
            return f"No candidate rooms remain for {otype} (all likely rooms searched)."
        if mode == "noprob":
            return Q.may_be(otype, [a for a, _ in ranked], rng)
        return self._likely(otype, ranked)

    @staticmethod
    def _likely(otype: str, ranked: list[tuple[str, float]]) -> str:
        return f"{otype} is most likely in: {Q.ranking(ranked, 'rooms')}."

    def _inside(self, otype: str) -> tuple[str, str] | None:
        """(room, container) of the first instance of ``otype`` seen in a container (by
        name), None when carried or seen in none."""
        if any(matches(otype, n) for n in self.carried):
            return None
        for name, (room, container) in sorted(self.where_seen.items()):
            if container and matches(otype, name):
                return room, container
        return None

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

__all__ = [
    "CANNOT_HELP",
    "ROOMS",
    "Goal",
    "ScienceWorldAdapter",
    "matches",
    "parse_goal",
    "parse_item",
    "referent",
]
