"""Structured state kinds that environments emit and formats render.

Envs and formats meet here and nowhere else: an env says what kind of facts it has, a
format says which kinds it can render. Neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PegFacts:
    """Stacks on pegs (Tower of Hanoi). Each peg lists its disks bottom to top; 0 is smallest."""

    pegs: tuple[tuple[int, ...], ...]
    names: tuple[str, ...] = ("A", "B", "C")

    @property
    def n_disks(self) -> int:
        return sum(len(p) for p in self.pegs)


@dataclass(frozen=True)
class MessengerFacts:
    """An agent and named entities on a grid (Messenger).

    Positions are ``(x, y)``: ``x`` is the column counted from the west edge, ``y`` the row
    counted from the north edge, so ``(0, 0)`` is the north-west corner and moving south adds
    1 to ``y``. ``entities`` lists ``(name, (x, y))`` in an order that never depends on the
    entities' roles (which the manual alone tells). ``size`` is ``(width, height)``.
    """

    agent: tuple[int, int]
    has_message: bool
    entities: tuple[tuple[str, tuple[int, int]], ...]
    size: tuple[int, int] = (10, 10)


@dataclass(frozen=True)
class TrafficFacts:
    """The moving-car grid (seed 001) as the agent sees it at a decision point.

    Cells are ``(row, column)``, 0-based: ``(0, 0)`` is the top-left cell and rows grow
    downward. ``cars`` lists the distinct car cells inside the square window of half-size
    ``half`` centred on ``agent``; cells outside it are unknown, not empty (a ``half`` of at
    least ``size - 1`` shows every car). ``decision`` counts the decisions already taken.
    """

    size: int
    agent: tuple[int, int]
    target: tuple[int, int]
    cars: tuple[tuple[int, int], ...]
    half: int
    decision: int = 0

    def window_rows(self) -> tuple[str, ...]:
        """The window as text: A agent (X if hit), T target, C car, # wall/outside, . free."""
        (ar, ac), h, cars = self.agent, self.half, set(self.cars)
        rows = []
        for r in range(ar - h, ar + h + 1):
            line = ""
            for c in range(ac - h, ac + h + 1):
                if not (0 <= r < self.size and 0 <= c < self.size):
                    line += "#"
                elif (r, c) == self.agent:
                    line += "X" if (r, c) in cars else "A"
                else:
                    line += "C" if (r, c) in cars else "T" if (r, c) == self.target else "."
            rows.append(line)
        return tuple(rows)


@dataclass(frozen=True)
class EgoViewFacts:
    """A top-down grid seen from the agent (BabyAI / MiniGrid), cells as minigrid encodes them.

    ``cells[row][col]`` is ``(object, colour, state)`` in minigrid's integer codes
    (``minigrid.core.constants``): object 0 unseen, 1 empty, 2 wall, 3 floor, 4 door, 5 key,
    6 ball, 7 box, 8 goal, 9 lava; colour 0 red, 1 green, 2 blue, 3 purple, 4 yellow, 5 grey;
    state (doors) 0 open, 1 closed, 2 locked. Cells hidden behind walls or closed doors are
    unseen (0, 0, 0).

    The grid is egocentric: the agent stands at ``agent`` = (row, col) and faces row 0, so
    "forward" is up (lower rows), "left" lower columns, "right" higher columns. The cell under
    the agent holds what it carries (minigrid's convention), else it is empty. The 7x7 partial
    view has the agent at (6, 3), its bottom middle; a full map (privileged) is the whole grid
    turned the same way, with the agent wherever it stands.

    ``direction`` is where the agent faces in the world, minigrid's ``agent_dir``: 0 east,
    1 south, 2 west, 3 north (north is up on a map, towards smaller y).
    """

    cells: tuple[tuple[tuple[int, int, int], ...], ...]
    direction: int
    mission: str = ""
    agent: tuple[int, int] = (6, 3)

    @property
    def carrying(self) -> tuple[int, int, int] | None:
        """The encoding of the carried object, or None."""
        r, c = self.agent
        cell = self.cells[r][c]
        return cell if cell[0] > 2 else None


@dataclass(frozen=True)
class TextFacts:
    """A text game's state as the game says it (TextWorld, ALFWorld, ScienceWorld, Textcraft).

    ``text`` is the game's own observation; ``location`` and ``inventory`` are what the agent
    can know from its own observations, when the env can tell them (None/() otherwise).
    """

    text: str
    location: str | None = None
    inventory: tuple[str, ...] = ()
