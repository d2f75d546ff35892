import re
from collections import Counter
from typing import Any

import gymnasium as gym
import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import Observation
from statelab.envs import GYM_IDS, make_env
from statelab.envs._textcraft_recipes import N_GOALS, crafting_commands, goal_for, goals, plan
from statelab.envs.checker import check_env
from statelab.envs.textcraft import MANUAL, TextcraftEnv, normalise
from statelab.facts import TextFacts
from statelab.state import observation_renderer, render

TEST = TextcraftEnv.splits["test"]


def play_expert(env: TextcraftEnv, seed: int) -> tuple[list[str], dict[str, Any]]:
    obs, info = env.reset(seed=seed)
    expert, actions, done = env.expert(), [], False
    while not done:
        actions.append(expert.act(obs, info))
        obs, _, term, trunc, info = env.step(actions[-1])
        assert info["valid"], (seed, actions[-1], obs.text)
        done = term or trunc
    return actions, info


def test_reset_shows_commands_and_goal_like_the_package():
    env = TextcraftEnv()
    obs, info = env.reset(seed=0)
    assert obs.text.startswith("Crafting commands:\n")
    assert obs.text.endswith("\n\nGoal: craft cyan banner.")
    assert obs.goal == "craft cyan banner" and obs.admissible is None
    lines = obs.text.split("\n\n")[0].splitlines()[1:]
    assert "craft 1 cyan banner using 6 cyan wool, 1 stick" in lines
    assert "craft 4 oak planks using 1 oak logs" in lines  # every planks recipe (for stick)
    assert len(lines) == len(set(lines))
    assert obs.facts == TextFacts(obs.text, None, ())
    assert render("natural", obs.facts) == obs.text
    # the commands join the manual (the prompt's static head) for the whole episode
    assert env.manual == f"{MANUAL}\n\n{obs.text}"
    assert info["score"] == 0.0 and not info["success"] and info["privileged"]["depth"] == 4


def test_seeded_goals_are_deterministic():
    assert len(goals()) == N_GOALS == 396
    env = TextcraftEnv()
    first = {s: env.reset(seed=s)[0].text for s in (0, 5, 99, 250)}
    other = TextcraftEnv()
    for s in (250, 99, 5, 0):  # another instance, another order
        assert other.reset(seed=s)[0].text == first[s]
    assert goal_for(N_GOALS + 5) == goal_for(5) == ("minecraft:lodestone", 4)
    # repeated resets no longer grow the package's recipe lists (its reset does)
    assert env.reset(seed=0)[0].text == first[0] and crafting_commands.cache_info().hits > 0
    assert goal_for(0) == ("minecraft:cyan_banner", 4)


def test_splits_follow_stateact_protocol_and_are_disjoint():
    assert TextcraftEnv.splits["test"] == range(0, 100)
    assert TextcraftEnv.splits["train"] == range(100, 396)
    assert not set(TEST) & set(TextcraftEnv.splits["train"])
    assert Counter(goal_for(s)[1] for s in TEST) == {4: 11, 3: 89}
    assert len({goal_for(s)[0] for s in range(N_GOALS)}) == N_GOALS


@pytest.mark.parametrize(
    ("seed", "goal", "depth"),
    [
        # cyan banner <- cyan wool <- cyan dye <- blue dye <- lapis lazuli: 4
        (0, "minecraft:cyan_banner", 4),
        # lodestone <- chiseled stone bricks <- stone brick slab <- stone bricks <- stone: 4
        (5, "minecraft:lodestone", 4),
        # chiseled stone bricks <- stone brick slab <- stone bricks <- stone: 3
        (32, "minecraft:chiseled_stone_bricks", 3),
        # crafting table <- planks (a tag: oak planks <- oak logs): 2
        (178, "minecraft:crafting_table", 2),
        # oak sign <- oak planks <- oak logs, and stick <- bamboo: 2
        (294, "minecraft:oak_sign", 2),
    ],
)
def test_recipe_depth_of_hand_checked_goals(seed: int, goal: str, depth: int):
    assert goal_for(seed) == (goal, depth)
    _, info = TextcraftEnv().reset(seed=seed)
    assert info["privileged"]["depth"] == depth and info["privileged"]["goal_id"] == goal


def test_get_craft_and_inventory_tracking():
    env = TextcraftEnv()
    env.reset(seed=294)  # oak sign
    obs, r, term, _, info = env.step("get 2 oak logs")
    assert obs.text == "Got 2 oak logs" and info["valid"] and r == 0.0 and not term
    assert obs.facts.inventory == ()  # not an inventory listing
    assert observation_renderer("natural")(obs) == "Got 2 oak logs"  # said once
    assert info["privileged"]["tracked"] == {
        "location": None,
        "inventory": ["2 oak logs"],
        "visited": [],
    }
    obs, *_, info = env.step("craft 4 oak planks using 1 oak logs")
    assert obs.text == "Crafted 4 minecraft:oak_planks" and info["valid"]
    assert info["privileged"]["inventory"] == {"minecraft:oak_logs": 1, "minecraft:oak_planks": 4}
    obs, *_, info = env.step("> Inventory.")  # tidied: '>', case, full stop
    assert obs.text == "Inventory: [oak logs] (1) [oak planks] (4)"
    assert obs.facts.inventory == ("1 oak logs", "4 oak planks")
    assert info["privileged"]["facts"] == TextFacts(
        "Inventory: 1 oak logs, 4 oak planks.", None, ("1 oak logs", "4 oak planks")
    )
    env.step("craft 4 stick using 2 oak planks")  # a tag (planks) given as a concrete item
    assert env.step("inventory")[0].facts.inventory == ("1 oak logs", "2 oak planks", "4 stick")
    env.step("craft 4 oak planks using 1 oak logs")
    obs, r, term, trunc, info = env.step("craft 3 oak sign using 6 oak planks, 1 stick")
    assert obs.text == "Crafted 3 minecraft:oak_sign"
    assert r == 1.0 and term and not trunc and info["success"] and info["score"] == 1.0
    assert info["privileged"]["tracked"]["inventory"] == ["3 stick", "3 oak sign"]
    assert info["privileged"]["walkthrough"] == []


@pytest.mark.parametrize(
    ("action", "text"),
    [
        ("xyzzy", "Could not execute xyzzy"),
        ("get 2 oak planks", "Could not find oak planks"),  # craftable: cannot be fetched
        ("get 1 planks", "Could not find planks"),  # a tag
        ("craft 4 stick using 2 planks", "Could not find enough items to craft minecraft:stick"),
        ("craft 1 x using", "Could not execute craft 1 x using"),
        ("get -1 sand", "Could not execute get -1 sand"),
        ("", "Could not execute "),
    ],
)
def test_invalid_commands_are_reported_and_change_nothing(action: str, text: str):
    env = TextcraftEnv()
    env.reset(seed=294)
    env.step("get 2 oak logs")
    obs, r, term, trunc, info = env.step(action)
    assert obs.text == text.strip() and info["valid"] is False
    assert r == 0.0 and not term and not trunc and info["steps"] == 2
    assert info["privileged"]["inventory"] == {"minecraft:oak_logs": 2}


def test_wrong_counts_fail_silently(capsys: pytest.CaptureFixture[str]):
    env = TextcraftEnv()
    env.reset(seed=294)
    env.step("get 4 oak logs")
    env.step("craft 4 oak planks using 1 oak logs")
    obs, *_, info = env.step("craft 8 stick using 4 oak planks")  # one batch per command
    assert obs.text.startswith("Could not find a valid recipe") and not info["valid"]
    assert capsys.readouterr().out == ""  # the package's print is silenced


def test_budget_of_40_truncates():
    env = TextcraftEnv()
    env.reset(seed=0)
    for i in range(40):
        _, _, term, trunc, info = env.step("inventory")
        assert not term and trunc == (i == 39)
    assert info["score"] == 0.0 and not info["success"]


def test_normalise():
    assert normalise("  > Get 2  Oak Logs. ") == "get 2 oak logs"


def test_plan_for_cyan_banner_respects_quantities():
    steps = plan("minecraft:cyan_banner")
    assert steps[:4] == ["get 2 bamboo", "get 24 string", "get 3 green dye", "get 3 lapis lazuli"]
    assert steps.count("craft 1 white wool using 4 string") == 6
    assert steps.count("craft 2 cyan dye using 1 blue dye, 1 green dye") == 3
    assert steps[-1] == "craft 1 cyan banner using 6 cyan wool, 1 stick" and len(steps) == 24
    # replanning from a partial inventory skips what is held
    held = {"minecraft:cyan_wool": 6, "minecraft:bamboo": 2}
    assert plan("minecraft:cyan_banner", held) == [
        "craft 1 stick using 2 bamboo",
        "craft 1 cyan banner using 6 cyan wool, 1 stick",
    ]


def test_expert_wins_every_test_goal_within_40_steps():
    env = TextcraftEnv()
    lengths = []
    for seed in TEST:
        actions, info = play_expert(env, seed)
        assert info["success"] and info["score"] == 1.0, seed
        assert len(actions) == len(TextcraftEnv().reset(seed=seed)[1]["privileged"]["walkthrough"])
        lengths.append(len(actions))
    assert max(lengths) <= 27 and min(lengths) >= 3


@pytest.mark.slow
def test_expert_wins_every_goal():
    env = TextcraftEnv()
    for seed in range(N_GOALS):
        assert play_expert(env, seed)[1]["success"], seed


def test_conformance_and_registration():
    check_env(TextcraftEnv(), seeds=(0, 5, 200))
    assert GYM_IDS["textcraft"] == "statelab/Textcraft-v0"
    env = gym.make("statelab/Textcraft-v0").unwrapped
    assert isinstance(env, TextcraftEnv)
    obs, _ = env.reset(seed=3)
    assert isinstance(obs, Observation) and make_env("textcraft").budget == 40


def test_cli_play_expert_on_a_test_seed():
    res = CliRunner().invoke(app, ["play", "textcraft", "--expert", "--seed", "5"])
    assert res.exit_code == 0, res.output
    assert "Goal: craft lodestone." in res.output
    assert re.fullmatch(r"score=1 success=true steps=\d+", res.output.strip().splitlines()[-1])
