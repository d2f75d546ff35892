"""The facts of a minigrid env (BabyAI): the agent's partial view and the whole grid.

The env reads these; the facts and their renderers live in :mod:`statelab.facts.egoview`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from statelab.facts.egoview import (
    DIR_GLYPHS,
    DIR_NAMES,
    EMPTY,
    EgoViewFacts,
    a_thing,
    as_cells,
    ascii_grid,
    ego_view,
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
    cells = as_cells(np.rot90(world, k))
    return EgoViewFacts(cells, int(u.agent_dir), str(u.mission), (int(r), int(c)))


def full_map(env: Any, world: np.ndarray | None = None) -> str:
    """The whole grid as an ASCII map, north up, the agent an arrow (for oracle maps)."""
    u = env.unwrapped
    world = world_array(u) if world is None else world
    x, y = u.agent_pos
    d = int(u.agent_dir)
    rows, legend = ascii_grid(
        as_cells(world), (int(y), int(x)), DIR_GLYPHS[d], f"facing {DIR_NAMES[d]}; north is up"
    )
    carried = u.carrying
    tail = [f"You carry {a_thing(carried.encode())}."] if carried is not None else []
    return "\n".join([*rows, legend, *tail])
