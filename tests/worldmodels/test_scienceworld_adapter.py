"""The ScienceWorld adapter (seed 004, Appendix B): along expert episodes the room belief
keeps positive mass on a true room of every tracked object (the true rooms are read from the
simulator's object tree here, in the test, only); the task text's named rooms; the query
forms in the anchor's wording; the oracle WALL-E (the env's parser, asked without running the
action) rejects and accepts and never changes the trajectory."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statelab.core import Observation
from statelab.facts import TextFacts
from statelab.worldmodels.adapters import adapter_for
from statelab.worldmodels.adapters._scienceworld_rooms import ROOMS, candidate_rooms
from statelab.worldmodels.adapters._scienceworld_text import (
    Goal,
    matches,
    parse_goal,
    parse_item,
    referent,
)
from statelab.worldmodels.adapters.scienceworld import CANNOT_HELP, INVALID, ScienceWorldAdapter
from statelab.worldmodels.belief import INVENTORY

FIRST = (
    "This room is called the bathroom. In it, you see: \n"
    "\ta bathtub, which is turned off. In the bathtub is: nothing.\n"
    "\ta glass cup (containing a substance called water)\n"
    "\ta picture\n"
    "\ta substance called air\n"
    "\ta toilet. In the toilet is: A drain, a substance called water, which is open.\n"
    "\tthe agent\n"
    "You also see:\n"
    "\tA door to the kitchen (that is open)"
)
GOAL = (
    "Your task is to measure the temperature of unknown substance B, which is located around "
    "the kitchen. First, focus on the thermometer. Next, focus on the unknown substance B. If "
    "the unknown substance B temperature is above 200.0 degrees celsius, place it in the yellow "
    "box. If the unknown substance B temperature is below 200.0 degrees celsius, place it in "
    "the purple box. The boxes are located around the bathroom."
)


def _obs(text, room="bathroom", inventory=(), goal=GOAL):
    return Observation(text, TextFacts(text, room, tuple(inventory)), None, goal)


def _adapter():
    ad = adapter_for("scienceworld", _obs(FIRST))
    assert isinstance(ad, ScienceWorldAdapter)
    return ad


# -- reading ------------------------------------------------------------------------------------
def test_referents_and_nesting_are_read_from_the_listing():
    assert referent("a substance called air") == "air"
    assert referent("a sink, which is turned off. In the sink is: nothing.") == "sink"
    assert referent("a thermometer, currently reading a temperature of 10 degrees celsius") == (
        "thermometer"
    )
    assert referent("a adult bee") == "adult bee"
    assert parse_item("\ta glass cup (containing a substance called water)") == (
        "glass cup",
        [("glass cup", ["water"])],
    )
    name, nested = parse_item("\ta toilet. In the toilet is: A drain, a substance called water.")
    assert name == "toilet" and nested == [("toilet", ["drain", "water"])]
    assert matches("seed", "orange seed") and matches("bee", "adult bee")
    assert not matches("bee", "bee hive")


def test_the_goal_names_the_target_and_the_rooms_the_task_text_gives():
    # the measuring tasks' first object to find is the thermometer (the authors' target)
    # the subjects the text places, in its own words (the authors' reading): "boxes"
    assert parse_goal(GOAL) == Goal(
        "thermometer", None, {"unknown substance b": "kitchen", "boxes": "bathroom"}, "measure"
    )
    find = "Your task is to find a(n) animal. First, focus on the thing. Then, move it to the "
    assert parse_goal(find + "orange box in the living room.") == Goal("animal", None, {}, "find")
    grow = "Your task is to grow a orange plant from seed. Seeds can be found in the bathroom."
    assert parse_goal(grow) == Goal("orange plant", "bathroom", {"seeds": "bathroom"}, "grow")
    fruit = (
        "Your task is to grow a banana. This will require growing several plants, and them "
        "being crossing-pollinated to produce fruit. Seeds can be found in the kitchen. To "
        "complete the task, focus on the banana."
    )
    assert parse_goal(fruit) == Goal("banana", "kitchen", {"seeds": "kitchen"}, "grow")
    assert parse_goal("Your task is to boil lead. First, focus on the substance.") == Goal(
        "lead", None, {}, "state"
    )
    stages = (
        "Your task is to focus on the life stages of the apple plant, starting from earliest "
        "to latest. The plants are located in the outside."
    )
    assert parse_goal(stages) == Goal("apple plant", "outside", {"plants": "outside"}, "stages")
    salt = (
        "Your task is to determine if sodium chloride is electrically conductive. The sodium "
        "chloride is located around the workshop. First, focus on the sodium chloride."
    )
    assert parse_goal(salt) == Goal(
        "sodium chloride", "workshop", {"sodium chloride": "workshop"}, "conductivity"
    )
    life = "Your task is to find the animal with the longest life span. The animals are in the "
    assert parse_goal(life + "'outside' location.") == Goal(
        "animal", "outside", {"animals": "outside"}, "lifespan"
    )
    motor = "Your task is to turn on the electric motor. First, focus on the electric motor."
    assert parse_goal(motor) == Goal("electric motor", None, {}, "power")


def _others(otype: str, room: str, form: str) -> list[str]:
    return [r for r in candidate_rooms(otype, form) if r != room]


def test_the_prior_is_a_point_mass_on_the_targets_named_room_and_the_tables_rooms_else():
    # the target's named room: a point mass (the authors' prior)
    salt = "Your task is to determine if tin is electrically conductive. The tin is located "
    ad = adapter_for("scienceworld", _obs(FIRST, goal=salt + "around the workshop. First,"))
    assert ad.prior_for("tin").dist == (("workshop", 1.0),)
    # another type the task places: 0.9 on its room, the rest over the table's other rooms
    ad = _adapter()
    others = _others("unknown substance b", "kitchen", "measure")
    assert others and "bathroom" in others
    prior = ad.prior_for("unknown substance b")
    assert prior.prob("kitchen") == pytest.approx(0.9)
    assert all(prior.prob(r) == pytest.approx(0.1 / len(others)) for r in others)
    assert prior.support == {"kitchen", *others}
    # the first look around searched the bathroom (no unknown substance there): renormalised
    b = ad.beliefs()["unknown substance b"]
    assert b.prob("bathroom") == 0.0
    assert b.prob("kitchen") == pytest.approx(0.9 / (1 - 0.1 / len(others)))
    # the target the task names no room for: uniform over the rooms it starts in
    assert ad.prior_for("thermometer").dist == (("kitchen", 1.0),)
    goal = "Your task is to boil lead. First, focus on it."
    lead = adapter_for("scienceworld", _obs(FIRST, goal=goal))
    rooms = candidate_rooms("lead", "state")
    assert rooms and "bathroom" not in rooms
    assert all(lead.beliefs()["lead"].prob(r) == pytest.approx(1 / len(rooms)) for r in rooms)


def test_absence_renormalises_a_sighting_collapses_and_carrying_is_the_inventory():
    ad = _adapter()
    kitchen = (
        "This room is called the kitchen. In it, you see: \n"
        "\ta counter. On the counter is: a bowl (containing a red apple), a drawer.\n"
        "\tthe agent\nYou also see:\n\tA door to the bathroom (that is open)"
    )
    ad.update("teleport to kitchen", _obs("You teleport to the kitchen.", "kitchen"), True)
    ad.update("look around", _obs(kitchen, "kitchen"), True)
    b = ad.beliefs()["unknown substance b"]
    assert b.prob("kitchen") == 0.0
    assert sum(p for _, p in b.dist) == pytest.approx(1.0)
    left = [r for r in _others("unknown substance b", "kitchen", "measure") if r != "bathroom"]
    assert all(b.prob(r) == pytest.approx(1 / len(left)) for r in left)
    workshop = (
        "This room is called the workshop. In it, you see: \n"
        "\ta table. On the table is: a unknown substance B, a wire.\n\tthe agent\n"
    )
    ad.update("teleport to workshop", _obs("You teleport to the workshop.", "workshop"), True)
    ad.update("look around", _obs(workshop, "workshop"), True)
    assert ad.beliefs()["unknown substance b"].dist == (("workshop", 1.0),)
    # the wire was listed on the table (no pick-up seen): the table, whatever was put down
    down = "You move the wire to the workshop."
    ad.update("put down wire", _obs(down, "workshop"), True)
    assert ad.answer("where is wire", "belief", random.Random(0)) == (
        "wire is in the workshop, in the table."
    )
    got = "You move the unknown substance B to the inventory."
    ad.update("pick up unknown substance B", _obs(got, "workshop", ["a unknown substance B"]), True)
    assert ad.beliefs()["unknown substance b"].dist == ((INVENTORY, 1.0),)
    rng = random.Random(0)
    assert ad.answer("where is unknown substance b", "belief", rng) == (
        "unknown substance b is most likely in: inventory (1.00)."
    )
    assert ad.answer("where is unknown substance b", "memory", rng) == (
        "unknown substance b has been observed at: inventory."
    )
    assert ad.answer("what is in counter", "belief", rng) == "counter contains: bowl, drawer."
    # a bowl's "(containing ...)" places its items, but only an "On/In the X is:" line or a
    # look in makes the bowl a known container (the authors' reading)
    assert ad.answer("what is in bowl", "belief", rng) == "bowl has not been searched yet."
    assert ad.answer("where is red apple", "memory", rng) == (
        "red apple has been observed at: kitchen (in the bowl)."
    )
    assert ad.answer("where is red apple", "belief", rng) == (
        "red apple is in the kitchen, in the bowl."
    )


def test_a_closed_container_rules_the_room_out_as_the_authors_do():
    # the anchor opens every container; a closed one does not keep its room possible
    ad = _adapter()
    closed = (
        "This room is called the kitchen. In it, you see: \n"
        "\ta fridge. The fridge door is closed. \n\tthe agent\n"
    )
    ad.update("look around", _obs(closed, "kitchen"), True)
    assert ad.beliefs()["unknown substance b"].prob("kitchen") == 0.0


def test_queries_in_the_anchors_wording():
    ad = _adapter()
    rng = random.Random(0)
    k = len(_others("unknown substance b", "kitchen", "measure"))
    top = 0.9 / (1 - 0.1 / k)
    assert ad.answer("where is unknown substance b", "belief", rng) == (
        f"unknown substance b is most likely in: kitchen ({top:.2f}), and other rooms "
        f"({(1 - top) * 100:.0f}%)."
    )
    assert ad.answer("where is thermometer", "belief", rng) == (
        "thermometer is most likely in: kitchen (1.00)."
    )
    assert ad.answer("where is frobnicator", "belief", rng) == CANNOT_HELP
    # a plural the task text uses answers for the type it places
    grow = "Your task is to grow a orange plant from seed. Seeds can be found in the kitchen."
    seeds = adapter_for("scienceworld", _obs(grow, goal=grow))
    assert seeds.answer("where is seeds", "belief", rng).startswith(
        "seeds is most likely in: kitchen (0.90), and other rooms"
    )
    assert ad.answer("where is unknown substance b", "memory", rng) == (
        "unknown substance b has not been observed yet. Search rooms to find it."
    )
    noprob = ad.answer("where is unknown substance b", "noprob", rng)
    listed = noprob.removeprefix("unknown substance b may be at: ").rstrip(".").split(", ")
    assert set(listed) == ad.beliefs()["unknown substance b"].support
    assert ad.answer("where is glass cup", "belief", rng) == (
        "glass cup is most likely in: bathroom (1.00)."
    )
    assert ad.answer("where is glass cup", "memory", rng) == (
        "glass cup has been observed at: bathroom."
    )
    # listed in the toilet and in the glass cup: the inline listing is read last and wins
    assert ad.answer("where is water", "belief", rng) == (
        "water is in the bathroom, in the glass cup."
    )
    # the authors' listing: no air, and the toilet's trailing clause read as an item
    assert ad.answer("what is in bathroom", "belief", rng) == (
        "bathroom contains: bathtub, drain, glass cup, picture, toilet, water, which is open."
    )
    assert ad.answer("what is in kitchen", "belief", rng) == "kitchen has not been searched yet."
    assert ad.answer("searched bathroom", "belief", rng) == "bathroom: searched."
    assert ad.answer("searched kitchen", "belief", rng) == "kitchen: not searched yet."
    # the inventory is what the agent was seen to pick up; a carried container seen with
    # its contents shows them
    ad.update("pick up glass cup", _obs("You move the glass cup to the inventory."), True)
    ad.update("pick up metal pot", _obs("You move the metal pot to the inventory."), True)
    ad.update("focus on glass cup", _obs("You focus on the glass cup."), True)
    assert ad.answer("state", "belief", rng) == (
        "You are in the bathroom, holding glass cup (containing water), metal pot, focused on "
        "glass cup. Rooms searched: bathroom."
    )
    assert ad.answer("where is glass cup", "belief", rng) == (
        "glass cup is most likely in: inventory (1.00)."
    )
    assert "query where is unknown substance b" in [f"query {f}" for f in ad.query_forms()]


def test_the_adapter_is_chosen_by_the_env_kind_never_by_the_text():
    assert isinstance(adapter_for("scienceworld", _obs(FIRST)), ScienceWorldAdapter)
    kitchen = _obs("You are in a kitchen.")
    assert isinstance(adapter_for("scienceworld", kitchen), ScienceWorldAdapter)
    assert adapter_for("", _obs(FIRST)) is None


def test_the_oracle_check_rejects_what_the_oracle_refuses():
    ad = _adapter()
    assert ad.check("fly to the moon", lambda a: False) == INVALID.format(action="fly to the moon")
    assert ad.check("look around", lambda a: True) is None
    assert ad.check("fly to the moon", None) is None  # no oracle: no objection


# -- on the simulator (a JVM): the true rooms are read from its object tree, here only ---------
def _jset(sw, s):
    return list(sw._gateway.jvm.scala.collection.JavaConverters.setAsJavaSetConverter(s).asJava())


def _true_rooms(env) -> dict[str, set[str]]:
    """Privileged, for the test only: referent -> the rooms (or the inventory) holding a
    visible object so called (documents' titles left out: 'instructions to make X' is no X)."""
    sw = env._sim.sw
    ai = sw.server.agentInterface().get()

    def walk(o):
        for c in _jset(sw, o.getContainedObjects(False)):
            yield c
            yield from walk(c)

    def refs(o):
        return {str(r).lower() for r in _jset(sw, o.getReferents()) if "instructions" not in str(r)}

    out: dict[str, set[str]] = {}
    agent = ai.agent()
    held = set()
    for o in walk(agent.getInventoryContainer()):
        held.add(o.uuid())
        for r in refs(o):
            out.setdefault(r, set()).add(INVENTORY)
    for room in _jset(sw, ai.universe().getContainedObjects(True)):
        if str(room.name()) not in ROOMS:
            continue
        for o in walk(room):
            if o.uuid() not in held and o.uuid() != agent.uuid():
                for r in refs(o):
                    out.setdefault(r, set()).add(str(room.name()))
    return out


def _belief_follows_the_expert(task, seed):
    pytest.importorskip("scienceworld")
    from statelab.envs import make_env

    env = make_env(f"scienceworld/{task}")
    try:
        obs, info = env.reset(seed=seed)
        ad = adapter_for(env.kind, obs)
        assert isinstance(ad, ScienceWorldAdapter)
        policy, done, checked = env.expert(), False, 0
        while True:
            truth = _true_rooms(env)
            for otype, b in ad.beliefs().items():
                # 0.90 alone: a stated room that the table alone gives (the authors' prior)
                assert 0 < sum(p for _, p in b.dist) <= 1 + 1e-9
                if b.located_at == INVENTORY and not ad.state.carried(otype):
                    continue  # put down: the authors' belief stays there until it is listed
                rooms = set().union(*(v for r, v in truth.items() if matches(otype, r)))
                if rooms:
                    checked += 1
                    assert sum(b.prob(a) for a in rooms) > 0, (task, env.steps, otype, b, rooms)
            if done:
                break
            action = policy.act(obs, info)
            obs, _, term, trunc, info = env.step(action)
            ad.update(action, obs, info["valid"])
            done = term or trunc
        assert checked
    finally:
        env.close()


@pytest.mark.parametrize("task", ["use-thermometer", "chemistry-mix-paint-secondary-color"])
def test_the_belief_keeps_mass_on_a_true_room_along_expert_episodes(task):
    _belief_follows_the_expert(task, 0)


@pytest.mark.slow
@pytest.mark.parametrize(
    "task",
    [
        "boil", "chemistry-mix", "find-living-thing", "grow-plant", "identify-life-stages-2",
        "use-thermometer", "measure-melting-point-known-substance",
        "power-component-renewable-vs-nonrenewable-energy", "test-conductivity",
        "test-conductivity-of-unknown-substances",
    ],
)  # fmt: skip
def test_the_belief_keeps_mass_on_a_true_room_along_more_expert_episodes(task):
    _belief_follows_the_expert(task, 1)


def test_walle_on_scienceworld_asks_the_env_and_rejects_without_a_step():
    """walle / bbwm: the proposal the env would refuse is fed back and decided again; the env
    is not stepped for it. The oracle is only asked in the validate stage: with the belief
    variant it is never asked."""
    pytest.importorskip("scienceworld")
    import asyncio

    from statelab.envs.scienceworld import ScienceWorldEnv
    from statelab.llm.scripted import ScriptedLLM
    from statelab.run.episode import run_episode
    from statelab.run.spec import RunSpec

    calls: list[str] = []
    orig = ScienceWorldEnv.would_accept

    def counted(self, action):
        calls.append(action)
        return orig(self, action)

    replies = ["Action: fly to the moon", "Action: teleport to outside", "Action: look around"]
    ScienceWorldEnv.would_accept = counted  # type: ignore[method-assign]
    try:
        runs = {}
        for wm in ("walle", "bbwm", "belief"):
            calls.clear()
            spec = RunSpec.make(env="scienceworld/lifespan-longest-lived", model="scripted:x",
                                agent="act", worldmodel=wm, max_steps=2)  # fmt: skip
            ep = asyncio.run(run_episode(spec, 0, ScriptedLLM(list(replies), "wm")))
            runs[wm] = (ep, list(calls))
    finally:
        ScienceWorldEnv.would_accept = orig  # type: ignore[method-assign]
    for wm in ("walle", "bbwm"):
        ep, asked = runs[wm]
        first = ep.trajectory[0]
        assert first.action == "teleport to outside" and first.valid
        assert first.meta["rejected"] == [
            {
                "action": "fly to the moon",
                "feedback": "[World model] " + INVALID.format(action="fly to the moon"),
            }
        ]
        assert asked == ["fly to the moon", "teleport to outside", "look around"]
        assert [s.action for s in ep.trajectory] == ["teleport to outside", "look around"]
    ep, asked = runs["belief"]
    assert asked == [] and ep.trajectory[0].action == "fly to the moon"
    assert not ep.trajectory[0].valid


def test_belief_on_scienceworld_answers_a_query_in_the_prompt_without_a_step():
    pytest.importorskip("scienceworld")
    import asyncio

    from statelab.llm.scripted import ScriptedLLM
    from statelab.run.episode import run_episode
    from statelab.run.spec import RunSpec

    replies = ["Action: query where is animal", "Action: teleport to outside"]
    spec = RunSpec.make(env="scienceworld/lifespan-longest-lived", model="scripted:x",
                        agent="act", worldmodel="belief", max_steps=1)  # fmt: skip
    ep = asyncio.run(run_episode(spec, 0, ScriptedLLM(replies, "wm")))
    step = ep.trajectory[0]
    assert ep.steps == 1 and step.action == "teleport to outside"
    assert step.queries == [
        {"query": "query where is animal",
         "answer": "animal is most likely in: outside (1.00)."}
    ]  # fmt: skip
    assert "query where is animal" in str(step.calls[0]["messages"])  # the instructions


# -- properties on random small instances (hypothesis) -----------------------------------------

NAMED = "Your task is to measure the temperature of wire, which is located around the kitchen."
UNNAMED = "Your task is to boil lead. First, focus on the substance."


def _look(room: str, things: list[str]) -> str:
    lines = "".join(f"\ta {t}\n" for t in [*things, "table"])
    return f"This room is called the {room}. In it, you see: \n{lines}\tthe agent\n"


@settings(max_examples=60, deadline=None)
@given(
    goal=st.sampled_from([(NAMED, "wire"), (UNNAMED, "lead")]),
    true_room=st.sampled_from([*ROOMS, None]),
    looks=st.lists(st.sampled_from(ROOMS), max_size=12),
    seed=st.integers(0, 3),
)
def test_the_room_belief_is_exact_bayesian_conditioning_of_its_prior(goal, true_room, looks, seed):
    """Looks around rooms of a world where the object sits in ``true_room`` (or nowhere):
    the belief is the prior conditioned on what was seen (sums to 1; absence zeroes and
    renormalises; a sighting is a point mass), and noprob names exactly its support."""
    text, otype = goal
    start = looks[0] if looks else "hallway"
    first = _look(start, [otype] if start == true_room else [])
    ad = adapter_for("scienceworld", _obs(first, start, goal=text))
    assert isinstance(ad, ScienceWorldAdapter)
    prior = ad.prior_for(otype)
    for room in looks[1:]:
        ad.update("teleport", _obs(f"You teleport to the {room}.", room, goal=text), True)
        ad.update("look around", _obs(_look(room, [otype] if room == true_room else []), room,
                                      goal=text), True)  # fmt: skip
    looked = {start, *looks}
    b = ad.beliefs()[otype]
    if true_room in looked:
        assert b.dist == ((true_room, 1.0),)
    else:
        w = {r: prior.prob(r) for r in ROOMS if r not in looked}
        total = sum(w.values())
        exact = {r: p / total for r, p in w.items() if p > 0} if total else {}
        assert {a: round(p, 9) for a, p in b.dist} == {a: round(p, 9) for a, p in exact.items()}
        assert b.empty or sum(p for _, p in b.dist) == pytest.approx(1.0)
    answer = ad.answer(f"where is {otype}", "noprob", random.Random(seed))
    if b.empty:
        assert answer.startswith("No candidate rooms remain")
    elif true_room not in looked:
        named = answer.removeprefix(f"{otype} may be at: ").rstrip(".").split(", ")
        assert sorted(named) == sorted(b.support)
