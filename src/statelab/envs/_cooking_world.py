"""What the logic facts of a TextWorld cooking state say (map, doors, whereabouts), for the
``cooking`` env's scripted Phase A and its privileged view."""

from __future__ import annotations

from collections import deque
from typing import Any

DIRECTIONS = ("north", "south", "east", "west")


class Facts:
    """What the logic facts of a TextWorld state say (map, doors, whereabouts)."""

    def __init__(self, facts: list[Any]) -> None:
        self.props = [(f.name, tuple(v.name for v in f.arguments)) for f in facts]
        self.player_room = next(a[1] for n, a in self.props if n == "at" and a[0] == "P")
        self.closed = {a[0] for n, a in self.props if n == "closed"}
        self.edges: dict[str, dict[str, tuple[str, str | None]]] = {}
        doors = {(a[0], a[2]): a[1] for n, a in self.props if n == "link"}
        for n, a in self.props:
            if n.endswith("_of") and n[:-3] in DIRECTIONS:
                dst, src = a
                self.edges.setdefault(src, {})[n[:-3]] = (dst, doors.get((src, dst)))
        self.place = {a[0]: (n, a[1]) for n, a in self.props if n in ("at", "in", "on")}

    def room_of(self, thing: str) -> str | None:
        seen = set()
        while thing in self.place and thing not in seen:
            seen.add(thing)
            rel, where = self.place[thing]
            if rel == "at":
                return where
            thing = where
        return "inventory" if thing == "I" else None

    def where(self, thing: str) -> str:
        if thing not in self.place:
            return "unknown"
        rel, holder = self.place[thing]
        if holder == "I":
            return "in your inventory"
        if rel == "at":
            return f"in the {holder}"
        prep = "in" if rel == "in" else "on"
        return f"{prep} the {holder} ({self.room_of(holder)})"

    def containers_in(self, room: str) -> list[str]:
        return sorted(t for t, (rel, w) in self.place.items() if rel == "at" and w == room)

    def path(self, src: str, dst: str) -> list[tuple[str, str | None]]:
        """(direction, door) hops of a shortest path from ``src`` to ``dst``."""
        prev: dict[str, tuple[str, str, str | None]] = {}
        queue, seen = deque([src]), {src}
        while queue:
            room = queue.popleft()
            if room == dst:
                break
            for d in DIRECTIONS:
                if d in self.edges.get(room, {}):
                    nxt, door = self.edges[room][d]
                    if nxt not in seen:
                        seen.add(nxt)
                        prev[nxt] = (room, d, door)
                        queue.append(nxt)
        hops: list[tuple[str, str | None]] = []
        room = dst
        while room != src:
            if room not in prev:
                return []
            back, d, door = prev[room]
            hops.append((d, door))
            room = back
        return hops[::-1]

    def distance_order(self, src: str) -> list[str]:
        order, queue, seen = [], deque([src]), {src}
        while queue:
            room = queue.popleft()
            order.append(room)
            for d in DIRECTIONS:
                if d in self.edges.get(room, {}):
                    nxt = self.edges[room][d][0]
                    if nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt)
        return order
