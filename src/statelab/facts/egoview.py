"""Egocentric grid views (BabyAI / MiniGrid): :class:`EgoViewFacts` and its formats.

- ``natural``: BabyAI-Text's sentences, as BALROG shows them (the env's own text), from
  :func:`describe`, our own describer of minigrid's egocentric view;
- ``symbolic``: one character per cell, the agent ``^`` at its place facing up, ``#`` wall,
  ``.`` empty floor, ``?`` unseen, a letter per kind of object, then a legend line;
- ``matrix``: a one-line key, then the cells as minigrid's ``[object, colour, state]`` codes,
  one row per line.

Everything here is a pure function of the facts (the facts of a minigrid env are built in
:mod:`statelab.envs._babyai_view`). The describer follows BabyAI-Text, the language wrapper
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
from dataclasses import dataclass
from typing import Any

import numpy as np
from minigrid.core.constants import IDX_TO_COLOR, IDX_TO_OBJECT, OBJECT_TO_IDX

from statelab.facts._formats import matrix, natural, symbolic

UNSEEN, EMPTY, WALL, DOOR = (OBJECT_TO_IDX[k] for k in ("unseen", "empty", "wall", "door"))
DOOR_STATES = {0: "open", 1: "closed", 2: "locked"}
#: world direction names of minigrid's ``agent_dir``
DIR_NAMES = ("east", "south", "west", "north")
#: the agent's glyph on a north-up map, by ``agent_dir``
DIR_GLYPHS = (">", "v", "<", "^")

Cell = tuple[int, int, int]
Cells = tuple[tuple[Cell, ...], ...]


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


# -- facts from minigrid's encoding ---------------------------------------------------------
def as_cells(rows: Any) -> Cells:
    return tuple(tuple((int(c[0]), int(c[1]), int(c[2])) for c in row) for row in rows.tolist())


def ego_view(image: np.ndarray, direction: int, mission: str = "") -> EgoViewFacts:
    """Facts from minigrid's partial view ``image`` (``gen_obs()["image"]``, indexed [x][y])."""
    size = image.shape[0]
    return EgoViewFacts(
        as_cells(image.transpose(1, 0, 2)), int(direction), mission, (size - 1, size // 2)
    )


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


# -- formats ------------------------------------------------------------------------------
@natural.register
def _(f: EgoViewFacts) -> str:
    """'a wall 2 steps forward\\na red ball 1 step left and 2 steps forward' ..."""
    return describe(f)


@symbolic.register
def _(f: EgoViewFacts) -> str:
    """'#######\\n...a...\\n...^...\\nLegend: ^ you (facing up), # wall, ..., a red ball'."""
    rows, legend = ascii_grid(f.cells, f.agent, "^", "facing up")
    carried = f.carrying
    tail = [f"You carry {a_thing(carried)}."] if carried is not None else []
    return "\n".join([*rows, legend, *tail])


MATRIX_KEY = (
    "Key: each cell is [object, colour, state]; object 0 unseen, 1 empty, 2 wall, 4 door, "
    "5 key, 6 ball, 7 box; colour 0 red, 1 green, 2 blue, 3 purple, 4 yellow, 5 grey; "
    "state of a door 0 open, 1 closed, 2 locked; you are at row {r}, column {c} (from 1), "
    "facing row 1, and your own cell holds what you carry."
)


@matrix.register
def _(f: EgoViewFacts) -> str:
    """Key line, then '[[[2,5,0],[1,0,0],...],\\n[...]]', one row of cells per line."""
    rows = ["[" + ",".join(f"[{a},{b},{c}]" for a, b, c in row) + "]" for row in f.cells]
    key = MATRIX_KEY.format(r=f.agent[0] + 1, c=f.agent[1] + 1)
    return key + "\n[" + ",\n".join(rows) + "]"
