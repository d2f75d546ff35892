"""The seed-004 ScienceWorld world model's state and room beliefs, updated as the authors'
world model updates them (Appendix B.4).

:class:`RoomBelief`: P(object type @ room) over the ten rooms and where it was located (a
room, the inventory, or not yet). Its prior: a point mass on the room the task names for the
target; for another subject the task places in a room, :data:`STATED_MASS` there and the rest
over the other rooms the table gives it, in proportion (when the table gives no other room
the rest is dropped: the stated room reads 0.90); else uniform over the rooms the table
gives it (all ten for a type it does not know).

:class:`RoomState` folds observations in (:meth:`RoomState.observe`):

- a teleport moves the agent; a text with "No known action matches" changes nothing;
- a pick-up puts the referent in the inventory, forgets the container it was seen in, and
  locates every belief whose type it matches at the inventory; a put-down or a pour takes it
  out of the inventory but leaves those beliefs at the inventory until a look around lists
  the type again;
- a look around searches its room: the room's referents are its contents; each belief whose
  type something carried matches is at the inventory; else one that a listed referent matches
  collapses to the room; else (not yet located) the room is ruled out and the rest
  renormalised;
- a ``look in`` records the container's items and collapses (or rules out the searched room
  for) the target's belief only.

A type is matched by referent as theirs is (:func:`type_matches`): the same words, else
the type's last word among the referent's words, or, for a last word of three letters or
fewer, either one inside the other ('bee' ~ 'bee hive'). A type asked about that no belief
tracks gets one then, from its prior and the rooms searched so far, and keeps it.
"""

from __future__ import annotations

from collections.abc import Callable

from statelab.worldmodels.adapters import _scienceworld_scene as scene
from statelab.worldmodels.adapters._scienceworld_rooms import ROOMS
from statelab.worldmodels.adapters._scienceworld_text import Goal
from statelab.worldmodels.belief import INVENTORY, Belief

#: the prior's mass on the room the task states for a subject other than the target
STATED_MASS = 0.9
Table = Callable[[str], tuple[str, ...]]


def type_matches(name: str, otype: str) -> bool:
    """Whether referent ``name`` is an instance of ``otype`` (module docstring)."""
    name, otype = name.strip(), otype.strip()
    if name == otype:
        return True
    words = otype.split()
    head = words[-1] if words else otype
    if len(head) <= 3:
        return otype in name or name in otype
    return head in name.split()


class RoomBelief:
    """P(type @ room) over :data:`ROOMS` and ``located_at`` (a room, the inventory, None)."""

    def __init__(self, dist: dict[str, float]) -> None:
        self.dist = dist
        self.located_at: str | None = None

    @classmethod
    def prior(cls, rooms: tuple[str, ...], forced: str | None, stated: str | None) -> RoomBelief:
        """The prior over the table's ``rooms`` (all ten when empty) (module docstring)."""
        allowed = [r for r in ROOMS if r in rooms] or list(ROOMS)
        base = {r: (1.0 / len(allowed) if r in allowed else 0.0) for r in ROOMS}
        if forced in ROOMS:
            return cls({r: float(r == forced) for r in ROOMS})
        if stated in ROOMS:
            rest = sum(p for r, p in base.items() if r != stated) or 1.0
            return cls({r: STATED_MASS if r == stated else (1 - STATED_MASS) * base[r] / rest
                        for r in ROOMS})  # fmt: skip
        return cls(base)

    def collapse(self, room: str) -> None:
        self.located_at = room
        self.dist = {r: float(r == room) for r in self.dist}

    def rule_out(self, room: str) -> None:
        """Not in ``room``: zeroed and the rest renormalised (nothing once located)."""
        if self.located_at is not None or room not in self.dist:
            return
        self.dist[room] = 0.0
        total = sum(self.dist.values())
        if total > 0:
            self.dist = {r: p / total for r, p in self.dist.items()}

    def ranking(self, searched: set[str]) -> list[tuple[str, float]]:
        """The unsearched rooms with mass, most likely first (ties by name)."""
        kept = [(r, p) for r, p in self.dist.items() if p > 0 and r not in searched]
        return sorted(kept, key=lambda rp: (-rp[1], rp[0]))

    def value(self) -> Belief:
        """As an immutable :class:`Belief` (tests read it)."""
        if self.located_at is not None:
            return Belief(((self.located_at, 1.0),), self.located_at)
        return Belief(tuple((r, p) for r, p in self.dist.items() if p > 0))


class RoomState:
    """The deterministic state (B.4.1) and the beliefs (B.4.2) of one episode."""

    def __init__(self, goal: Goal, table: Table) -> None:
        self.goal, self.table = goal, table
        #: room -> its referents, for the searched rooms (a look around seen there)
        self.rooms: dict[str, set[str]] = {}
        self.location: str | None = None
        self.inventory: set[str] = set()
        self.focus: str | None = None
        self.containers: dict[str, set[str]] = {}
        #: referent -> (room, container) it was last listed in
        self.object_locations: dict[str, tuple[str, str]] = {}
        #: carried container -> its known contents (None: unknown)
        self.held: dict[str, set[str] | None] = {}
        self._inline: dict[str, list[str]] = {}
        self._seen_containers: set[str] = set()
        self.beliefs: dict[str, RoomBelief] = {}
        if goal.target:
            self.beliefs[goal.target] = RoomBelief.prior(table(goal.target), goal.room, None)
        for otype, room in goal.named.items():
            if otype != goal.target:
                self.beliefs[otype] = RoomBelief.prior(table(otype), None, room)

    # -- reading ------------------------------------------------------------------------------
    def carried(self, otype: str) -> bool:
        return any(type_matches(h, otype) for h in self.inventory)

    def container_of(self, otype: str) -> tuple[str, str] | None:
        """(room, container) of the first referent of ``otype`` listed in a container (None
        when one is carried)."""
        if self.carried(otype):
            return None
        return next((loc for r, loc in self.object_locations.items() if type_matches(r, otype)),
                    None)  # fmt: skip

    def listed_in(self, otype: str) -> list[str]:
        """The searched rooms whose last look around listed ``otype``."""
        return [r for r, names in self.rooms.items() if any(type_matches(n, otype) for n in names)]

    def informed(self, otype: str) -> bool:
        """Stated by the task, carried, seen, or in the table (else the world model cannot
        help)."""
        return (
            any(type_matches(s, otype) for s in self.goal.named)
            or self.carried(otype)
            or any(type_matches(r, otype) for r in self.object_locations)
            or bool(self.listed_in(otype))
            or bool(self.table(otype))
        )

    def belief(self, otype: str) -> RoomBelief:
        """The belief of ``otype``; a new one (kept) from its prior and the searched rooms."""
        b = self.beliefs.get(otype)
        if b is None:
            b = RoomBelief.prior(self.table(otype), None, None)
            for room in (r for r in ROOMS if r in self.rooms):
                if any(type_matches(n, otype) for n in self.rooms[room]):
                    b.collapse(room)
                    break
                b.rule_out(room)
            self.beliefs[otype] = b
        return b

    def where_is(self, otype: str) -> list[tuple[str, float]]:
        """The inventory when carried; where the belief located it; else its ranking over
        the unsearched rooms."""
        if self.carried(otype):
            return [(INVENTORY, 1.0)]
        b = self.belief(otype)
        if b.located_at is not None:
            return [(b.located_at, 1.0)]
        return b.ranking(set(self.rooms))

    # -- updates ------------------------------------------------------------------------------
    def observe(self, action: str, text: str) -> None:
        """Fold in the text the env answered ``action`` with (module docstring)."""
        text = text.strip()
        if scene.NO_MATCH in text:
            return
        self.location = scene.moved_to(action, text) or self.location
        self._carry(text)
        self.focus = scene.focused(text) or self.focus
        room = scene.dump_room(text)
        if room:
            self._looked(room, text)
        inside = scene.look_inside(text)
        if inside and self.location:
            self._looked_in(self.location, *inside)

    def _carry(self, text: str) -> None:
        got = scene.picked(text)
        if got:
            self.inventory.add(got)
            if got in self._seen_containers:
                known = self._inline.get(got)
                self.held[got] = set(known) if known is not None else None
            self.object_locations.pop(got, None)
            for otype, b in self.beliefs.items():
                if type_matches(got, otype):
                    b.located_at = INVENTORY
        gone = scene.dropped(text)
        if gone:
            self.inventory.discard(gone)
            self.held.pop(gone, None)
        out = scene.poured_out(text)
        if out:
            if out[0] in self.inventory:
                self.held[out[0]] = set()
            if out[1] in self.inventory:
                self.held[out[1]] = None
        into = scene.poured(text)
        if into:
            subst, dest = into
            if dest in self.inventory:
                cur = self.held.get(dest)
                self.held[dest] = {subst} if cur is None else cur | {subst}
            for src, contents in self.held.items():
                if src != dest and contents and subst in contents:
                    contents.discard(subst)

    def _looked(self, room: str, text: str) -> None:
        self.location = room
        names = scene.dump_referents(text)
        self.rooms[room] = set(names)
        for container, listed in scene.surface_contents(text):
            self._record(room, container, listed)
        self._inline = scene.inline_contents(text)
        self._seen_containers.update(self._inline)
        for container, inside in self._inline.items():
            for item in inside:  # in the text's order (theirs: a set's)
                self.object_locations[item] = (room, container)
        for otype, b in self.beliefs.items():
            if self.carried(otype):
                b.located_at = INVENTORY
            elif any(type_matches(n, otype) for n in names):
                b.collapse(room)
            else:
                b.rule_out(room)

    def _record(self, room: str, container: str, held: list[str]) -> None:
        self.containers[container] = set(held)
        self._seen_containers.add(container)
        for item in held:
            self.object_locations[item] = (room, container)

    def _looked_in(self, room: str, container: str, held: list[str]) -> None:
        self._record(room, container, held)
        b = self.beliefs.get(self.goal.target)
        if b is not None and b.located_at is None:
            if any(type_matches(n, self.goal.target) for n in held):
                b.collapse(room)
            elif room in self.rooms:
                b.rule_out(room)


__all__ = ["STATED_MASS", "RoomBelief", "RoomState", "type_matches"]
