"""The BabyAI adapter: Appendix C of seed 004, on the egocentric view of the observation.

It claims the envs of kind ``"babyai"`` (their facts are
:class:`statelab.facts.egoview.EgoViewFacts`). It reads the
visible cells of each observation (what the text describes, cell by cell) and its own
actions; never minigrid's coordinates nor the facts' world ``direction`` (the seed's model does
not know which way it started).

- Grid: the start cell is (0, 0) and the start heading is +Y; headings 0..3 are start-forward,
  start-right, start-back, start-left (clockwise). ``turn left`` / ``turn right`` turn;
  ``go forward`` moves when the cell in front was free in the previous observation (it is
  always visible), so a blocked step leaves the pose unchanged.
- Cells, as much as the text tells (the seed's text-only model): before the room is pinned,
  the wall rays ("a wall N steps forward": the cells before it empty, the wall) and the things
  in view; from the observation that pins it on, every visible cell (empty, wall, door or the
  object seen there), with the step it was last seen; cells the agent stood on are
  ``visited``. Objects are keyed by colour and type ("red ball"), last known cell or the
  inventory; ``where is`` names the older of the last two cells a name was seen at, as the
  seed's model does.
- Pinning: a wall straight ahead, left or right (the first thing on that line) fixes that
  axis's wall; the room (6x6 interior inside an 8x8 wall ring, BabyAI's one-room levels) is
  pinned once both axes have one.
- Beliefs: one per mission referent (colour and type; twins share one). Before pinning, a
  point mass on ``UNSEEN``; at pinning, uniform over the interior cells the generator may use:
  not within Manhattan distance 1 of the start (minigrid's ``reject_next_to`` rejects d < 2),
  not the agent's cell, not a cell seen empty, wall or holding another object; later
  observations rule cells out the same way; a sighting is a point mass; a pickup puts it in
  the inventory.
- Queries (C.4): ``where is`` (in the seed's authors' words, :meth:`BabyAIAdapter.where`),
  ``map``, ``what is at <place>``, ``searched <place>``, ``what have I seen``, ``state``;
  places are egocentric ("2 steps forward and 1 step left", "front", "here").
- WALL-E (C.5): :data:`statelab.worldmodels.rules.BABYAI_RULES`, on the current view.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from statelab.core import Observation
from statelab.facts.egoview import (
    DOOR,
    EMPTY,
    WALL,
    EgoViewFacts,
    thing,
)
from statelab.facts.egoview import (
    UNSEEN as UNSEEN_IDX,
)
from statelab.worldmodels import queries as Q
from statelab.worldmodels.adapters import Adapter, register_adapter
from statelab.worldmodels.adapters._babyai_text import (
    bare,
    direction,
    holds,
    parse_place,
    relative,
    wall_ray,
)
from statelab.worldmodels.belief import INVENTORY, UNSEEN, Belief, uniform
from statelab.worldmodels.rules import BABYAI_RULES, first_failure, free

#: BabyAI's room: the interior side (the walls are one cell further out)
INTERIOR = 6
FORWARD = {0: (0, 1), 1: (1, 0), 2: (0, -1), 3: (-1, 0)}
HEADINGS = ("start-forward", "start-right", "start-back", "start-left")
GLYPHS = "^>v<"
#: how many candidate cells ``where is`` names, nearest first
NEAREST = 5
#: the directions ``where is`` gives the mass by, in the order ties keep
DIRECTIONS = ("in front of you", "behind you", "to your left", "to your right", "under you")
#: a direction's mass is said when above this
MASS_SHOWN = 0.04
_REFERENT = re.compile(r"\b(red|green|blue|purple|yellow|grey) (key|ball|box)\b")

Pos = tuple[int, int]


@dataclass
class Cell:
    kind: str  # empty, wall, door, object
    name: str = ""
    last_seen: int = 0
    visited: bool = False


def atom(p: Pos) -> str:
    return f"{p[0]},{p[1]}"


def pos_of(a: str) -> Pos:
    x, y = a.split(",")
    return int(x), int(y)


def _norm(action: str) -> str:
    return " ".join(action.strip().rstrip(".").lower().split())


class BabyAIAdapter(Adapter):
    other = "cells"

    def __init__(self, obs: Observation, prior: str = "uniform") -> None:
        super().__init__(obs, prior)
        self.x, self.y, self.h = 0, 0, 0
        self.t = 0
        self.cells: dict[Pos, Cell] = {(0, 0): Cell("empty", visited=True)}
        self.objects: dict[str, Pos | str] = {}
        #: where ``where is`` says a seen thing is, as the seed's model records it: the last
        #: two cells it was seen at (twins share a name) in the order seen, or the inventory
        self.sighted: dict[str, list[Pos | str]] = {}
        self.inventory: str | None = None
        self.walls: dict[int, tuple[int, int]] = {}  # axis (0 x, 1 y) -> (coordinate, sign)
        goal = (obs.goal or getattr(obs.facts, "mission", "")).lower()
        self.referents = list(dict.fromkeys(" ".join(m) for m in _REFERENT.findall(goal)))
        self._beliefs = {r: Belief(((UNSEEN, 1.0),)) for r in self.referents}
        self.facts: EgoViewFacts = obs.facts
        self._read(obs.facts)
        self._sight(obs.facts, "", None)

    # -- geometry -----------------------------------------------------------------------------
    def to_grid(self, ahead: int, right: int) -> Pos:
        fx, fy = FORWARD[self.h]
        rx, ry = FORWARD[(self.h + 1) % 4]
        return self.x + ahead * fx + right * rx, self.y + ahead * fy + right * ry

    def to_ego(self, p: Pos) -> tuple[int, int]:
        dx, dy = p[0] - self.x, p[1] - self.y
        fx, fy = FORWARD[self.h]
        rx, ry = FORWARD[(self.h + 1) % 4]
        return dx * fx + dy * fy, dx * rx + dy * ry

    def place(self, p: Pos) -> str:
        return relative(*self.to_ego(p))

    @property
    def pinned(self) -> bool:
        return len(self.walls) == 2

    def interior(self) -> list[Pos]:
        ranges = []
        for axis in (0, 1):
            coord, sign = self.walls[axis]
            ranges.append(
                range(coord - INTERIOR, coord)
                if sign > 0
                else range(coord + 1, coord + 1 + INTERIOR)
            )
        return [(x, y) for y in ranges[1] for x in ranges[0]]

    # -- reading observations ---------------------------------------------------------------
    def _read(self, f: EgoViewFacts) -> None:
        """One observation, as much of it as its text tells (the seed's model): the wall
        rays (the cells before the wall are empty) and the things in view; once the room is
        pinned, every visible cell (the view inside a known room follows from its walls)."""
        self.facts = f
        for ahead, right in ((1, 0), (0, -1), (0, 1)):
            n = wall_ray(f, -ahead, right)
            for i in range(1, n):
                self._write(self.to_grid(ahead * i, right * i), Cell("empty"), keep=True)
            if n:
                self._write(self.to_grid(ahead * n, right * n), Cell("wall"))
        self._cells(f, things_only=True)
        self._walls(f)
        if self.pinned:
            self._cells(f, things_only=False)
        self.cells[(self.x, self.y)] = Cell("empty", last_seen=self.t, visited=True)
        carried = f.carrying
        self.inventory = thing(carried) if carried is not None else None
        self._objects()
        self._update_beliefs()

    def _write(self, p: Pos, new: Cell, keep: bool = False) -> None:
        """Record ``new`` at ``p`` (seen now); ``keep``: a wall or thing already there stays."""
        old = self.cells.get(p)
        if keep and old is not None and old.kind != "empty":
            old.last_seen = self.t
            return
        new.last_seen, new.visited = self.t, bool(old and old.visited)
        self.cells[p] = new

    def _cells(self, f: EgoViewFacts, things_only: bool) -> None:
        ar, ac = f.agent
        for r, row in enumerate(f.cells):
            for c, cell in enumerate(row):
                if cell[0] == UNSEEN_IDX or (r, c) == (ar, ac):
                    continue
                p = self.to_grid(ar - r, c - ac)
                if cell[0] == DOOR:
                    self._write(p, Cell("door", thing(cell)))
                elif cell[0] not in (WALL, EMPTY) and not free(cell):
                    self._write(p, Cell("object", thing(cell)))
                elif things_only:
                    continue
                elif cell[0] == WALL:
                    self._write(p, Cell("wall"))
                else:
                    self._write(p, Cell("empty"))

    def _walls(self, f: EgoViewFacts) -> None:
        ar, ac = f.agent
        for ahead, right in ((1, 0), (0, -1), (0, 1)):
            n, r, c = 0, ar, ac
            while True:
                r, c, n = r - ahead, c + right, n + 1
                if not (0 <= r < len(f.cells) and 0 <= c < len(f.cells[0])):
                    break
                kind = f.cells[r][c][0]
                if kind in (EMPTY, UNSEEN_IDX):
                    continue
                if kind == WALL:
                    wx, wy = self.to_grid(ahead * n, right * n)
                    ux, uy = self.to_grid(ahead, right)
                    dx, dy = ux - self.x, uy - self.y
                    axis = 0 if dx else 1
                    coord = wx if axis == 0 else wy
                    self.walls.setdefault(axis, (coord, dx if axis == 0 else dy))
                break

    def _objects(self) -> None:
        objects: dict[str, Pos | str] = {}
        for name, p in self.objects.items():  # last known places not contradicted
            if isinstance(p, tuple) and self.cells.get(p, Cell("object", name)).name == name:
                objects[name] = p
        for p, cell in sorted(self.cells.items()):
            if cell.kind == "object" and cell.last_seen == self.t:
                objects[cell.name] = p
        if self.inventory is not None:
            objects[self.inventory] = INVENTORY
        self.objects = objects

    def ruled_out(self, name: str) -> set[str]:
        out = {
            atom(p) for p, c in self.cells.items() if not (c.kind == "object" and c.name == name)
        }
        return out | {atom((self.x, self.y))}

    def _update_beliefs(self) -> None:
        for r in self.referents:
            b = self._beliefs[r]
            known = self.objects.get(r)
            if known is not None:
                self._beliefs[r] = b.seen(known if isinstance(known, str) else atom(known))
            elif not self.pinned:
                self._beliefs[r] = Belief(((UNSEEN, 1.0),))
            else:
                if b.located_at is not None or UNSEEN in b.support:
                    b = self.cell_prior()
                self._beliefs[r] = b.absent(self.ruled_out(r))

    def cell_prior(self) -> Belief:
        """Uniform over the interior cells the generator may use (see the module doc)."""
        near_start = {p for p in self.interior() if abs(p[0]) + abs(p[1]) < 2}
        return uniform([atom(p) for p in self.interior() if p not in near_start])

    def update(self, action: str, obs: Observation, valid: bool) -> None:
        a = _norm(action)
        if valid:
            if a == "turn left":
                self.h = (self.h - 1) % 4
            elif a == "turn right":
                self.h = (self.h + 1) % 4
            elif a == "go forward":
                ar, ac = self.facts.agent
                if free(self.facts.cells[ar - 1][ac]):
                    self.x, self.y = self.to_grid(1, 0)
        self.t += 1
        if isinstance(obs.facts, EgoViewFacts):
            held = self.inventory
            self._read(obs.facts)
            if valid:
                self._sight(obs.facts, a, held)

    def _sight(self, f: EgoViewFacts, action: str, held: str | None) -> None:
        """Record the things in view in the text's order (column by column, left first),
        then a pickup (the inventory) or a drop (the cell in front)."""
        ar, ac = f.agent
        for c in range(len(f.cells[0])):
            for r in range(len(f.cells)):
                cell = f.cells[r][c]
                if (r, c) != (ar, ac) and (
                    cell[0] == DOOR or not (free(cell) or cell[0] in (WALL, UNSEEN_IDX))
                ):
                    self._seen_at(thing(cell), self.to_grid(ar - r, c - ac))
        if action == "pick up" and self.inventory is not None:
            self.sighted[self.inventory] = [INVENTORY]
        elif action == "drop" and held is not None and self.inventory is None:
            front = self.to_grid(1, 0)
            self._seen_at(held, front)
            self.sighted[held] = [p for p in self.sighted[held] if p != INVENTORY] or [front]

    def _seen_at(self, name: str, p: Pos) -> None:
        cells = [q for q in self.sighted.get(name, []) if q != INVENTORY]
        if p not in cells:
            cells.append(p)
        self.sighted[name] = cells[-2:]

    def beliefs(self) -> dict[str, Belief]:
        return dict(self._beliefs)

    # -- queries ----------------------------------------------------------------------------
    def query_forms(self) -> tuple[str, ...]:
        return (*(f"where is the {r}" for r in self.referents), "map", "what have I seen", "state")

    def answer(self, q: str, mode: str, rng: random.Random) -> str:
        query = Q.parse(q)
        if query.kind == "where":
            return self.where(query.arg, mode, rng)
        if query.kind == "map":
            return self.map()
        if query.kind == "state":
            carried = f"You carry a {self.inventory}." if self.inventory else "You carry nothing."
            return f"{carried}\n{self.map()}"
        if query.kind == "seen":
            return self.seen()
        if query.kind in ("at", "searched", "in"):
            p = parse_place(query.arg)
            if p is None:
                return (
                    f"Unknown place {query.arg!r}: say e.g. '2 steps forward and 1 step "
                    "left', 'front' or 'here'."
                )
            cell = self.to_grid(*p)
            if query.kind == "searched":
                return Q.searched(query.arg, cell in self.cells)
            return self.what_at(query.arg, cell)
        return Q.help_text(("where is <object>", "map", "what is at <place>", "searched <place>",
                            "what have I seen", "state"))  # fmt: skip

    def where(self, arg: str, mode: str, rng: random.Random) -> str:
        """The seed's answer (section C.4, its wording): held; seen at a place; before the
        room is pinned, not localized; else the count of candidate cells, the
        :data:`NEAREST` nearest and the mass by direction (each cell in the one direction
        it lies most along; "under you" for the agent's own cell; 4% or less left out)."""
        m = _REFERENT.search(arg)
        name = " ".join(m.groups()) if m else bare(arg)
        if self.inventory and holds(self.inventory, name):
            return f"You are holding the {name}."
        known = self.sighted.get(name)
        if known and isinstance(known[0], tuple):
            return f"The {name} is at {self.place(known[0])}."
        if mode == "memory":
            return f"{name} has not been observed yet. Explore to find it."
        if not self.pinned:
            return (f"The {name} has not been seen. The 6x6 room is not localized yet "
                    "(observe a wall in front and a wall to the left or right).")  # fmt: skip
        b = self._beliefs.get(name)
        if b is None or b.empty:
            return f"No candidate cells remain for the {name}."
        cells = [pos_of(a) for a, _ in b.dist]
        ego = {p: self.to_ego(p) for p in cells}
        cells.sort(key=lambda p: (abs(ego[p][0]) + abs(ego[p][1]), ego[p]))
        n = len(cells)
        count = f"{n} candidate cell{'s' if n != 1 else ''} remain"
        if mode == "noprob":
            places = [self.place(p) for p in cells]
            rng.shuffle(places)
            return f"The {name} has not been seen. {count}: {', '.join(places)}."
        nearest = ", ".join(self.place(p) for p in cells[:NEAREST])
        if n > NEAREST:
            nearest += f", and {n - NEAREST} farther cell{'s' if n - NEAREST != 1 else ''}"
        each = f"{b.prob(atom(cells[0])):.0%}"
        text = f"The {name} has not been seen. {count} (about {each} each). Nearest: {nearest}."
        mass = {d: 0.0 for d in DIRECTIONS}
        for p in cells:
            mass[direction(*ego[p])] += b.prob(atom(p))
        shown = sorted(((d, v) for d, v in mass.items() if v > MASS_SHOWN), key=lambda x: -x[1])
        if shown:
            text += " Mass is " + ", ".join(f"{d} ({v:.0%})" for d, v in shown) + "."
        return text

    def what_at(self, label: str, p: Pos) -> str:
        cell = self.cells.get(p)
        if cell is not None:
            fact = {"empty": "empty floor", "wall": "a wall"}.get(cell.kind, f"a {cell.name}")
            return f"{label}: {fact} (seen at step {cell.last_seen})."
        if self.pinned and any(atom(p) in b.support for b in self._beliefs.values()):
            return f"{label}: not observed yet; still a candidate."
        if self.pinned and p not in self.interior():
            return f"{label}: outside the room."
        if self.pinned:
            return f"{label}: not observed yet; ruled out."
        return f"{label}: not observed yet."

    def seen(self) -> str:
        if not self.objects:
            return "You have not seen any objects yet."
        parts = [
            f"{n}: {'carried' if p == INVENTORY else self.place(p)}"  # type: ignore[arg-type]
            for n, p in sorted(self.objects.items())
        ]
        return "You have seen: " + "; ".join(parts) + "."

    def map(self) -> str:
        if not self.pinned:
            return "The room is not localized yet: look for a wall ahead and a wall to one side."
        inside = self.interior()
        xs = sorted({p[0] for p in inside})
        ys = sorted({p[1] for p in inside})
        candidates = {a for b in self._beliefs.values() for a in b.support}
        letters: dict[str, str] = {}
        rows = []
        for y in range(ys[-1] + 1, ys[0] - 2, -1):
            row = []
            for x in range(xs[0] - 1, xs[-1] + 2):
                cell = self.cells.get((x, y))
                if (x, y) == (self.x, self.y):
                    row.append(GLYPHS[self.h])
                elif x not in xs or y not in ys or (cell and cell.kind == "wall"):
                    row.append("#")
                elif cell and cell.kind == "door":
                    row.append("D")
                elif cell and cell.kind == "object":
                    letters.setdefault(cell.name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[len(letters) % 26])
                    row.append(letters[cell.name])
                elif atom((x, y)) in candidates:
                    row.append("?")
                else:
                    row.append(".")
            rows.append("".join(row))
        named = ", ".join(f"{c} {n}" for n, c in letters.items())
        legend = (f"Legend: {GLYPHS[self.h]} you (facing {HEADINGS[self.h]}), # wall, "
                  f". empty or ruled out, ? candidate, D door{', ' + named if named else ''}. "
                  "Up is the way you faced at the start.")  # fmt: skip
        return "\n".join([*rows, legend])

    # -- WALL-E ---------------------------------------------------------------------------
    def front(self) -> tuple[int, int, int]:
        ar, ac = self.facts.agent
        return self.facts.cells[ar - 1][ac]

    def check(self, action: str, oracle: Callable[[str], bool] | None = None) -> str | None:
        return first_failure(BABYAI_RULES, self, _norm(action))


register_adapter("babyai", BabyAIAdapter)  # the envs declaring kind "babyai"

__all__ = ["BabyAIAdapter"]
