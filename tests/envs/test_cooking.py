"""The cooking env (seed 003): Phase A's reveal and exactly F' filler steps, every ingredient
and tool observed before the reveal, clean observations, the expert (a*) winning through the
text interface, splits, and the prelude reaching the memory (episode and replay).

Games come from the on-disk cache (``$STATELAB_CACHE/cooking``); the first run generates the
few used here (about 5 s each), later runs read them."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("textworld")

from statelab import replay
from statelab.envs import _cooking_games as games
from statelab.envs import make_env
from statelab.envs.cooking import clean, compact_recipe, inventory_items
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

SEEDS = (0, 1, 2)
STATUS_BAR = re.compile(r"-= .* =-\s*\d+/\d+")


def play_expert(env, obs, info):
    policy, done = env.expert(), False
    while not done:
        obs, _, term, trunc, info = env.step(policy.act(obs, info))
        done = term or trunc
    return info


@pytest.mark.parametrize("lag", [0, 10])
def test_exactly_lag_filler_steps_follow_the_reveal(lag):
    env = make_env(f"cooking:lag={lag}")
    for seed in SEEDS:
        _, info = env.reset(seed=seed)
        prelude = info["prelude"]
        actions = [a for a, _ in prelude]
        reveal = actions.index("examine cookbook")
        assert actions.count("examine cookbook") == 1
        assert len(actions) - 1 - reveal == lag  # exactly F' steps after the reveal
        assert info["privileged"]["phase_a"]["filler"] == lag
        for a in actions[reveal + 1 :]:
            assert a.startswith("go ") or a in ("look", "inventory")
        assert "Ingredients:" in prelude[reveal][1].text  # the reveal shows the recipe


def test_filler_walk_of_a_smaller_lag_is_a_prefix_of_a_larger_one():
    a = [x for x, _ in make_env("cooking:lag=10").reset(seed=1)[1]["prelude"]]
    b = [x for x, _ in make_env("cooking:lag=20").reset(seed=1)[1]["prelude"]]
    assert b[: len(a)] == a and len(b) == len(a) + 10


def test_every_ingredient_and_tool_is_observed_before_the_reveal():
    env = make_env("cooking")
    for seed in SEEDS:
        _, info = env.reset(seed=seed)
        prelude, priv = info["prelude"], info["privileged"]
        reveal = [a for a, _ in prelude].index("examine cookbook")
        seen = "\n".join(o.text for _, o in prelude[:reveal]).lower()
        ingredients = [name for name, _, _ in priv["ingredients"]]
        assert ingredients and all(n.lower() in seen for n in ingredients), seed
        tools = {"fried": "stove", "roasted": "oven", "grilled": "bbq"}
        for _, cook, cut in priv["ingredients"]:
            if cook in tools:
                assert tools[cook] in seen
            if cut in ("sliced", "diced", "chopped"):
                assert "knife" in seen
        assert priv["phase_a"]["all_observed"]


def test_observations_are_clean_and_privileged_fields_stay_privileged():
    env = make_env("cooking:lag=10")
    obs, info = env.reset(seed=0)
    texts = [o.text for _, o in info["prelude"]] + [obs.text]
    for text in texts:
        assert not STATUS_BAR.search(text) and "\n>" not in text
    assert obs.admissible and list(obs.admissible) == sorted(obs.admissible)
    assert "recipe" not in obs.goal.lower() or "cookbook" in obs.goal.lower()
    priv = info["privileged"]
    assert priv["a_star"] in obs.admissible and priv["walkthrough"][-1] == "eat meal"
    assert "Directions:" in priv["recipe"] and "Recipe:" in priv["facts"].text
    assert set(info) >= {"privileged", "prelude", "score", "success", "steps"}


def test_clean_and_inventory_parsing():
    raw = "\nYou drop the knife.\n\n\n>                 -= Kitchen =-4/11"
    assert clean(raw) == "You drop the knife."
    assert inventory_items("You are carrying:\n  a carrot\n  a red potato\n") == (
        "a carrot",
        "a red potato",
    )
    assert inventory_items("You are carrying: a knife.") == ("a knife",)
    assert inventory_items("You are carrying nothing.") == ()


def test_the_expert_wins_at_lag_40_through_the_text_interface():
    env = make_env("cooking:lag=40")
    for seed in SEEDS:
        obs, info = env.reset(seed=seed)
        info = play_expert(env, obs, info)
        assert info["success"] and info["score"] == 1.0
        assert env.steps <= 50


def test_an_unknown_action_is_invalid_and_changes_nothing():
    env = make_env("cooking")
    _, info = env.reset(seed=2)
    a_star = info["privileged"]["a_star"]
    _, reward, term, _, info2 = env.step("xyzzy")
    assert info2["valid"] is False and reward == 0.0 and not term
    assert info2["privileged"]["a_star"] == a_star


def test_splits_are_disjoint_and_use_their_own_tw_split():
    ranges = list(games.SPLITS.values())
    assert [len(r) for r in ranges] == [240, 45, 90]
    for i, r in enumerate(ranges):
        for other in ranges[i + 1 :]:
            assert not set(r) & set(other)
    assert games.spec_for(5).split == "train"
    assert games.spec_for(1003).split == "valid" and games.spec_for(2010).split == "test"
    rooms = {games.spec_for(s).rooms for s in games.SPLITS["train"]}
    assert rooms == {1, 6, 9, 12}
    assert games.spec_for(7) == games.spec_for(7) and games.spec_for(7).key != games.spec_for(8).key


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1000, 1001, 2000, 2001])
def test_validation_and_test_games_hold_foods_or_preparations_unseen_in_train(seed):
    from textworld.challenges.tw_cooking.cooking import FOOD_PREPARATIONS_SPLITS as PREP

    env = make_env("cooking")
    _, info = env.reset(seed=seed)
    for food, cook, cut in info["privileged"]["ingredients"]:
        prep = (cook if cook != "None" else "raw", cut if cut != "None" else "uncut")
        assert food not in PREP["train"] or prep not in PREP["train"][food], (food, prep)


@pytest.fixture(scope="module")
def summary_store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cooking-run")
    script = tmp / "replies.json"
    script.write_text(json.dumps(["Action: look", "the recipe needs a carrot"]))
    exp = parse_experiment(
        {
            "name": "c",
            "model": f"scripted:{script}",
            "seeds": [1],
            "grid": {"env": ["cooking:lag=10"], "history": ["full", "summary"]},
            "out": str(tmp / "results"),
            "cache": None,
            "max_steps": 2,
        }
    )
    assert run_sync(exp, progress=None).failed == 0
    return exp.out_dir / "store.sqlite"


def test_the_prelude_reaches_the_memory_in_the_episode_and_in_replay(summary_store):
    s = Store(summary_store)
    try:
        runs = s.runs_frame()
        steps = s.table("steps")
    finally:
        s.close()
    full = runs[runs.history == "full"].iloc[0].run
    first = steps[(steps.run == full) & (steps.t == 1)].iloc[0]
    assert "examine cookbook" in first.view and "Ingredients:" in first.view
    for run in runs[runs.history.isin(["full", "summary"])].run:
        replayed = list(replay(summary_store, run, 1))
        stored = steps[steps.run == run].sort_values("t")
        # the replayed states (prelude included) render as the run's own memory
        assert [r.memory for r in replayed[1:]] == list(stored.memory)[:-1]
        assert replayed[0].memory  # the prelude was written before the first step


@pytest.mark.parametrize("budget", [64, 128, 256])
def test_the_oracle_bounded_state_holds_the_cooking_recipe(budget):
    from statelab.core import PrivilegedView, frozen_view
    from statelab.state import HISTORIES

    env = make_env("cooking")
    obs, info = env.reset(seed=1)
    memory = HISTORIES.build(f"oracle-bounded:{budget}")
    state = memory.init(obs, PrivilegedView(frozen_view(info)))
    directions = info["privileged"]["recipe"].split("Directions:")[1].split("\n")
    for d in (d.strip() for d in directions if d.strip()):
        verb, _, thing = d.partition(" the ")
        # "slice the carrot" -> "carrot (slice, ...)" in the recipe part
        assert re.search(rf"{re.escape(thing)} \([^)]*{verb}", state.text) or d in state.text
    if budget >= 128:  # at 64 (by the conservative estimate) the whereabouts may be cut
        for name, *_ in info["privileged"]["ingredients"]:
            assert f"{name} " in state.text.split("Where:")[1]  # and where it is


def test_compact_recipe():
    recipe = (
        "Recipe #1\n---------\nIngredients:\ncarrot\n  red potato\n\nDirections:\n"
        "slice the carrot\n  fry the carrot\n  dice the red potato\n  roast the red potato\n"
        "  prepare meal\n"
    )
    assert compact_recipe(recipe) == "carrot (slice, fry); red potato (dice, roast); prepare meal"
