"""Messenger's level-2 movement, scoring, splits and manuals against the original's rules."""

import itertools
import random
import re

from statelab.envs import _messenger_games as games
from statelab.envs._messenger_rules import (
    ACTIONS,
    LOST,
    WON,
    Game,
    State,
    distance,
    mover_options,
    outcomes,
    step,
)
from statelab.envs.messenger import MessengerEnv

FAR = {"enemy": (0, 0), "message": (9, 0), "goal": (9, 9)}
STILL = {"enemy": "immovable", "message": "immovable", "goal": "immovable"}
STILL_KINDS = ("immovable", "immovable", "immovable")


def random_walk(seed: int, movement: dict, positions: dict, steps: int = 30, walk: int = 0):
    """States (half-cells) of an episode where the agent takes random actions."""
    env = MessengerEnv()
    _, info = env.reset(
        seed=seed,
        options={"positions": {**FAR, **positions}, "movement": {**STILL, **movement}},
    )
    rng, states = random.Random(walk), [info["privileged"]["state"]]
    for _ in range(steps):
        _, _, term, trunc, info = env.step(ACTIONS[rng.randrange(5)])
        states.append(info["privileged"]["state"])
        if term or trunc:
            break
    return states


def test_a_chaser_never_gets_farther_and_moves_half_a_cell_every_tick():
    ticks = 0
    for seed in range(20):
        states = random_walk(seed, {"enemy": "chaser"}, {"agent": (5, 5), "enemy": (0, 9)}, 30)
        for before, after in itertools.pairwise(states):
            if after.enemy is None or before.enemy is None:
                continue
            # measured from where the agent was when the chaser chose (VGDL moves it first)
            gap = distance(before.enemy, before.agent)
            assert distance(after.enemy, before.agent) == gap - 1
            assert distance(after.enemy, before.enemy) == 1  # half a cell, every tick
            ticks += 1
    assert ticks > 200


def test_a_fleeing_entity_gets_farther_unless_the_edge_stops_it():
    moved = stayed = 0
    for seed in range(20):
        states = random_walk(
            seed, {"message": "fleeing"}, {"agent": (5, 5), "message": (3, 3), "enemy": None}
        )
        for before, after in itertools.pairwise(states):
            if after.message is None:
                break
            gap = distance(before.message, before.agent)
            if after.message == before.message:  # chose the way off the grid: stepped back
                stayed += 1
                x, y = before.message
                assert x in (0, 18) or y in (0, 18)
            else:
                moved += 1
                assert distance(after.message, before.agent) == gap + 1
    assert moved > 50 and stayed > 0


def test_mover_options_are_vgdls():
    # distance shortened by north and west; all four when on top of the agent; fleeing on a
    # shared column may step sideways either way (both lengthen the Manhattan distance)
    assert mover_options("chaser", (6, 6), (2, 2)) == ((6, 5), (5, 6))
    assert mover_options("chaser", (4, 4), (4, 4)) == ((4, 3), (3, 4), (4, 5), (5, 4))
    assert mover_options("fleeing", (4, 6), (4, 2)) == ((3, 6), (4, 7), (5, 6))
    assert mover_options("immovable", (4, 6), (4, 2)) == ((4, 6),)


def test_a_cell_is_two_ticks_of_a_mover():
    game = Game(2, ("bird", "dog", "ship"), ("chaser", "immovable", "immovable"), ("", "", ""), ())
    s = State((10, 10), (10, 2), (18, 0), (18, 18), False)
    seen = []
    for _ in range(4):
        s, _, _out = step(game, s, 4)
        seen.append((s.enemy, s.enemy[0] // 2, s.enemy[1] // 2))
    # straight down the column: half-cells 3, 4, 5, 6; seen in cells 1, 2, 2, 3
    assert seen == [((10, 3), 5, 1), ((10, 4), 5, 2), ((10, 5), 5, 2), ((10, 6), 5, 3)]


def test_same_seed_same_moves_different_seeds_different_moves():
    where = {"agent": (5, 5), "enemy": (0, 9), "message": (2, 2), "goal": (9, 0)}
    moves = {"enemy": "chaser", "message": "fleeing", "goal": "chaser"}
    a = random_walk(3, moves, where, 12)
    assert a == random_walk(3, moves, where, 12)
    others = [random_walk(s, moves, where, 12) for s in range(4, 10)]
    assert all(o != a for o in others)  # same game, same actions: the draws differ somewhere


def test_outcomes_enumerate_the_draws():
    game = Game(2, ("bird", "dog", "ship"), ("chaser", "fleeing", "immovable"), ("", "", ""), ())
    s = State((10, 10), (4, 4), (14, 16), (0, 18), False)
    outs = outcomes(game, s, 4)
    assert len(outs) == 4 and abs(sum(p for p, *_ in outs) - 1.0) < 1e-9  # 2 x 2 choices
    assert {ns.enemy for _, ns, *_ in outs} == {(4, 5), (5, 4)}


def test_contact_order_is_vgdls():
    game = Game(2, ("bird", "dog", "ship"), STILL_KINDS, ("", "", ""), ())
    # enemy and message at once: the enemy wins
    s = State((10, 10), (10, 7), (11, 8), (0, 0), False)
    assert step(game, s, 0)[1:] == (-1.0, LOST)
    # goal and message at once, without the message: lost, -1 only
    s = State((10, 10), (0, 0), (9, 8), (11, 8), False)
    assert step(game, s, 0)[1:] == (-1.0, LOST)
    # goal with the message: +1
    s = State((10, 10), (0, 0), None, (10, 8), True)
    assert step(game, s, 0)[1:] == (1.0, WON)


def test_known_scores():
    env = MessengerEnv()
    opts = {"movement": STILL}
    env.reset(seed=0, options=opts | {"positions": {**FAR, "agent": (5, 5), "message": (4, 5),
                                                    "goal": (3, 5)}})  # fmt: skip
    env.step("Move West")
    assert env.step("Move West")[4]["score"] == 1.0  # won
    env.reset(seed=0, options=opts | {"positions": {**FAR, "agent": (5, 5), "message": (5, 4)}})
    env.step("Move North")
    assert env.step("Do Nothing")[4]["score"] == 0.5  # holding the message at the end
    env.reset(seed=0, options=opts | {"positions": {**FAR, "agent": (5, 5), "message": (5, 4),
                                                    "enemy": (5, 3)}})  # fmt: skip
    env.step("Move North")
    assert env.step("Move North")[4]["score"] == 0.0  # caught after the pickup


def test_splits_are_the_originals_games():
    assert len(games.GAMES["test"]) == 32 and len(games.GAMES["val"]) == 32
    assert len(games.GAMES["train"]) == 44
    for g in [("airplane", "robot", "ship"), ("airplane", "queen", "thief"),
              ("bird", "robot", "thief"), ("bird", "queen", "ship")]:  # fmt: skip
        assert g in games.GAMES["test"] and g not in games.GAMES["val"]
    test, train = set(games.GAMES["test"]), set(games.GAMES["train"])
    assert not test & set(games.GAMES["val"]) and not test & train
    assert len(games.VARIANTS["test"]) == 27 and len(games.VARIANTS["train"]) == 6
    pairs = {games.game_of(s, "test") for s in MessengerEnv.splits["test"]}
    assert len(pairs) == 32 * 27  # every (game, movement) once


def test_seeds_play_their_splits_games():
    env = MessengerEnv()
    for split in ("test", "val", "train"):
        for seed in list(MessengerEnv.splits[split])[:40]:
            _, info = env.reset(seed=seed)
            game = info["privileged"]["game"]
            assert game.split == split and game.names in games.GAMES[split]
    _, info = env.reset(seed=3 * 1000 + 7)  # a rollout seed outside every range: a test game
    assert info["privileged"]["game"].split == "test"


def test_manuals_vary_as_the_originals_do():
    plain = no_move = lines = 0
    shapes = set()
    moves = {w for k in ("chaser", "fleeing", "immovable")
             for w in games.MOVE_CLAUSES[k] + games.MOVE_ADJECTIVES[k]}  # fmt: skip
    env = MessengerEnv()
    for seed in range(300):
        _, info = env.reset(seed=seed)
        game = info["privileged"]["game"]
        for name, word in zip(game.names, game.synonyms, strict=True):
            line = next(x for x in game.sentences if re.search(rf"\b{word}\b", x))
            lines += 1
            plain += word == name
            no_move += not any(m in line for m in moves)
            shapes.add(re.sub(rf"\b{word}\b", "X", line).split("X")[0][:8])
    assert 0.25 < plain / lines < 0.45  # the original: about a third name the entity plainly
    assert 0.10 < no_move / lines < 0.20  # the original: 15% carry no movement
    assert len(shapes) >= 6  # several word orders
