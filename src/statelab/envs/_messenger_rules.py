"""Messenger's rules as the original game plays them (messenger-emma on py-vgdl).

Pure functions of a :class:`State`; the only randomness (which of its allowed directions a
mover takes) comes in as ``picks``, so the env draws them from its seeded generator and the
expert can enumerate them.

Half speed. The original's level-2 VGDL game has ``block_size=2``: a cell is 2 pixels, the
avatar (``MovingAvatar``, speed 1) moves 2 pixels (a cell) a tick, and a ``Chaser`` or
``Fleeing`` entity with ``speed=0.5`` moves 0.5 * 2 = 1 pixel, half a cell, *every* tick. So
positions here are kept in half-cells (a cell (x, y) is (2x, 2y)): a mover straddles two
cells after an odd number of moves along an axis. This is the original's own state, not an
approximation (neither "a move every other tick" nor a random phase would give the same
contacts). What an agent sees is the cell of the entity's north-west corner, ``pos // 2``, as
the original's observer (``rect.left // block_size``) gives it.

A tick, in VGDL's order (sprites update in the order the game declares them: enemy, message,
goal, then the avatar):

1. each mover picks uniformly among the base directions (north, west, south, east, in that
   order) that strictly shorten (chaser) or lengthen (fleeing) the Manhattan distance in
   half-cells from it to the agent's position *before* the agent moves; if none does, among
   all four; it moves half a cell that way;
2. the agent moves a cell;
3. whatever left the grid steps back to where it was (VGDL ``EOS > stepBack``): a fleeing
   entity in a corner that picks the way out stays put;
4. contacts, where two 2x2 boxes overlap (an entity straddling two cells touches an agent in
   either): the enemy: -1, lost; the goal without the message: -1, lost; the message:
   +0.5 and held (it leaves the grid); the goal with the message held before this tick:
   +1, won. The first of these that applies decides a loss, as VGDL's interaction order does.

Level 1 (``stage_one.py``, not VGDL) keeps whole cells: nothing moves but the agent; the
message wins (+1) unless already held (-1).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

ENTITIES = ("airplane", "mage", "dog", "bird", "fish", "scientist", "thief", "ship", "ball",
            "robot", "queen", "sword")  # fmt: skip
ROLES = ("enemy", "message", "goal")
MOVEMENTS = ("chaser", "fleeing", "immovable")
ACTIONS: tuple[str, ...] = ("Move North", "Move South", "Move West", "Move East", "Do Nothing")
#: one cell in half-cells, per action
DELTAS = ((0, -2), (0, 2), (-2, 0), (2, 0), (0, 0))
#: VGDL's BASEDIRS order (up, left, down, right), half a cell each
BASEDIRS = ((0, -1), (-1, 0), (0, 1), (1, 0))
WON, LOST = "won", "lost"

Pos = tuple[int, int]


class State(NamedTuple):
    """The whole game state, positions in half-cells; an entity is None once it has left."""

    agent: Pos
    enemy: Pos | None
    message: Pos | None
    goal: Pos | None
    has_message: bool
    tick: int = 0

    def where(self) -> tuple[Pos | None, Pos | None, Pos | None]:
        return self.enemy, self.message, self.goal


@dataclass(frozen=True)
class Game:
    """What stays fixed in an episode: who is who, how they move, and how the manual says so."""

    level: int
    names: tuple[str, str, str]  # by role: enemy, message, goal
    movement: tuple[str, str, str]  # by role
    synonyms: tuple[str, str, str]  # by role: the word the manual uses for it
    sentences: tuple[str, ...]  # the manual's entity lines, in shown order
    size: Pos = (10, 10)
    split: str = "test"

    @property
    def order(self) -> tuple[int, ...]:
        """Role indices in canonical entity order (the order observations list them)."""
        return tuple(sorted(range(3), key=lambda r: ENTITIES.index(self.names[r])))


def half(cell: Sequence[int]) -> Pos:
    """A cell's position in half-cells."""
    return (2 * int(cell[0]), 2 * int(cell[1]))


def cell(pos: Pos) -> Pos:
    """The cell an observer reports for a position in half-cells (its north-west corner)."""
    return (pos[0] // 2, pos[1] // 2)


def distance(a: Pos, b: Pos) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def touching(a: Pos, b: Pos | None) -> bool:
    """Whether two one-cell boxes at half-cell positions overlap."""
    return b is not None and abs(a[0] - b[0]) < 2 and abs(a[1] - b[1]) < 2


def inside(p: Pos, size: Pos) -> bool:
    return 0 <= p[0] <= 2 * (size[0] - 1) and 0 <= p[1] <= 2 * (size[1] - 1)


def mover_options(kind: str, pos: Pos, agent: Pos) -> tuple[Pos, ...]:
    """Where a mover may go this tick (before stepping back from the edge), in VGDL's order."""
    if kind == "immovable":
        return (pos,)
    far = distance(pos, agent)
    steps = [(pos[0] + dx, pos[1] + dy) for dx, dy in BASEDIRS]
    if kind == "chaser":
        good = [p for p in steps if distance(p, agent) < far]
    else:
        good = [p for p in steps if distance(p, agent) > far]
    return tuple(good or steps)


def options(game: Game, s: State) -> tuple[tuple[Pos, ...], ...]:
    """Each role's possible next positions (after stepping back); () for one that has left."""
    out: list[tuple[Pos, ...]] = []
    for kind, pos in zip(game.movement, s.where(), strict=True):
        if pos is None:
            out.append(())
        elif game.level == 1:
            out.append((pos,))
        else:
            moves = mover_options(kind, pos, s.agent)
            out.append(tuple(p if inside(p, game.size) else pos for p in moves))
    return tuple(out)


def n_choices(game: Game, s: State) -> tuple[int, ...]:
    """How many directions each role chooses among this tick (1: no draw needed)."""
    return tuple(max(1, len(o)) for o in options(game, s))


def _contacts(game: Game, s: State, held_before: bool) -> tuple[State, float, str | None]:
    a = s.agent
    if touching(a, s.enemy):
        return s, -1.0, LOST
    if touching(a, s.goal) and not s.has_message:
        return s, -1.0, LOST
    reward = 0.0
    if touching(a, s.message) and not s.has_message:
        if game.level == 1:
            return s, 1.0, WON
        s, reward = s._replace(message=None, has_message=True), 0.5
    elif touching(a, s.message) and game.level == 1:
        return s, -1.0, LOST  # stage one: the message again while holding it
    if touching(a, s.goal) and held_before:
        return s, reward + 1.0, WON
    return s, reward, None


def step(game: Game, s: State, action: int, picks: Sequence[int] = (0, 0, 0)) -> tuple[
    State, float, str | None
]:  # fmt: skip
    """One tick: (next state, reward, 'won' / 'lost' / None). ``picks[r]`` is the index of
    role r's direction among :func:`options` (taken modulo their number)."""
    moved = []
    for opts, pick in zip(options(game, s), picks, strict=True):
        moved.append(opts[pick % len(opts)] if opts else None)
    (x, y), (dx, dy) = s.agent, DELTAS[action]
    agent = (x + dx, y + dy) if inside((x + dx, y + dy), game.size) else (x, y)
    nxt = State(agent, moved[0], moved[1], moved[2], s.has_message, s.tick + 1)
    return _contacts(game, nxt, s.has_message)


def outcomes(game: Game, s: State, action: int) -> list[tuple[float, State, float, str | None]]:
    """Every (probability, state, reward, outcome) that ``action`` may lead to."""
    counts = n_choices(game, s)
    p = 1.0
    for n in counts:
        p /= n
    seen: dict[State, tuple[float, float, str | None]] = {}
    for picks in itertools.product(*(range(n) for n in counts)):
        ns, r, out = step(game, s, action, picks)
        q = seen[ns][0] if ns in seen else 0.0
        seen[ns] = (q + p, r, out)
    return [(q, ns, r, out) for ns, (q, r, out) in seen.items()]
