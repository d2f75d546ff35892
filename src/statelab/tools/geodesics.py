"""Geodesics of the moving-car grid (seed 001, section 4.1 and appendix A.2).

The world's dynamics and its shortest-path search (breadth-first over (cell, time mod size))
live with the env, in :mod:`statelab.envs.traffic_world`; here the geodesics are sampled, cut
into five-step windows, and the collision-check tool replays tools against a state.

Partial information: :func:`sample_geodesics` plans, by default, with only the cars inside the
agent's observation window (half-size 10) at the start; cars outside it are unknown and are
**assumed absent** (the planner is optimistic about what it cannot see). ``half=None`` plans
with full car knowledge, as the seed's reference code does. Every sampled geodesic is
collision-free under the configuration it was planned with (``Geodesic.known``).

This module is pure (numpy only).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from statelab.envs.traffic_world import (
    TOOL_LEN,
    TrafficState,
    frontier_path,
    in_window,
    random_cars,
    replay,
    shortest_path,
    visible_cars,
)
from statelab.facts.traffic import Cell

#: this module's API, with the world's names the tool library works in
__all__ = ["Geodesic", "safe_tools", "sample_geodesics", "windows"]


# -- sampling --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Geodesic:
    """One sampled geodesic: its world, the cars the planner knew, the path and its window."""

    size: int
    start: Cell
    target: Cell
    cars: tuple[Cell, ...]  # the whole car configuration at time 0
    known: tuple[Cell, ...]  # the cars the planner saw (== cars under full information)
    actions: str  # the whole path, one letter per step
    offset: int  # start of the sampled five-step window

    @property
    def window(self) -> str:
        return self.actions[self.offset : self.offset + TOOL_LEN]

    def windows(self) -> list[str]:
        """Every five-step window of the path (sliding by one step)."""
        return [self.actions[i : i + TOOL_LEN] for i in range(len(self.actions) - TOOL_LEN + 1)]


def sample_geodesics(
    n: int = 250,
    seed: int = 0,
    size: int = 25,
    n_cars: int = 25,
    target: Cell | None = None,
    half: int | None = 10,
    random_ties: bool = True,
    ties: str | None = None,
) -> list[Geodesic]:
    """``n`` geodesics, each from a uniform start to ``target`` (default bottom-right) under
    a fresh uniform car configuration, planned with the cars visible within ``half`` of the
    start (``None``: all cars). Geodesics shorter than five steps, or with no path, are
    redrawn. Each keeps one uniformly drawn five-step window (``Geodesic.window``). Ties
    between equally short paths are broken at random (``random_ties``), so the sample covers
    the staircases as well as the L-shapes; everything is drawn from ``seed``.
    ``ties="frontier"`` plans as seed 001's code does (:func:`frontier_path`: the first
    predecessor in frontier order, all downs then all rights on an empty grid);
    ``ties="random"`` is ``random_ties``."""
    if ties is not None:
        if ties not in ("frontier", "random"):
            raise ValueError(f"ties {ties!r}; allowed: frontier, random")
        random_ties = ties == "random"
    rng = np.random.default_rng(seed)
    goal = target if target is not None else (size - 1, size - 1)
    out: list[Geodesic] = []
    while len(out) < n:
        start: Cell = goal
        while start == goal:
            start = (int(rng.integers(size)), int(rng.integers(size)))
        cars = random_cars(rng, size, n_cars, (start, goal))
        known = cars if half is None else tuple(c for c in cars if in_window(c, start, half))
        if ties == "frontier":
            path = frontier_path(size, known, start, goal)
        else:
            path = shortest_path(size, known, start, goal, rng=rng if random_ties else None)
        if path is None or len(path) < TOOL_LEN:
            continue
        offset = int(rng.integers(0, len(path) - TOOL_LEN + 1))
        out.append(Geodesic(size, start, goal, cars, known, path, offset))
    return out


def windows(geodesics: Sequence[Geodesic], all_windows: bool = False) -> list[str]:
    """The five-step windows, reset to a common origin (so just their action letters):
    one per geodesic (its sampled window) or, with ``all_windows``, every window."""
    if all_windows:
        return [w for g in geodesics for w in g.windows()]
    return [g.window for g in geodesics]


# -- collision check (seed 001, appendix A.2) --------------------------------------------------
def safe_tools(env_or_state: Any, tools: Iterable[str], visible_only: bool = True) -> list[str]:
    """The tools that do not hit a car, replaying each against a copy of the state.

    With ``visible_only`` (the seed's collision-check tool) only the cars inside the agent's
    observation window are replayed, the others are dropped: the verdict is the best
    conclusion from what is seen, not a guarantee (a car beyond the window, e.g. one about to
    wrap from the top row to the bottom, can still hit). A tool that reaches the target before
    any hit is safe (the episode ends there). ``env_or_state`` is a :class:`TrafficState` or
    anything with a ``state`` attribute holding one (the ``traffic`` env).
    """
    state: TrafficState = (
        env_or_state if isinstance(env_or_state, TrafficState) else env_or_state.state
    )
    if visible_only:
        state = replace(state, cars=visible_cars(state))
    return [t for t in tools if replay(state, t).collision_at is None]
