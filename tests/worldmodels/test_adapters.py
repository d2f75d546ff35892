"""The env adapters: along expert episodes the belief keeps positive mass on the true place
(privileged info read here, in the test, only); each WALL-E rule rejects and accepts."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from minigrid.core.constants import DIR_TO_VEC

from statelab.core import Observation
from statelab.envs import env_class, make_env
from statelab.facts.egoview import EgoViewFacts
from statelab.worldmodels._model import UNKNOWN_ENV
from statelab.worldmodels.adapters import adapter_for, claimed_kinds
from statelab.worldmodels.adapters._babyai_text import direction, parse_place, relative
from statelab.worldmodels.adapters.babyai import BabyAIAdapter, pos_of
from statelab.worldmodels.adapters.household import HouseholdAdapter, parse_goal
from statelab.worldmodels.belief import INVENTORY, UNSEEN


# -- BabyAI -----------------------------------------------------------------------------------
def _our_frame(p0, d0):
    """minigrid coordinates -> the adapter's grid (origin the start cell, +Y start-forward)."""
    f, r = DIR_TO_VEC[d0], DIR_TO_VEC[(d0 + 1) % 4]

    def conv(p):
        dx, dy = p[0] - p0[0], p[1] - p0[1]
        return int(dx * r[0] + dy * r[1]), int(dx * f[0] + dy * f[1])

    return conv


def _true_cells(env, conv, name):
    grid = env.level.grid
    out = set()
    for i in range(grid.width):
        for j in range(grid.height):
            o = grid.get(i, j)
            if o is not None and f"{o.color} {o.type}" == name:
                x, y = conv((i, j))
                out.add(f"{x},{y}")
    return out


@pytest.mark.parametrize("task", ["goto", "pickup", "putnext", "pickup-seq-goto"])
def test_babyai_belief_keeps_mass_on_the_true_cell_along_expert_episodes(task):
    env = make_env(f"babyai/{task}")
    pinned_some = False
    for seed in range(6):
        obs, info = env.reset(seed=seed)
        conv = _our_frame(info["privileged"]["agent_pos"], info["privileged"]["agent_dir"])
        ad = adapter_for(env.kind, obs)
        assert isinstance(ad, BabyAIAdapter)
        expert = env.expert()
        for _ in range(64):
            for name, b in ad.beliefs().items():
                carried = env.level.carrying
                if carried is not None and f"{carried.color} {carried.type}" == name:
                    truth = {INVENTORY}
                else:
                    truth = _true_cells(env, conv, name)
                if b.support != {UNSEEN}:
                    pinned_some = True
                    assert sum(b.prob(a) for a in truth) > 0, (task, seed, name, b, truth)
            # the pose the adapter tracks is the true one
            assert (ad.x, ad.y) == conv(env.level.agent_pos)
            action = expert.act(obs, info)
            obs, _, term, trunc, info = env.step(action)
            ad.update(action, obs, info.get("valid", True))
            if term or trunc:
                break
    assert pinned_some


def _facts_with_front(kind, carrying=None):
    cells = [[(1, 0, 0)] * 7 for _ in range(7)]
    cells[5][3] = kind
    if carrying:
        cells[6][3] = carrying
    return EgoViewFacts(tuple(tuple(r) for r in cells), 0, "go to the red ball")


def _babyai(front, carrying=None):
    f = _facts_with_front(front, carrying)
    return BabyAIAdapter(Observation("", f, None, "go to the red ball"))


WALL, EMPTY, BALL, KEY = (2, 5, 0), (1, 0, 0), (6, 0, 0), (5, 1, 0)


@pytest.mark.parametrize(
    ("action", "front", "carrying", "rejected"),
    [
        ("go forward", WALL, None, True),
        ("go forward", BALL, None, True),
        ("go forward", EMPTY, None, False),
        ("pick up", EMPTY, None, True),
        ("pick up", WALL, None, True),
        ("pick up", BALL, KEY, True),
        ("pick up", BALL, None, False),
        ("drop", EMPTY, None, True),
        ("drop", BALL, KEY, True),
        ("drop", EMPTY, KEY, False),
        ("toggle", EMPTY, None, True),
        ("toggle", WALL, None, False),
        ("go back", EMPTY, None, True),
        ("walk left 2 steps", EMPTY, None, True),
        ("turn left", WALL, None, False),
    ],
)
def test_each_babyai_walle_rule_rejects_and_accepts(action, front, carrying, rejected):
    feedback = _babyai(front, carrying).check(action)
    assert (feedback is not None) == rejected, feedback
    if action.startswith(("go back", "walk")):
        assert "turn left" in feedback and "go forward" in feedback


def test_babyai_places_are_egocentric():
    assert parse_place("front") == (1, 0)
    assert parse_place("2 steps forward and 1 step left") == (2, -1)
    assert parse_place("somewhere") is None


def test_babyai_where_is_before_the_room_is_pinned_asks_for_walls():
    ad = _babyai(EMPTY)
    assert "not localized" in ad.answer("where is the red ball", "belief", random.Random(0))
    assert ad.answer("map", "belief", random.Random(0)).startswith("The room is not localized")
    assert ad.answer("where is the red ball", "memory", random.Random(0)) == (
        "red ball has not been observed yet. Explore to find it."
    )


def test_babyai_where_is_gives_the_count_the_five_nearest_and_the_mass_by_direction():
    """The seed's answer (its wording), at the start of babyai/goto seed 1: the room is pinned
    by the first view, the yellow key unseen; 11 cells remain, 7 of them behind (most along
    'back'), 3 to the right, 1 to the left: 64%, 27% and 9%, which sum to 100."""
    env = make_env("babyai/goto")
    obs, _ = env.reset(seed=1)
    ad = BabyAIAdapter(obs)
    answer = ad.answer("where is the yellow key", "belief", random.Random(0))
    assert answer == (
        "The yellow key has not been seen. 11 candidate cells remain (about 9% each). "
        "Nearest: 2 steps back, 1 step back and 1 step left, 1 step back and 1 step right, "
        "2 steps back and 1 step left, 2 steps back and 1 step right, and 6 farther cells. "
        "Mass is behind you (64%), to your right (27%), to your left (9%)."
    )
    cells = [pos_of(a) for a in ad.beliefs()["yellow key"].support]
    by = Counter(direction(*ad.to_ego(p)) for p in cells)
    assert by == {"behind you": 7, "to your right": 3, "to your left": 1}


def test_babyai_offsets_read_forward_first_and_each_cell_has_one_direction():
    assert relative(2, -1) == "2 steps forward and 1 step left"
    assert relative(-1, 0) == "1 step back" and relative(0, 0) == "your current cell"
    assert direction(2, 2) == "in front of you" and direction(-1, 1) == "behind you"
    assert direction(1, -3) == "to your left" and direction(0, 0) == "under you"


# -- household ---------------------------------------------------------------------------------
def test_household_goal_parsing():
    assert parse_goal("put a hot cup in sinkbasin.") == {
        "act": "heat", "target_type": "cup", "count": "1", "dest_recep_type": "sinkbasin",
        "transform": "heat",
    }  # fmt: skip
    assert parse_goal("find two potato and put them in fridge")["count"] == "2"
    assert parse_goal("examine the cd with the desklamp")["toggle"] == "desklamp"


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["uniform", "zipf"])
def test_household_belief_keeps_mass_on_the_true_receptacle_along_expert_episodes(prior):
    env = make_env("household" if prior == "uniform" else "household:placement=zipf")
    for seed in range(6):  # one of each task type
        obs, info = env.reset(seed=seed)
        ad = adapter_for(env.kind, obs, prior)
        assert isinstance(ad, HouseholdAdapter)
        expert = env.expert()
        for _ in range(30):
            placements = info["privileged"]["placements"]
            holding = info["privileged"]["world"].holding
            beliefs = list(ad.beliefs().values())
            assert beliefs, seed
            for b in beliefs:
                if b.located_at is not None:
                    continue
                truth = {placements[o] for o in placements if o.rsplit(" ", 1)[0] == ad.target}
                truth |= {INVENTORY for o in holding if o.rsplit(" ", 1)[0] == ad.target}
                assert sum(b.prob(a) for a in truth) > 0, (seed, b, truth)
            action = expert.act(obs, info)
            obs, _, term, trunc, info = env.step(action)
            ad.update(action, obs, info.get("valid", True))
            if term or trunc:
                break


HOUSE = (
    "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly "
    "around you, you see a cabinet 1, a countertop 1, a drawer 1, a fridge 1, a microwave 1, "
    "and a sinkbasin 1.\n\nYour task is to: put a hot apple in countertop."
)


def test_an_adapter_claims_the_kind_an_env_declares_never_its_text():
    """An env whose text reads like a household game but that declares no kind is claimed by
    no adapter (adapters chose by the text before: this one was taken for a household)."""
    from statelab.core import Prompt, StepContext
    from statelab.worldmodels import WORLDMODELS

    obs = Observation(HOUSE, None, None, "put a hot apple in countertop")
    assert adapter_for("", obs) is None
    assert adapter_for("no-such-kind", obs) is None
    assert isinstance(adapter_for("household", obs), HouseholdAdapter)
    assert {"household", "scienceworld", "babyai"} <= set(claimed_kinds())
    assert env_class("household").kind == "household" and env_class("hanoi").kind == ""
    model = WORLDMODELS.build("belief")
    prompt = Prompt(manual="", view=HOUSE, actions=None, goal=obs.goal)
    model.reset(StepContext.for_prompt(prompt, obs, env="hanoi"))
    assert model.adapter is None
    assert model.answer("query where is apple", None) == UNKNOWN_ENV
    model.reset(StepContext.for_prompt(prompt, obs, env="household"))
    assert isinstance(model.adapter, HouseholdAdapter)


def _house(*steps: tuple[str, str]) -> HouseholdAdapter:
    ad = HouseholdAdapter(Observation(HOUSE, None, None, "put a hot apple in countertop"))
    for action, text in steps:
        ad.update(action, Observation(text, None, None, ""), True)
    return ad


AT_FRIDGE = ("go to fridge 1", "You arrive at fridge 1. The fridge 1 is closed.")
OPENED = "You open the fridge 1. The fridge 1 is open. In it, you see a apple 1, and a egg 1."
OPEN_FRIDGE = ("open fridge 1", OPENED)
TAKE = ("take apple 1 from fridge 1", "You pick up the apple 1 from the fridge 1.")
AT_MICRO = ("go to microwave 1", "You arrive at microwave 1. The microwave 1 is closed.")


AT_CAB = ("go to cabinet 1", "You arrive at cabinet 1. On the cabinet 1, you see nothing.")


@pytest.mark.parametrize(
    ("steps", "action", "rule"),
    [
        ((AT_FRIDGE, OPEN_FRIDGE, TAKE), "take egg 1 from fridge 1", 100),  # hands full
        ((), "take apple 1 from fridge 1", 101),  # not seen there
        ((AT_FRIDGE, OPEN_FRIDGE), "take bread 1 from fridge 1", 101),
        ((AT_FRIDGE, OPEN_FRIDGE, AT_CAB), "take apple 1 from fridge 1", 102),  # away
        (((AT_FRIDGE, OPEN_FRIDGE)), "take apple 1 from fridge 1", None),
        ((), "open toaster 1", 103),  # no such receptacle
        ((), "open fridge 1", 104),  # away from the fridge
        ((), "open drawer 1", 105),  # away from a drawer
        ((), "open cabinet 1", None),  # away from a cabinet: no rule
        ((AT_FRIDGE,), "open fridge 1", None),
        ((AT_FRIDGE, OPEN_FRIDGE), "open fridge 1", None),  # already open: no rule
        ((AT_FRIDGE, OPEN_FRIDGE, TAKE), "heat apple 1 with microwave 1", 106),  # away
        ((AT_FRIDGE, OPEN_FRIDGE, TAKE), "heat apple 1 with fridge 1", None),  # wrong one
        ((AT_FRIDGE, OPEN_FRIDGE, TAKE, AT_MICRO), "heat apple 1 with microwave 1", None),
        ((AT_FRIDGE, OPEN_FRIDGE), "put apple 1 in/on fridge 1", 107),  # not holding
        ((AT_FRIDGE, OPEN_FRIDGE, TAKE), "move apple 1 to countertop 1", 108),  # away
        ((AT_FRIDGE, OPEN_FRIDGE, TAKE), "put apple 1 in fridge 1", None),
        ((AT_FRIDGE,), "use desklamp 1", 109),  # not seen where you are
        ((AT_FRIDGE, OPEN_FRIDGE), "clean apple 1 with sinkbasin 1", 110),  # not holding
        ((AT_FRIDGE, OPEN_FRIDGE, TAKE), "cool apple 1 with fridge 1", None),  # no rule
        ((AT_FRIDGE,), "take apple 1 from fridge 1", 101),  # closed, and not seen
        ((), "go to toaster 1", None),  # go to has no rule
        ((AT_FRIDGE,), "go to fridge 1", None),
        (
            (AT_FRIDGE, OPEN_FRIDGE, ("close fridge 1", "You close the fridge 1.")),
            "take apple 1 from fridge 1",
            None,
        ),  # closing keeps WALL-E's status "open"
    ],
)
def test_each_household_walle_rule_rejects_and_accepts(steps, action, rule):
    """WALL-E's released ALFWorld rules: the first that rejects is the expected one."""
    from statelab.envs.household import normalise
    from statelab.worldmodels.rules import HOUSEHOLD_RULES, rule_action

    ad = _house(*steps)
    first = next(
        (n for n, r in HOUSEHOLD_RULES if r(ad.walle, rule_action(normalise(action)))), None
    )
    assert first == rule
    assert (ad.check(action) is not None) == (rule is not None)


def test_walle_rule_114_rejects_taking_from_a_closed_receptacle_one_stands_at():
    from statelab.worldmodels.rules import HouseholdRuleState, household_failure

    state = HouseholdRuleState(["drawer 1"], {"drawer 1": ["pen 1"]}, None, "drawer 1", "closed")
    assert "closed" in (household_failure(state, "take pen 1 from drawer 1") or "")
    state.status = "open"
    assert household_failure(state, "take pen 1 from drawer 1") is None


def test_household_queries_in_the_anchor_formats():
    rng = random.Random(0)
    ad = _house(AT_FRIDGE)
    where = ad.answer("where is apple", "belief", rng)
    # apples may be on a countertop (the goal's type) and in the microwave (the appliance)
    assert where == (
        "apple is most likely at: countertop 1 (0.25), fridge 1 (0.25), microwave 1 (0.25), "
        "sinkbasin 1 (0.25)."
    )
    assert ad.answer("what is in fridge 1", "belief", rng) == "fridge 1 has not been searched yet."
    assert ad.answer("what is in sofa 1", "belief", rng) == "sofa 1 has not been searched yet."
    assert ad.answer("searched fridge 1", "belief", rng) == "fridge 1: not searched yet."
    assert ad.answer("where is apple", "memory", rng).startswith("apple has not been observed yet")
    ad = _house(AT_FRIDGE, OPEN_FRIDGE)
    assert ad.answer("what is in fridge 1", "belief", rng) == "fridge 1 contains: apple 1, egg 1."
    assert ad.answer("where is apple", "belief", rng) == "apple is most likely at: fridge 1 (1.00)."
    assert ad.answer("where is apple", "memory", rng) == "apple has been observed at: fridge 1."
    assert ad.answer("where is apple 1", "belief", rng) == "apple 1 is at fridge 1."
    assert ad.answer("state", "belief", rng) == (
        "You are at fridge 1, holding nothing. Known objects: apple 1, egg 1. "
        "Searched receptacles: fridge 1."
    )
    # another type: its prior's mass on the unsearched receptacles, not renormalised
    assert ad.answer("where is bread", "belief", rng) == (
        "bread is most likely at: countertop 1 (0.33), microwave 1 (0.33)."
    )
    assert _house().answer("state", "belief", rng).startswith("You are at unknown,")


def test_after_a_pickup_the_belief_stays_where_the_object_was_found():
    rng = random.Random(0)
    ad = _house(AT_FRIDGE, OPEN_FRIDGE, TAKE, AT_MICRO)
    assert ad.answer("where is apple", "belief", rng) == "apple is most likely at: fridge 1 (1.00)."
    assert ad.answer("where is apple 1", "belief", rng) == "You are holding apple 1."
    # Memory: a held object is not observed anywhere
    assert ad.answer("where is apple", "memory", rng).startswith("apple has not been observed")


def test_household_absence_renormalises_the_target_belief():
    ad = _house()
    (b0,) = ad.beliefs().values()
    seen = "You arrive at sinkbasin 1. On the sinkbasin 1, you see a egg 1."
    (b1,) = _house(("go to sinkbasin 1", seen)).beliefs().values()
    assert b0.support == {"countertop 1", "fridge 1", "microwave 1", "sinkbasin 1"}
    assert b1.support == {"countertop 1", "fridge 1", "microwave 1"}
    assert abs(sum(p for _, p in b1.dist) - 1) < 1e-9


TWO = (
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a "
    "countertop 1, a drawer 1, and a shelf 1.\n\nYour task is to: put two pen in shelf."
)


def test_pick_two_reads_the_first_instance_not_yet_located():
    ad = HouseholdAdapter(Observation(TWO, None, None, "put two pen in shelf"))
    rng = random.Random(0)
    on = "You arrive at countertop 1. On the countertop 1, you see a pen 2."
    ad.update("go to countertop 1", Observation(on, None, None, ""), True)
    b1, b2 = ad.beliefs().values()
    assert b1.located_at == "countertop 1" and "countertop 1" not in b2.support
    # the answer is the second instance's belief, not a mixture of both
    assert ad.answer("where is pen", "belief", rng) == (
        "pen is most likely at: drawer 1 (0.50), shelf 1 (0.50)."
    )


@pytest.mark.slow
def test_the_zipf_belief_is_the_law_the_game_was_drawn_from():
    from statelab.envs import _household_prior as prior

    env = make_env("household:put+placement=zipf")
    obs, _ = env.reset(seed=6)
    ad = adapter_for(env.kind, obs, "zipf")
    assert isinstance(ad, HouseholdAdapter)
    (b,) = ad.beliefs().values()
    dest = ad.mem.goal["dest_recep_type"]
    assert dict(b.dist) == prior.zipf_prior(ad.target, list(ad.mem.places), {dest})


def test_household_noprob_names_exactly_the_support_of_the_belief():
    ad = _house()
    (b,) = ad.beliefs().values()
    for seed in range(5):
        text = ad.answer("where is apple", "noprob", random.Random(seed))
        named = text.removeprefix("apple may be at: ").rstrip(".").split(", ")
        assert set(named) == b.support and "(" not in text


def test_household_floor_lamp_prior_covers_where_the_generator_puts_it():
    """The test split's floor lamps (scene 219): a lamp is not in ALFWorld's placement table,
    so its prior (as the authors') is every receptacle, the lamp's true place among them."""
    from statelab.envs import _household_gen as gen
    from statelab.envs.household import HouseholdEnv

    env = HouseholdEnv()
    test = range(gen.TEST_START, gen.TEST_START + 134)
    for seed in test:
        if gen.task_type_of(seed) != "look_at_obj_in_light":
            continue
        obs, info = env.reset(seed=seed)
        if info["privileged"]["task"].lamp == "floorlamp 1":
            break
    else:
        raise AssertionError("no floor-lamp game in the test split")
    ad = adapter_for(env.kind, obs, "uniform")
    assert isinstance(ad, HouseholdAdapter)
    support = ad.prior_for("floorlamp").support
    assert support == set(ad.mem.places)
    assert info["privileged"]["placements"]["floorlamp 1"] in support


@pytest.mark.parametrize("mode", ["belief", "noprob", "memory"])
def test_household_instructions_list_the_four_queries_and_the_reminder(mode):
    from statelab.worldmodels._model import BeliefWorldModel

    model = BeliefWorldModel(mode, rules=False)
    model.adapter = _house()
    text = model.instructions()
    for i, q in enumerate(["where is <object>", "what is in <receptacle>",
                           "searched <receptacle>", "state"], start=1):  # fmt: skip
        assert f"\n{i}. query {q}: " in text
    assert "stuck" in text and "query it before you act" in text
    assert ("probabilities" in text) == (mode == "belief")
