import re

import gymnasium as gym
import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError, Observation
from statelab.envs import GYM_IDS, make_env
from statelab.envs._messenger_games import SYNONYMS
from statelab.envs._messenger_rules import ACTIONS, ENTITIES
from statelab.envs.checker import check_env
from statelab.envs.messenger import MessengerEnv
from statelab.facts import MessengerFacts
from statelab.state import render

FAR = {"enemy": (0, 0), "message": (9, 0), "goal": (9, 9)}
STILL = {"enemy": "immovable", "message": "immovable", "goal": "immovable"}


def start(positions: dict, movement: dict | None = None, **opts):
    """A level-2 episode with hand-placed agent and entities (roles and names from seed 0)."""
    env = MessengerEnv()
    obs, info = env.reset(
        seed=0,
        options={"positions": {**FAR, **positions}, "movement": {**STILL, **(movement or {})}}
        | opts,
    )
    return env, obs, info


def where(obs: Observation, info: dict, role: str) -> tuple[int, int] | None:
    name = info["privileged"]["roles"][role]
    return dict(obs.facts.entities).get(name)


def play_expert(env: MessengerEnv, seed: int) -> tuple[list[str], dict]:
    obs, info = env.reset(seed=seed)
    expert, actions, done = env.expert(), [], False
    while not done:
        actions.append(expert.act(obs, info))
        obs, _, term, trunc, info = env.step(actions[-1])
        done = term or trunc
    return actions, info


def test_actions_and_budgets():
    assert ACTIONS == ("Move North", "Move South", "Move West", "Move East", "Do Nothing")
    assert MessengerEnv().budget == 64 and MessengerEnv(level=1).budget == 4
    assert MessengerEnv(max_steps=10).budget == 10 and MessengerEnv.history_len == 10


def test_message_pickup_sets_has_message_and_gives_half():
    env, obs, info = start({"agent": (5, 5), "message": (5, 4)})
    assert not obs.facts.has_message and info["score"] == 0.5
    obs, reward, term, trunc, info = env.step("Move North")
    assert reward == 0.5 and not term and not trunc
    assert obs.facts.has_message and obs.facts.agent == (5, 4)
    assert where(obs, info, "message") is None  # the holder leaves the grid
    assert obs.text.startswith(
        "You took action Move North.\n\nYou (agent) already have the message."
    )
    assert info["score"] == 0.75 and not info["success"]


def test_enemy_contact_ends_with_minus_one():
    env, *_ = start({"agent": (5, 5), "enemy": (6, 5)})
    _, reward, term, _, info = env.step("Move East")
    assert reward == -1.0 and term and info["score"] == 0.0 and not info["success"]


def test_goal_without_message_ends_with_minus_one():
    env, *_ = start({"agent": (5, 5), "goal": (5, 6)})
    _, reward, term, _, info = env.step("Move South")
    assert reward == -1.0 and term and info["score"] == 0.0 and not info["success"]


def test_goal_with_message_wins():
    env, *_ = start({"agent": (5, 5), "message": (4, 5), "goal": (3, 5)})
    assert env.step("Move West")[1] == 0.5
    _, reward, term, _, info = env.step("Move West")
    assert reward == 1.0 and term and info["success"] and info["score"] == 1.0


def test_caught_after_pickup_scores_zero():
    """SmartPlay scores the last step's reward: -1 -> 0.0, whatever came before."""
    env, *_ = start({"agent": (5, 5), "message": (5, 4), "enemy": (5, 3)})
    env.step("Move North")
    _, reward, term, _, info = env.step("Move North")
    assert reward == -1.0 and term and info["score"] == 0.0


def test_holding_the_message_at_the_end_scores_a_half():
    env, *_ = start({"agent": (5, 5), "message": (5, 4)})
    assert env.step("Move North")[4]["score"] == 0.75  # the last step picked it up: r = 0.5
    _, reward, _, _, info = env.step("Do Nothing")
    assert reward == 0.0 and info["score"] == 0.5 and not info["success"]
    env = MessengerEnv(max_steps=2)
    env.reset(seed=0, options={"positions": {**FAR, "agent": (5, 5), "message": (5, 4)},
                               "movement": STILL})  # fmt: skip
    env.step("Move North")
    *_, trunc, info = env.step("Move South")
    assert trunc and info["score"] == 0.5


def test_chaser_catches_an_idle_agent_and_straddling_is_contact():
    # the chaser moves half a cell a tick: from (5, 3) it straddles (5, 3)-(5, 4) after one
    # tick, which touches an agent in (5, 4)
    env, *_ = start({"agent": (5, 5), "enemy": (5, 3)}, {"enemy": "chaser"})
    _, reward, term, *_ = env.step("Move North")
    assert reward == -1.0 and term
    env, *_ = start({"agent": (5, 5), "enemy": (5, 4)}, {"enemy": "chaser"})
    _, reward, term, *_ = env.step("Move North")  # the agent steps into the enemy's cell
    assert reward == -1.0 and term
    env, *_ = start({"agent": (5, 5), "enemy": (5, 2)}, {"enemy": "chaser"})
    obs, reward, term, _, info = env.step("Do Nothing")  # (5, 2) -> straddles 2-3: no touch
    assert not term and where(obs, info, "enemy") == (5, 2)
    assert info["privileged"]["state"].enemy == (10, 5)  # half-cells


def test_walls_stop_the_agent():
    env, *_ = start({"agent": (0, 5)})
    obs, *_ = env.step("Move West")
    assert obs.facts.agent == (0, 5)


def test_invalid_action_freezes_the_world_but_spends_a_step():
    env, obs, _ = start({"agent": (5, 5), "enemy": (5, 1)}, {"enemy": "chaser"})
    obs2, reward, term, _, info2 = env.step("fly to the moon")
    assert info2["valid"] is False and reward == 0.0 and not term and env.steps == 1
    assert obs2.facts == obs.facts and "not one of the actions" in obs2.feedback
    assert info2["privileged"]["state"].tick == 0


def test_seed_words_are_aliases():
    env, *_ = start({"agent": (5, 5)})
    for word, at in [("up", (5, 4)), ("left", (4, 4)), ("down", (4, 5)), ("right", (5, 5))]:
        obs, _, _, _, info = env.step(word)
        assert obs.facts.agent == at and info["valid"]
    obs, *_ = env.step("stay")
    assert obs.feedback == "You took action Do Nothing."


def test_manual_names_each_entity_once_and_observations_use_canonical_names():
    for seed in range(30):
        env = MessengerEnv()
        obs, info = env.reset(seed=seed)
        roles = info["privileged"]["roles"]
        game = info["privileged"]["game"]
        lines = game.sentences
        assert len(lines) == 3 and all(line in env.manual for line in lines)
        for role, name in roles.items():
            word = game.synonyms[("enemy", "message", "goal").index(role)]
            assert word == name or word in SYNONYMS[name]
            assert sum(re.search(rf"\b{word}\b", line) is not None for line in lines) == 1
        assert [n for n, _ in obs.facts.entities] == sorted(roles.values(), key=ENTITIES.index)


def test_same_seed_same_game_different_seeds_different_games():
    def game(seed: int) -> tuple:
        env = MessengerEnv()
        obs, info = env.reset(seed=seed)
        return env.manual, obs.text, info["privileged"]["state"]

    assert game(7) == game(7)
    games = {game(s) for s in range(20)}
    assert len(games) == 20
    movements = set()
    for s in range(10):
        _, info = MessengerEnv().reset(seed=s)
        movements.update(info["privileged"]["movement"].values())
    assert movements == {"chaser", "fleeing", "immovable"}


def test_text_is_the_natural_format():
    env = MessengerEnv()
    obs, _ = env.reset(seed=3)
    assert isinstance(obs.facts, MessengerFacts)
    assert obs.text == render("natural", obs.facts) and obs.feedback == ""
    obs, *_ = env.step("Do Nothing")
    assert obs.text == "You took action Do Nothing.\n\n" + render("natural", obs.facts)


def test_level_one_layout_and_rules():
    env = MessengerEnv(level=1)
    held = 0
    for seed in range(40):
        obs, info = env.reset(seed=seed)
        assert obs.facts.agent == (5, 5)
        assert set(info["privileged"]["movement"].values()) == {"immovable"}
        cells = {p for _, p in obs.facts.entities}
        assert len(cells) == 3 and cells <= {(5, 3), (3, 5), (7, 5), (5, 7)}
        held += obs.facts.has_message
    assert 0 < held < 20  # about 20% start with the message
    env.reset(seed=0, options={"positions": {"message": (5, 4)}, "has_message": False})
    _, reward, term, _, info = env.step("Move North")
    assert reward == 1.0 and term and info["success"]  # stage one: reaching the message wins


def test_conformance_and_registration():
    check_env(MessengerEnv())
    check_env(MessengerEnv(level=1))
    assert GYM_IDS["messenger"] == "statelab/Messenger-v0"
    assert isinstance(gym.make("statelab/Messenger-v0").unwrapped, MessengerEnv)
    assert make_env("messenger:1").level == 1 and make_env("messenger").level == 2
    with pytest.raises(ConfigError, match="the level, 1 or 2"):
        make_env("messenger:3")


def test_cli_expert_plays_seed_5():
    res = CliRunner().invoke(app, ["play", "messenger", "--expert", "--seed", "5"])
    assert res.exit_code == 0, res.output
    assert re.fullmatch(r"score=1 success=true steps=\d+", res.output.strip().splitlines()[-1])
