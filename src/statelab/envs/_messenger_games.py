"""Messenger's fixed games (entity-role triples, by split) and our manual generator.

Games. The original (messenger-emma's ``games.json``) fixes which entity plays which role in
each split; we rebuild the same sets from their rule rather than a copied list:

- test (32) and validation (32): enemy in {airplane, scientist, bird, mage}, message in
  {robot, queen, dog, sword}, goal in {ship, fish, thief, ball}; when the enemy is airplane or
  scientist, test takes the triples whose message is robot or dog exactly when the goal is
  ship or fish, and bird or mage take the other pairing; validation is the other half;
- train: 40 "multi-combination" triples of distinct entities, enemy in {queen, robot, ship,
  thief}, message in {airplane, scientist, ship, thief}, goal in {airplane, queen, robot,
  scientist}, and 4 "single-combination" ones.

Movement variants: the original's test split plays all 27 (chaser, fleeing, immovable)
combinations (``stage_2_nd``, "new dynamics"); training and validation play the 6 in which
each role moves differently (``stage_2``).

Manuals. The original draws each entity's sentence from ~1,200 crowd-written descriptions;
about a third name the entity plainly, the rest by a synonym, and 15% say nothing about
movement. Ours are written from phrase banks of our own with the same kinds of variation:
the plain name with probability :data:`P_PLAIN`, no movement with :data:`P_NO_MOVE`, and
several word orders (name first, role first, movement first, as an adjective or a clause).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from statelab.envs._messenger_rules import MOVEMENTS, ROLES

SYNONYMS: dict[str, tuple[str, ...]] = {
    "airplane": ("jet", "plane"), "mage": ("wizard", "sorcerer"), "dog": ("canine", "hound"),
    "bird": ("eagle", "hawk"), "fish": ("whale", "shark"), "scientist": ("researcher",),
    "thief": ("bandit", "robber"), "ship": ("ferry", "boat"), "ball": ("sphere",),
    "robot": ("bot", "android"), "queen": ("princess", "monarch"), "sword": ("saber", "blade"),
}  # fmt: skip
P_PLAIN = 0.35
P_NO_MOVE = 0.15


def _test_half(enemy: str, message: str, goal: str) -> bool:
    paired = (message in ("robot", "dog")) == (goal in ("ship", "fish"))
    return paired if enemy in ("airplane", "scientist") else not paired


_CUBE = list(
    itertools.product(
        ("airplane", "scientist", "bird", "mage"),
        ("robot", "queen", "dog", "sword"),
        ("ship", "fish", "thief", "ball"),
    )
)
GAMES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "test": tuple(g for g in _CUBE if _test_half(*g)),
    "val": tuple(g for g in _CUBE if not _test_half(*g)),
    "train": (
        *tuple(
            g
            for g in itertools.product(
                ("queen", "robot", "ship", "thief"),
                ("airplane", "scientist", "ship", "thief"),
                ("airplane", "queen", "robot", "scientist"),
            )
            if len(set(g)) == 3
        ),
        ("dog", "fish", "bird"),
        ("fish", "bird", "dog"),
        ("sword", "ball", "mage"),
        ("ball", "mage", "sword"),
    ),
}
_ALL = tuple((a, b, c) for a in MOVEMENTS for b in MOVEMENTS for c in MOVEMENTS)
#: movement by role: all 27 combinations (test), or the 6 where the three differ
VARIANTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "test": _ALL,
    "val": tuple(v for v in _ALL if len(set(v)) == 3),
    "train": tuple(v for v in _ALL if len(set(v)) == 3),
}
#: seeds of each split; a seed in none of them (a rollout's seed * 1000 + i, say) is a test
#: seed. The k-th seed of a split plays game k % G with variant (k + k // lcm(G, V)) % V (G
#: games, V variants): the split's first G * V seeds play each (game, variant) once, and
#: consecutive seeds differ in both. Test: 32 x 27, so seeds 0-863.
SPLITS: dict[str, range] = {
    "test": range(0, len(GAMES["test"]) * len(VARIANTS["test"])),
    "val": range(1_000_000_000, 1_000_001_000),
    "train": range(2_000_000_000, 2_000_010_000),
}


def split_of(seed: int | None) -> str:
    if seed is not None:
        for name in ("val", "train"):
            if seed in SPLITS[name]:
                return name
    return "test"


def game_of(seed: int, split: str) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """The (names by role, movement by role) a seed of ``split`` plays."""
    k = seed - SPLITS[split].start if split != "test" else seed
    games, variants = GAMES[split], VARIANTS[split]
    period = math.lcm(len(games), len(variants))
    return games[k % len(games)], variants[(k + k // period) % len(variants)]


ROLE_WORDS = {
    "enemy": ("a deadly enemy", "the lethal opponent", "a dangerous adversary", "the enemy",
              "a hostile foe", "the threat to avoid"),
    "message": ("the secret message", "the classified report", "a restricted document",
                "the message", "the important note", "the critical intel"),
    "goal": ("the essential goal", "the crucial target", "a vital objective", "the goal",
             "the destination", "the receiver of the message"),
}  # fmt: skip
MOVE_CLAUSES = {
    "chaser": ("is coming towards you", "is chasing you", "keeps approaching you",
               "hunts you down", "follows you around", "moves closer to you"),
    "fleeing": ("is running away from you", "flees from you", "tries to escape from you",
                "keeps its distance from you", "avoids you", "moves away from you"),
    "immovable": ("does not move", "stays still", "never leaves its place", "is stationary",
                  "remains where it is", "cannot move"),
}  # fmt: skip
MOVE_ADJECTIVES = {
    "chaser": ("approaching", "pursuing", "chasing"),
    "fleeing": ("fleeing", "evasive", "retreating"),
    "immovable": ("stationary", "motionless", "unmoving"),
}
WITH_MOVE = (
    "the {name} that {clause} is {role}.",
    "{role} is the {name}, which {clause}.",
    "the {name} {clause}; it is {role}.",
    "the {adj} {name} is {role}.",
    "{role} is the {adj} {name}.",
    "watch the {name}: it {clause}, and it is {role}.",
    "looking for {role}? it is the {name}, which {clause}.",
)
NO_MOVE = (
    "the {name} is {role}.",
    "{role} is the {name}.",
    "the {name} plays the part of {role}.",
    "the {name} is known to be {role}.",
)


def _pick(rng: Any, xs: tuple[str, ...]) -> str:
    return xs[int(rng.integers(len(xs)))]


def sentence(rng: Any, name: str, role: str, kind: str) -> tuple[str, str]:
    """One manual line about ``name``: (the word it uses for the entity, the line)."""
    word = name if rng.random() < P_PLAIN else _pick(rng, SYNONYMS[name])
    if rng.random() < P_NO_MOVE:
        text = _pick(rng, NO_MOVE).format(name=word, role=_pick(rng, ROLE_WORDS[role]))
    else:
        text = _pick(rng, WITH_MOVE).format(
            name=word,
            role=_pick(rng, ROLE_WORDS[role]),
            clause=_pick(rng, MOVE_CLAUSES[kind]),
            adj=_pick(rng, MOVE_ADJECTIVES[kind]),
        )
    return word, text[0].upper() + text[1:]


def manual_lines(
    rng: Any, names: tuple[str, str, str], movement: tuple[str, str, str]
) -> tuple[tuple[str, str, str], tuple[str, ...]]:
    """(the word used for each role, the three lines in shown order)."""
    words, lines = [], []
    for name, role, kind in zip(names, ROLES, movement, strict=True):
        word, line = sentence(rng, name, role, kind)
        words.append(word)
        lines.append(line)
    shown = tuple(lines[int(i)] for i in rng.permutation(3))
    return (words[0], words[1], words[2]), shown
