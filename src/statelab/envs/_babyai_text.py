"""BabyAI text as BALROG plays it: our own describer of minigrid's egocentric view.

Everything here is a pure function of :class:`~statelab.core._facts.EgoViewFacts` (or of a
minigrid env, to build those facts). The describer follows BabyAI-Text, the language wrapper
BALROG uses, one line per item, in this order:

- ``You carry a <colour> <type>.`` when the agent holds something;
- ``a wall N steps forward`` / ``left`` / ``right`` (and ``back`` on a full map) when the first
  cell that is neither empty floor nor unseen along that straight line is a wall;
- every other visible thing, column by column from the left, far rows first:
  ``a <colour> <type> 2 steps left and 1 step forward`` (sideways part first), or
  ``3 steps forward`` / ``1 step right`` when it lies on the agent's column / row. Doors read
  ``a closed <colour> door``, ``a locked <colour> door``, ``an open <colour> door``.

Directions are egocentric: forward is where the agent faces, left and right are the agent's
own. The cell right in front of the agent is ``1 step forward``. Unseen cells (behind walls
or closed doors) are never described.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from minigrid.core.constants import IDX_TO_COLOR, IDX_TO_OBJECT, OBJECT_TO_IDX

from statelab.core._facts import EgoViewFacts

UNSEEN, EMPTY, WALL, DOOR = (OBJECT_TO_IDX[k] for k in ("unseen", "empty", "wall", "door"))
DOOR_STATES = {0: "open", 1: "closed", 2: "locked"}
#: world direction names of minigrid's ``agent_dir``
DIR_NAMES = ("east", "south", "west", "north")
#: the agent's glyph on a north-up map, by ``agent_dir``
DIR_GLYPHS = (">", "v", "<", "^")

Cell = tuple[int, int, int]
Cells = tuple[tuple[Cell, ...], ...]


# -- facts from a minigrid env ---------------------------------------------------------------
def _as_cells(rows: Any) -> Cells:
    return tuple(tuple((int(c[0]), int(c[1]), int(c[2])) for c in row) for row in rows.tolist())


def ego_view(image: np.ndarray, direction: int, mission: str = "") -> EgoViewFacts:
    """Facts from minigrid's partial view ``image`` (``gen_obs()["image"]``, indexed [x][y])."""
    size = image.shape[0]
    return EgoViewFacts(
        _as_cells(image.transpose(1, 0, 2)), int(direction), mission, (size - 1, size // 2)
    )


def ego_view_of(env: Any) -> EgoViewFacts:
    """The agent's partial view of a minigrid env, as minigrid's ``gen_obs()`` encodes it."""
    u = env.unwrapped
    return ego_view(u.gen_obs()["image"], u.agent_dir, str(u.mission))


def world_array(env: Any, encoded: np.ndarray | None = None) -> np.ndarray:
    """The whole grid, row-major ([y][x]), nothing hidden, the carried object under the agent.

    ``encoded`` is ``grid.encode()`` when the caller already has it.
    """
    u = env.unwrapped
    full = (u.grid.encode() if encoded is None else encoded).copy()
    x, y = u.agent_pos
    full[x, y] = u.carrying.encode() if u.carrying is not None else (EMPTY, 0, 0)
    return np.ascontiguousarray(full.transpose(1, 0, 2))


def full_view_of(env: Any, world: np.ndarray | None = None) -> EgoViewFacts:
    """The whole grid turned so the agent faces up (the truth an oracle may read)."""
    u = env.unwrapped
    world = world_array(u) if world is None else world
    k = (int(u.agent_dir) + 1) % 4  # quarter turns counter-clockwise that bring "ahead" up
    marker = np.zeros(world.shape[:2], dtype=bool)
    marker[u.agent_pos[1], u.agent_pos[0]] = True
    r, c = np.argwhere(np.rot90(marker, k))[0]
    cells = _as_cells(np.rot90(world, k))
    return EgoViewFacts(cells, int(u.agent_dir), str(u.mission), (int(r), int(c)))


# -- words ----------------------------------------------------------------------------------
def thing(cell: Sequence[int]) -> str:
    """'red ball', 'locked blue door', 'open green door'."""
    kind, colour, state = cell
    name = f"{IDX_TO_COLOR[colour]} {IDX_TO_OBJECT[kind]}"
    return f"{DOOR_STATES[state]} {name}" if kind == DOOR else name


def a_thing(cell: Sequence[int]) -> str:
    t = thing(cell)
    return ("an " if t[0] in "aeiou" else "a ") + t


def steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def where(ahead: int, right: int) -> str:
    """An offset in words, sideways part first: '2 steps left and 1 step forward'."""
    side = f"{steps(abs(right))} {'right' if right > 0 else 'left'}" if right else ""
    front = f"{steps(abs(ahead))} {'forward' if ahead > 0 else 'back'}" if ahead else ""
    return " and ".join(p for p in (side, front) if p)


_LINES = (("forward", -1, 0), ("left", 0, -1), ("right", 0, 1), ("back", 1, 0))


def _wall_at(cells: Cells, row: int, col: int, dr: int, dc: int) -> int:
    """Steps to a wall along (dr, dc) when it is the first thing on that line, else 0."""
    n = 0
    while True:
        row, col, n = row + dr, col + dc, n + 1
        if not (0 <= row < len(cells) and 0 <= col < len(cells[0])):
            return 0
        kind = cells[row][col][0]
        if kind in (EMPTY, UNSEEN):
            continue
        return n if kind == WALL else 0


def describe(f: EgoViewFacts) -> str:
    """The view in words, one item per line (see the module docstring)."""
    lines: list[str] = []
    carried = f.carrying
    if carried is not None:
        lines.append(f"You carry {a_thing(carried)}.")
    ar, ac = f.agent
    for name, dr, dc in _LINES:
        n = _wall_at(f.cells, ar, ac, dr, dc)
        if n:
            lines.append(f"a wall {steps(n)} {name}")
    for c in range(len(f.cells[0])):
        for r in range(len(f.cells)):
            cell = f.cells[r][c]
            if cell[0] in (UNSEEN, EMPTY, WALL) or (r, c) == f.agent:
                continue
            lines.append(f"{a_thing(cell)} {where(ar - r, c - ac)}")
    return "\n".join(lines) if lines else "You see nothing but empty floor."


# -- ASCII grids ----------------------------------------------------------------------------
_FIXED = {UNSEEN: "?", EMPTY: ".", WALL: "#"}
_FIXED_NAMES = (("#", "wall"), (".", "empty floor"), ("?", "unseen"))
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def ascii_grid(cells: Cells, agent: tuple[int, int], glyph: str, you: str) -> tuple[list[str], str]:
    """Rows of one character per cell and the legend line.

    ``#`` wall, ``.`` empty floor, ``?`` unseen, ``glyph`` the agent; each other kind of thing
    gets a letter in reading order (a, b, c ...), the same letter for the same description.
    The legend names the agent, then the fixed symbols that occur, then the letters.
    """
    letters: dict[str, str] = {}
    rows: list[str] = []
    for r, row in enumerate(cells):
        out = []
        for c, cell in enumerate(row):
            if (r, c) == agent:
                out.append(glyph)
            elif cell[0] in _FIXED:
                out.append(_FIXED[cell[0]])
            else:
                name = thing(cell)
                if name not in letters:
                    letters[name] = _LETTERS[len(letters) % len(_LETTERS)]
                out.append(letters[name])
        rows.append("".join(out))
    seen = set("".join(rows))
    fixed = [f"{ch} {name}" for ch, name in _FIXED_NAMES if ch in seen]
    named = [f"{ch} {name}" for name, ch in letters.items()]
    legend = ", ".join([f"{glyph} you ({you})", *fixed, *named])
    return rows, f"Legend: {legend}"


def full_map(env: Any, world: np.ndarray | None = None) -> str:
    """The whole grid as an ASCII map, north up, the agent an arrow (for oracle maps)."""
    u = env.unwrapped
    world = world_array(u) if world is None else world
    x, y = u.agent_pos
    d = int(u.agent_dir)
    rows, legend = ascii_grid(
        _as_cells(world), (int(y), int(x)), DIR_GLYPHS[d], f"facing {DIR_NAMES[d]}; north is up"
    )
    carried = u.carrying
    tail = [f"You carry {a_thing(carried.encode())}."] if carried is not None else []
    return "\n".join([*rows, legend, *tail])
