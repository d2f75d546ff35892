"""Where a household task's object starts (ALFWorld's rules) and the seed-004 Zipf law: one
definition (``statelab.envs._household_prior``) read by the generator and the belief."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

pytest.importorskip("alfworld")

from statelab.core import Observation
from statelab.envs import _household_gen as gen
from statelab.envs import _household_prior as prior
from statelab.worldmodels.adapters.household import HouseholdAdapter

TEST = range(gen.TEST_START, gen.TEST_START + 134)


def test_zipf_ranks_are_the_authors_table():
    """One seeded shuffle (seed 20260923) over object types in sorted order reproduces the
    authors' ``wm/zipf_ranks.json`` (entries copied from it)."""
    ranks = prior.zipf_ranks()
    assert len(ranks) == 61
    assert ranks["spraybottle"] == (
        "sidetable", "toilet", "cart", "desk", "coffeetable", "dresser", "shelf",
        "diningtable", "cabinet", "drawer", "garbagecan", "countertop",
    )  # fmt: skip
    assert ranks["egg"][:3] == ("garbagecan", "diningtable", "coffeetable")
    assert ranks["pillow"] == ("bed", "sofa", "ottoman", "armchair")
    assert ranks["towel"] == ("towelholder",) and ranks["plunger"] == ("cabinet", "cart")


def test_type_weights_keep_the_rank_in_the_full_list():
    # spraybottle: toilet is rank 2, cart rank 3, whatever else is in the room
    w = prior.zipf_type_weights("spraybottle", {"toilet", "cart", "bed"})
    a, b = 2**-1.25, 3**-1.25
    assert w == pytest.approx({"toilet": a / (a + b), "cart": b / (a + b)})
    assert prior.zipf_type_weights("spraybottle", {"toilet"}, exclude={"toilet"}) == {}


def test_zipf_prior_splits_a_types_mass_over_its_instances_and_drops_the_goal():
    rooms = ["sidetable 1", "sidetable 2", "toilet 1", "cart 1", "bed 1"]
    p = prior.zipf_prior("spraybottle", rooms)
    w = [1, 2**-1.25, 3**-1.25]
    assert p == pytest.approx({
        "sidetable 1": w[0] / 2 / sum(w), "sidetable 2": w[0] / 2 / sum(w),
        "toilet 1": w[1] / sum(w), "cart 1": w[2] / sum(w),
    })  # fmt: skip
    dropped = prior.zipf_prior("spraybottle", rooms, exclude={"sidetable"})
    assert set(dropped) == {"toilet 1", "cart 1"}
    # nothing ranked is left: equal mass on what is not excluded
    assert prior.zipf_prior("towel", ["bed 1", "toilet 1"], {"toilet"}) == {"bed 1": 1.0}


def test_uniform_prior_includes_the_goals_type_and_the_appliance():
    rooms = ["countertop 1", "fridge 1", "microwave 1", "cabinet 1"]
    assert prior.uniform_prior("apple", rooms) == pytest.approx(
        {"countertop 1": 1 / 3, "fridge 1": 1 / 3, "microwave 1": 1 / 3}
    )
    # a desk lamp is not in ALFWorld's placement table: equal mass everywhere
    assert set(prior.uniform_prior("desklamp", rooms)) == set(rooms)


def test_alfworlds_start_rules():
    assert prior.never_starts_in("pick_and_place", "safe") == {"safe"}
    assert prior.never_starts_in("picktwo", "safe") == {"safe"}
    assert prior.never_starts_in("heat", "garbagecan") == {"microwave"}
    assert prior.never_starts_in("clean", "cabinet") == {"sinkbasin"}
    assert prior.never_starts_in("look", "desklamp") == frozenset()
    assert prior.zipf_exclusions("heat", "garbagecan") == {"garbagecan"}
    assert prior.zipf_exclusions("look", "desklamp") == frozenset()


def test_draw_is_a_type_by_weight_then_a_uniform_instance():
    rng, counts = random.Random(0), {"a 1": 0, "a 2": 0, "b 1": 0}
    for _ in range(4000):
        counts[prior.draw(rng, {"a": 0.75, "b": 0.25}, {"a": ["a 2", "a 1"], "b": ["b 1"]})] += 1
    assert abs(counts["b 1"] / 4000 - 0.25) < 0.02
    assert abs(counts["a 1"] - counts["a 2"]) < 150


def test_transform_objects_may_start_in_the_goals_type_never_in_the_appliance():
    """ALFWorld's sampler: of the 149 clean / heat / cool objects of train seeds 0-179, 23
    start in a receptacle of the goal's type, none in the appliance."""
    inside = appliance = n = 0
    for seed in range(0, 180):
        t = gen.task_type_of(seed)
        k = gen.task_index(t)
        if k not in gen.APPLIANCE:
            continue
        m = gen.generate(seed, t)["statelab"]
        for o, ot in m["objects"].items():
            if ot == m["object_type"]:
                rt = m["receptacles"][m["placements"][o]]
                n, inside = n + 1, inside + (rt == m["receptacle_type"])
                appliance += rt == gen.APPLIANCE[k]
    assert (n, inside, appliance) == (149, 23, 0)


def test_zipf_games_draw_the_object_by_the_authors_law():
    """Every Zipf-placed target of the test split is in a type the law gives mass (never the
    goal's type of a put game, so none is won at the start), and the drawn types' mean weight
    is what drawing by the weights gives (sum of squared weights), well above a uniform draw
    over types."""
    seen = expected = flat = 0.0
    count = 0
    for seed in TEST:
        t = gen.task_type_of(seed)
        k = gen.task_index(t)
        m = gen.generate(seed, t, "zipf")["statelab"]
        present = {n.rsplit(" ", 1)[0] for n in m["receptacles"]}
        dest = m["receptacle_type"].lower()
        w = prior.zipf_type_weights(
            m["object_type"], present, prior.zipf_exclusions(gen.ACTS[k], dest)
        )
        for o, ot in m["objects"].items():
            if ot != m["object_type"]:
                continue
            rt = m["placements"][o].rsplit(" ", 1)[0]
            assert rt in w and (k == 1 or rt != dest), (seed, o, rt)
            seen, expected = seen + w[rt], expected + sum(v * v for v in w.values())
            flat, count = flat + 1 / len(w), count + 1
    assert abs(seen - expected) / count < 0.03 and (seen - flat) / count > 0.1


def test_uniform_and_zipf_games_differ_only_in_the_targets_place():
    for seed in (TEST[0], TEST[1], 7):
        t = gen.task_type_of(seed)
        u, z = gen.generate(seed, t)["statelab"], gen.generate(seed, t, "zipf")["statelab"]
        same = {o for o, ot in u["objects"].items() if ot != u["object_type"]}
        assert {o: u["placements"][o] for o in same} == {o: z["placements"][o] for o in same}


#: sha256 (first 16 hex) of json.dumps(generate(...), sort_keys=True), recorded with the
#: generator before ALFWorld's start rules: ``starts="apart"`` still writes those games
APART = {
    (0, "uniform", "alfworld"): "c0659abdf3ca13d8",
    (9, "zipf", "alfworld"): "f9100e2c47591b9e",
    (100003, "uniform", "alfworld"): "417d34e7ab3ebfe2",
    (100004, "zipf", "alfworld"): "3c858d9b8ed50e20",
    (2, "uniform", "alfred"): "6d811ef1bbbd9246",
    (100005, "zipf", "alfred"): "c57179b711a52780",
}


@pytest.mark.parametrize(("seed", "placement", "rooms"), sorted(APART))
def test_starts_apart_writes_the_earlier_games(seed, placement, rooms):
    data = gen.generate(seed, gen.task_type_of(seed, rooms), placement, rooms, "apart")
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
    assert digest == APART[seed, placement, rooms]


ROOM = (
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a "
    "countertop 1, a countertop 2, a fridge 1, a garbagecan 1, a microwave 1, and a "
    "sinkbasin 1.\n\nYour task is to: {goal}."
)


@pytest.mark.parametrize("goal", ["heat some egg and put it in garbagecan", "put a egg in fridge"])
def test_the_belief_prior_is_the_generators_law(goal):
    obs = Observation(ROOM.format(goal=goal), None, None, goal)
    names = [
        "cabinet 1", "countertop 1", "countertop 2", "fridge 1", "garbagecan 1", "microwave 1",
        "sinkbasin 1",
    ]  # fmt: skip
    dest = goal.rsplit(" ", 1)[-1]
    uniform = HouseholdAdapter(obs, "uniform")
    (b,) = uniform.beliefs().values()
    assert dict(b.dist) == prior.uniform_prior("egg", names)
    assert {"garbagecan 1", "microwave 1", "fridge 1"} <= b.support  # goal's type, appliance
    zipf = HouseholdAdapter(obs, "zipf")
    (z,) = zipf.beliefs().values()
    assert dict(z.dist) == prior.zipf_prior("egg", names, {dest})
    assert dest + " 1" not in z.support and "microwave 1" in z.support
