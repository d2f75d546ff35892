"""Formats of egocentric grid views (BabyAI): ``natural``, ``symbolic`` and ``matrix``.

- ``natural``: BabyAI-Text's sentences, as BALROG shows them (the env's own text).
- ``symbolic``: one character per cell, the agent ``^`` at its place facing up, ``#`` wall,
  ``.`` empty floor, ``?`` unseen, a letter per kind of object, then a legend line.
- ``matrix``: a one-line key, then the cells as minigrid's ``[object, colour, state]`` codes,
  one row per line.
"""

from __future__ import annotations

from statelab.core._facts import EgoViewFacts
from statelab.envs._babyai_text import a_thing, ascii_grid, describe
from statelab.state.formats import matrix, natural, symbolic


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
