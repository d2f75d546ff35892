"""The deterministic part of a world model's state (seed 004, A.4.1 / C.3.1): what was
observed, nothing guessed.

- :class:`Place`: a receptacle, room or grid cell: whether it is open (``None``: unknown or
  not openable), whether its contents were seen (``searched``), and what was seen in it;
- :class:`Thing`: an observed object: its type, its last known place (a place name,
  ``"inventory"`` or ``None`` when unknown) and the states it was given (clean, heated, cooled);
- :class:`WorldMemory`: the goal, the places, the things, the agent's location and inventory.

Adapters write it from observations; queries and rules read it. It is mutable, owned by one
world model in one episode.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from statelab.worldmodels.belief import INVENTORY


@dataclass
class Place:
    name: str
    kind: str = ""
    open: bool | None = None
    searched: bool = False
    contents: set[str] = field(default_factory=set)


@dataclass
class Thing:
    name: str
    kind: str
    location: str | None = None
    states: set[str] = field(default_factory=set)  # "clean", "heated", "cooled"


@dataclass
class WorldMemory:
    goal: dict[str, str] = field(default_factory=dict)
    places: dict[str, Place] = field(default_factory=dict)
    things: dict[str, Thing] = field(default_factory=dict)
    location: str | None = None
    inventory: list[str] = field(default_factory=list)

    # -- writing ------------------------------------------------------------------------
    def place(self, name: str, kind: str = "") -> Place:
        if name not in self.places:
            self.places[name] = Place(name, kind)
        return self.places[name]

    def thing(self, name: str, kind: str) -> Thing:
        if name not in self.things:
            self.things[name] = Thing(name, kind)
        return self.things[name]

    def saw_contents(self, place: str, names: list[str], kind_of: dict[str, str]) -> None:
        """``place`` was looked into and holds exactly ``names``."""
        p = self.place(place)
        for old in p.contents - set(names):
            t = self.things.get(old)
            if t is not None and t.location == place:
                t.location = None
        p.searched, p.contents = True, set(names)
        for n in names:
            self.thing(n, kind_of.get(n, "")).location = place

    def take(self, name: str, kind: str) -> None:
        t = self.thing(name, kind)
        if t.location in self.places:
            self.places[t.location].contents.discard(name)
        t.location = INVENTORY
        if name not in self.inventory:
            self.inventory.append(name)

    def put(self, name: str, kind: str, place: str) -> None:
        t = self.thing(name, kind)
        t.location = place
        self.place(place).contents.add(name)
        self.inventory = [n for n in self.inventory if n != name]

    # -- reading ------------------------------------------------------------------------
    def located(self, kind: str) -> list[Thing]:
        """Observed things of ``kind`` whose place is known, by name."""
        return sorted(
            (t for t in self.things.values() if t.kind == kind and t.location is not None),
            key=lambda t: t.name,
        )

    def searched(self) -> list[str]:
        return sorted(n for n, p in self.places.items() if p.searched)


__all__ = ["Place", "Thing", "WorldMemory"]
