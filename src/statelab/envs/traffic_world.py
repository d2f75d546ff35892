"""The moving-car grid's world (seed 001, section 3 and appendix A.2): dynamics and planner.

The world: a ``size`` x ``size`` grid of (row, column) cells, (0, 0) top-left, rows growing
downward. Every car moves up one row per step and wraps from the top row to the bottom row;
the agent moves by one primitive action per step (``W`` wait, ``U``, ``D``, ``L``, ``R``),
does not wrap, and a move into the grid edge is absorbed (the agent stays). A collision is a
car entering the agent's cell, or the agent and a car swapping cells, on the same step.

Because cars are deterministic and periodic (period ``size``), shortest paths live in the
time-expanded grid: breadth-first search over (cell, time mod size), fewest timesteps first,
then fewest non-wait moves; ties go to the action order W, U, D, L, R. Revisiting a
(cell, time mod size) state later can never shorten a path, so the search is finite.

This module is pure (numpy only). The ``traffic`` env and its expert build on it, and so does
the geodesic tool library (:mod:`statelab.tools.geodesics`: sampling, collision check).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from statelab.facts.traffic import Cell

#: primitive actions in tie-break order, and their (drow, dcol)
PRIMITIVES: tuple[str, ...] = ("W", "U", "D", "L", "R")
DELTAS: dict[str, Cell] = {"W": (0, 0), "U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
#: decision length: each tool / decision is five primitive actions
TOOL_LEN = 5


# -- dynamics --------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrafficState:
    """Everything needed to simulate: grid size, agent, target, car cells, window half-size."""

    size: int
    agent: Cell
    target: Cell
    cars: tuple[Cell, ...]
    half: int = 10


def in_window(cell: Cell, centre: Cell, half: int) -> bool:
    """Whether ``cell`` lies in the (2*half+1)-square window centred on ``centre``."""
    return abs(cell[0] - centre[0]) <= half and abs(cell[1] - centre[1]) <= half


def visible_cars(state: TrafficState) -> tuple[Cell, ...]:
    """The cars inside the agent's observation window (the rest are unknown to it)."""
    return tuple(c for c in state.cars if in_window(c, state.agent, state.half))


def move_agent(agent: Cell, action: str, size: int) -> Cell:
    """One primitive move; moves into the edge are absorbed (no wrap for the agent)."""
    dr, dc = DELTAS[action]
    r, c = agent[0] + dr, agent[1] + dc
    return (r, c) if 0 <= r < size and 0 <= c < size else agent


def move_cars(cars: Sequence[Cell], size: int, steps: int = 1) -> tuple[Cell, ...]:
    """Cars after ``steps`` steps: up one row per step, wrapping from the top to the bottom."""
    return tuple(((r - steps) % size, c) for r, c in cars)


def collides(
    agent_old: Cell, agent_new: Cell, cars_old: Sequence[Cell], cars_new: Sequence[Cell]
) -> bool:
    """A car enters the agent's cell, or the agent and a car swap cells, on this step."""
    if agent_new in set(cars_new):
        return True
    return any(o == agent_new and n == agent_old for o, n in zip(cars_old, cars_new, strict=True))


@dataclass(frozen=True)
class Replay:
    """Outcome of playing primitive actions open-loop from a state."""

    cells: tuple[Cell, ...]  # agent cell after each executed action
    collision_at: int | None  # 1-based index of the action on which the agent was hit
    reached_at: int | None  # 1-based index of the action that put the agent on the target
    state: TrafficState  # state after the last executed action


def replay(state: TrafficState, actions: str, stop_at_target: bool = True) -> Replay:
    """Play ``actions`` from ``state``; stop at the first collision (and, by default, on
    reaching the target, which ends an episode). A collision on the step that reaches the
    target counts as a collision."""
    agent, cars = state.agent, state.cars
    cells: list[Cell] = []
    hit = reached = None
    for i, a in enumerate(actions, 1):
        new_agent, new_cars = move_agent(agent, a, state.size), move_cars(cars, state.size)
        crash = collides(agent, new_agent, cars, new_cars)
        agent, cars = new_agent, new_cars
        cells.append(agent)
        if crash:
            hit = i
            break
        if agent == state.target and reached is None:
            reached = i
            if stop_at_target:
                break
    return Replay(tuple(cells), hit, reached, replace(state, agent=agent, cars=cars))


# -- time-expanded breadth-first search ------------------------------------------------------
_INF = np.iinfo(np.int32).max // 4
_DELTA_ROWS: tuple[Cell, ...] = tuple(DELTAS[a] for a in PRIMITIVES)


def _occupancy(size: int, cars: Iterable[Cell]) -> np.ndarray:
    """occ[k, r, c]: a car is on (r, c) k steps from now (k in 0..size-1, periodic)."""
    occ0 = np.zeros((size, size), dtype=bool)
    for r, c in cars:
        occ0[r, c] = True
    rows = (np.arange(size)[:, None] + np.arange(size)[None, :]) % size  # [k, r] -> r + k
    return occ0[rows]


def _search(
    size: int,
    cars: Sequence[Cell],
    start: Cell,
    target: Cell,
    max_steps: int | None,
    rng: np.random.Generator | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Layered BFS. Returns per-layer move counts (``_INF`` = unreachable) and parent actions;
    stops at the first layer holding the target, when no new state appears, or after
    ``max_steps`` layers. Equal-cost parents are taken in the order W, U, D, L, R, or in a
    fresh random order per layer when ``rng`` is given."""
    n = size
    occ = _occupancy(n, cars)
    # swap[i, r]: a car on destination row r now is on the source row of action i next step
    swap = np.array(
        [[dc == 0 and (r - 1) % n == r - dr for r in range(n)] for dr, dc in _DELTA_ROWS]
    )
    # blocked[k, i, r, c]: arriving on (r, c) by action i from time k to k + 1 collides
    blocked = np.roll(occ, -1, axis=0)[:, None] | (occ[:, None] & swap[None, :, :, None])
    step_cost = np.array([0 if a == "W" else 1 for a in PRIMITIVES], dtype=np.int32)
    step_cost = step_cost[:, None, None]
    visited = np.zeros((n, n, n), dtype=bool)
    best = np.full((n, n), _INF, dtype=np.int32)
    best[start] = 0
    visited[0][start] = True
    pad = np.full((n + 2, n + 2), _INF, dtype=np.int32)
    views = [pad[1 - dr : n + 1 - dr, 1 - dc : n + 1 - dc] for dr, dc in _DELTA_ROWS]
    order = np.arange(len(PRIMITIVES))
    layers, parents = [best], []
    limit = max_steps if max_steps is not None else n * n * n
    for k in range(limit):
        if best[target] < _INF:
            break
        pad[1:-1, 1:-1] = best  # views[i][q] == best[q - delta_i], _INF off the grid
        costs = np.stack(views) + step_cost
        costs[blocked[k % n]] = _INF
        if rng is not None:
            order = rng.permutation(len(PRIMITIVES))
        ranked = costs[order]
        cand = ranked.min(axis=0)
        fresh = (cand < _INF) & ~visited[(k + 1) % n]
        if not fresh.any():
            break
        visited[(k + 1) % n] |= fresh
        best = np.where(fresh, cand, _INF).astype(np.int32)
        layers.append(best)
        parents.append(order[ranked.argmin(axis=0)].astype(np.int8))
    return layers, parents


def frontier_path(size: int, cars: Sequence[Cell], start: Cell, target: Cell) -> str | None:
    """A geodesic as seed 001's code finds it: a layered search over (cell, time mod size),
    fewest steps then fewest non-wait moves, where ties keep the *first* predecessor met in
    frontier order (states in the order they were reached, actions in the order W, U, D, L,
    R). On an empty grid this gives all downs then all rights. None when unreachable."""
    if start == target:
        return ""
    n = size
    occ = _occupancy(n, cars)
    swap = np.array(
        [[dc == 0 and (r - 1) % n == r - dr for r in range(n)] for dr, dc in _DELTA_ROWS]
    )
    blocked = np.roll(occ, -1, axis=0)[:, None] | (occ[:, None] & swap[None, :, :, None])
    first = (start, 0)
    settled = {first}
    parent: dict[tuple[Cell, int], tuple[tuple[Cell, int], str]] = {}
    frontier: dict[tuple[Cell, int], int] = {first: 0}
    while frontier:
        goals = [st for st in frontier if st[0] == target]
        if goals:
            cur = min(goals, key=lambda st: frontier[st])
            letters: list[str] = []
            while cur != first:
                cur, a = parent[cur]
                letters.append(a)
            return "".join(reversed(letters))
        nxt: dict[tuple[Cell, int], tuple[int, tuple[tuple[Cell, int], str]]] = {}
        for (pos, t), moves in frontier.items():
            block = blocked[t]
            for i, a in enumerate(PRIMITIVES):
                dr, dc = DELTAS[a]
                r, c = pos[0] + dr, pos[1] + dc
                if not (0 <= r < n and 0 <= c < n) or block[i, r, c]:
                    continue
                state = ((r, c), (t + 1) % n)
                if state in settled:
                    continue
                cost = moves + (a != "W")
                best = nxt.get(state)
                if best is None or cost < best[0]:
                    nxt[state] = (cost, ((pos, t), a))
        for state, (_cost, par) in nxt.items():
            settled.add(state)
            parent[state] = par
        frontier = {st: cost for st, (cost, _par) in nxt.items()}
    return None


def _unwind(parents: list[np.ndarray], cell: Cell) -> str:
    letters: list[str] = []
    r, c = cell
    for par in reversed(parents):
        a = PRIMITIVES[int(par[r, c])]
        letters.append(a)
        r, c = r - DELTAS[a][0], c - DELTAS[a][1]
    return "".join(reversed(letters))


def shortest_path(
    size: int,
    cars: Sequence[Cell],
    start: Cell,
    target: Cell,
    max_steps: int | None = None,
    rng: np.random.Generator | None = None,
) -> str | None:
    """A geodesic from ``start`` to ``target`` as action letters, cars at their current cells;
    None when the target cannot be reached (within ``max_steps`` steps when given).

    Among the geodesics (fewest steps, then fewest non-wait moves) the choice is made step by
    step from the end: the last action is the first of W, U, D, L, R that ends an optimal path
    (so a clear diagonal run comes out as all rights then all downs), or, given ``rng``, a
    random one (staircases and L-shapes alike)."""
    if start == target:
        return ""
    layers, parents = _search(size, cars, start, target, max_steps, rng)
    if layers[-1][target] >= _INF:
        return None
    return _unwind(parents, target)


def best_effort(size: int, cars: Sequence[Cell], start: Cell, target: Cell, horizon: int) -> str:
    """The geodesic's first ``horizon`` actions when one exists; otherwise a ``horizon``-step
    path that survives as long as possible and ends nearest the target. Padded with waits."""
    path = shortest_path(size, cars, start, target)
    if path is None:
        layers, parents = _search(size, cars, start, target, horizon)
        last = layers[-1]
        rs, cs = np.nonzero(last < _INF)
        dist = np.abs(rs - target[0]) + np.abs(cs - target[1])
        i = int(np.argmin(dist))
        path = _unwind(parents, (int(rs[i]), int(cs[i])))
    return (path[:horizon] + "W" * horizon)[:horizon]


# -- world generation -----------------------------------------------------------------------
def random_cars(
    rng: np.random.Generator, size: int, n_cars: int, avoid: Iterable[Cell]
) -> tuple[Cell, ...]:
    """``n_cars`` cells uniform on the grid, never on ``avoid``; cars may share a cell."""
    banned = set(avoid)
    cars: list[Cell] = []
    while len(cars) < n_cars:
        r, c = (int(x) for x in rng.integers(0, size, 2))
        if (r, c) not in banned:
            cars.append((r, c))
    return tuple(cars)
