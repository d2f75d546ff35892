import heapq

import numpy as np
import pytest

from statelab.envs.traffic import TrafficEnv
from statelab.envs.traffic_world import (
    PRIMITIVES,
    TrafficState,
    best_effort,
    collides,
    in_window,
    move_agent,
    move_cars,
    random_cars,
    replay,
    shortest_path,
)
from statelab.tools.geodesics import safe_tools, sample_geodesics, windows
from statelab.tools.quantize import PRIMITIVE_TOOLS


def dijkstra(size, cars, start, target):
    """Reference: Dijkstra on (cell, time mod size) with cost (steps, non-wait moves), every
    action tried (absorbed ones too). Returns (steps, moves) or None."""
    period = size
    frontier = [(0, 0, start)]
    seen = set()
    while frontier:
        t, m, cell = heapq.heappop(frontier)
        if cell == target:
            return t, m
        if (cell, t % period) in seen:
            continue
        seen.add((cell, t % period))
        now = move_cars(cars, size, t)
        nxt = move_cars(cars, size, t + 1)
        for a in PRIMITIVES:
            new = move_agent(cell, a, size)
            if not collides(cell, new, now, nxt):
                heapq.heappush(frontier, (t + 1, m + (a != "W"), new))
    return None


def moves(path):
    return sum(a != "W" for a in path)


@pytest.mark.parametrize("size,n_cars", [(6, 3), (6, 8), (5, 10), (8, 12)])
def test_geodesics_match_a_brute_force_search(size, n_cars):
    rng = np.random.default_rng(size * 100 + n_cars)
    unreachable = 0
    for _ in range(60):
        start = (int(rng.integers(size)), int(rng.integers(size)))
        target = (int(rng.integers(size)), int(rng.integers(size)))
        if target == start:
            assert shortest_path(size, [], start, target) == ""
            continue
        cars = random_cars(rng, size, n_cars, (start, target))
        ref = dijkstra(size, cars, start, target)
        for tie_rng in (None, np.random.default_rng(1)):
            path = shortest_path(size, cars, start, target, rng=tie_rng)
            if ref is None:
                assert path is None
                unreachable += tie_rng is None
                continue
            assert path is not None and (len(path), moves(path)) == ref
            out = replay(TrafficState(size, start, target, cars), path)
            assert out.collision_at is None and out.reached_at == len(path)
    if n_cars >= 10:
        assert unreachable > 0  # dense grids exercise the no-path branch too


def test_small_cases_match_the_reference():
    for cars in ([(2, 1)], [(1, 1)], [(1, 1), (2, 2)], [(3, 0), (1, 2)]):
        path = shortest_path(6, cars, (0, 0), (0, 2))
        assert path is not None
        assert (len(path), moves(path)) == dijkstra(6, cars, (0, 0), (0, 2))
        assert replay(TrafficState(6, (0, 0), (0, 2), tuple(cars)), path).collision_at is None
    # the car below reaches (0, 1) at t = 2 while the agent leaves it: no collision
    assert shortest_path(6, [(2, 1)], (0, 0), (0, 2)) == "RR"


def test_best_effort_when_trapped():
    # agent in the top-left corner with cars right below it and below its right neighbour
    cars = [(1, 0), (1, 1)]
    assert shortest_path(6, cars, (0, 0), (5, 5)) is None
    move = best_effort(6, cars, (0, 0), (5, 5), 5)
    assert len(move) == 5 and set(move) <= set(PRIMITIVES)
    assert best_effort(6, [], (0, 0), (0, 2), 5) == "RRWWW"


def test_sampled_geodesics_are_collision_free_and_seeded():
    geos = sample_geodesics(60, seed=7)
    assert len(geos) == 60
    for g in geos:
        assert g.target == (24, 24) and g.start != g.target and len(g.cars) == 25
        assert set(g.known) <= set(g.cars)
        assert all(in_window(c, g.start, 10) for c in g.known)
        assert [c for c in g.cars if in_window(c, g.start, 10)] == list(g.known)
        out = replay(TrafficState(g.size, g.start, g.target, g.known), g.actions)
        assert out.collision_at is None and out.reached_at == len(g.actions)
        assert len(g.window) == 5 and g.window == g.actions[g.offset : g.offset + 5]
    assert [g.actions for g in sample_geodesics(60, seed=7)] == [g.actions for g in geos]
    assert [g.actions for g in sample_geodesics(60, seed=8)] != [g.actions for g in geos]
    ws = windows(geos)
    assert ws == [g.window for g in geos]
    every = windows(geos, all_windows=True)
    assert len(every) == sum(len(g.actions) - 4 for g in geos)


def test_full_information_sampling_on_a_small_grid():
    geos = sample_geodesics(30, seed=1, size=6, n_cars=3, half=None)
    for g in geos:
        assert g.known == g.cars and len(g.actions) >= 5
        assert (len(g.actions), moves(g.actions)) == dijkstra(6, g.cars, g.start, g.target)
        assert replay(TrafficState(6, g.start, g.target, g.cars), g.actions).collision_at is None


def test_safe_tools_never_offers_a_tool_that_hits_a_visible_car():
    rng = np.random.default_rng(0)
    tools = [*PRIMITIVE_TOOLS, "DRDRD", "RRRRR", "DDDDD", "DRRRR", "DDRDD"]
    offered = rejected = 0
    for _ in range(300):
        size = int(rng.integers(6, 26))
        agent = (int(rng.integers(size)), int(rng.integers(size)))
        cars = random_cars(rng, size, int(rng.integers(1, 40)), [agent])
        state = TrafficState(size, agent, (size - 1, size - 1), cars, half=int(rng.integers(2, 11)))
        extra = ["".join(rng.choice(list(PRIMITIVES), 5)) for _ in range(5)]
        safe = safe_tools(state, tools + extra)
        seen = TrafficState(
            size, agent, state.target, tuple(c for c in cars if in_window(c, agent, state.half))
        )
        for tool in tools + extra:
            hit = replay(seen, tool).collision_at is not None
            assert (tool in safe) == (not hit)
        offered += len(safe)
        rejected += len(tools) + len(extra) - len(safe)
    assert offered > 0 and rejected > 0


def test_safe_tools_sees_only_the_window():
    # the car on the top row wraps onto the agent on the bottom row: invisible, so "safe"
    state = TrafficState(25, (24, 3), (0, 0), ((0, 3),), half=10)
    assert "WWWWW" in safe_tools(state, ["WWWWW"])
    assert safe_tools(state, ["WWWWW", "LWWWW"], visible_only=False) == ["LWWWW"]


def test_safe_tools_accepts_the_env():
    env = TrafficEnv()
    env.reset(seed=0, options={"agent": (10, 10), "cars": [(11, 10), (13, 11)]})
    assert safe_tools(env, ["WWWWW", "DWWWW", "RWWWW", "LWWWW", "UWWWW"]) == ["LWWWW"]
    # a tool that reaches the target before any hit is safe
    env.reset(seed=0, options={"agent": (24, 23), "cars": [(0, 24)]})
    assert safe_tools(env, ["RWWWW"], visible_only=False) == []
    env.reset(seed=0, options={"agent": (24, 23), "cars": [(1, 24)]})
    assert safe_tools(env, ["RWWWW"], visible_only=False) == ["RWWWW"]


def test_frontier_ties_as_seed_001s_code():
    """Seed 001's code keeps the first predecessor met in frontier order: on an empty grid
    all downs then all rights; elsewhere a geodesic as short as ours and collision-free."""
    import numpy as np

    from statelab.envs.traffic_world import frontier_path, random_cars, shortest_path

    assert frontier_path(25, (), (0, 0), (24, 24)) == "D" * 24 + "R" * 24
    assert frontier_path(5, (), (4, 4), (4, 4)) == ""
    rng = np.random.default_rng(3)
    for _ in range(15):
        start = (int(rng.integers(20)), int(rng.integers(20)))
        cars = random_cars(rng, 25, 25, (start, (24, 24)))
        ours, theirs = (
            shortest_path(25, cars, start, (24, 24)),
            frontier_path(25, cars, start, (24, 24)),
        )
        assert (ours is None) == (theirs is None)
        if theirs:
            assert len(theirs) == len(ours)
            state = TrafficState(25, start, (24, 24), cars, half=10)
            assert replay(state, theirs).collision_at is None


def test_library_plans_with_every_car_and_frontier_ties_by_default():
    from statelab.agents import make_agent
    from statelab.facts import TrafficFacts
    from statelab.tools.library import LibrarySpec

    facts = TrafficFacts(25, (0, 0), (24, 24), (), 10)
    assert LibrarySpec.from_facts(facts) == LibrarySpec(half=None, ties="frontier")
    assert LibrarySpec.from_facts(facts, True, ties="random").half == 10
    o = make_agent("tools:cc+visible+random").options
    assert (o.visible, o.ties) == (True, "random")
    assert (make_agent("tools:cc").options.visible, make_agent("tools").options.ties) == (
        False,
        "frontier",
    )
