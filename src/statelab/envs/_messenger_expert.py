"""Messenger's expert: a safe greedy policy on the privileged game and state.

It reads the roles, movements and positions (privileged), never the generator's future
draws: each tick it weighs every action over all the directions the movers may take
(:func:`~statelab.envs._messenger_rules.outcomes`). Its win rates on the test split are in
``tests/envs/test_messenger_expert.py``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from statelab.core import Observation
from statelab.envs._messenger_rules import (
    ACTIONS,
    LOST,
    WON,
    Game,
    Pos,
    State,
    options,
    outcomes,
    touching,
)

#: the expert keeps at least this many cells it reaches before any threat
ROOM = 20


def _threats(game: Game, s: State) -> list[Pos]:
    """Where something that would end the game may be after this tick's moves."""
    every = options(game, s)
    return [*every[0], *(() if s.has_message else every[2])]


def _to_go(game: Game, s: State) -> int:
    """Cells still to walk: to the message around the threats, then on to the goal."""
    route = _route(game, s, _threats(game, s))
    if route is None:  # walled off for now: head that way anyway, at a cost
        route = 10 + (_route(game, s, ()) or 0)
    if s.has_message or s.message is None or s.goal is None:
        return route
    return route + 1 + (abs(s.message[0] - s.goal[0]) + abs(s.message[1] - s.goal[1])) // 2


def _route(game: Game, s: State, avoid: Sequence[Pos]) -> int | None:
    """Cells to walk from the agent to touching the current target, around ``avoid``."""
    target = s.goal if s.has_message else s.message
    if target is None:
        return 0
    w, h = game.size
    start = s.agent
    seen, todo = {start}, deque([(start, 0)])
    while todo:
        p, d = todo.popleft()
        if touching(p, target):
            return d
        for dx, dy in ((0, -2), (0, 2), (-2, 0), (2, 0)):
            q = (p[0] + dx, p[1] + dy)
            if q in seen or not (0 <= q[0] < 2 * w and 0 <= q[1] < 2 * h):
                continue
            if any(abs(q[0] - t[0]) < 3 and abs(q[1] - t[1]) < 3 for t in avoid):
                continue
            seen.add(q)
            todo.append((q, d + 1))
    return None


def _near(game: Game, s: State, reach: int) -> bool:
    """Whether a threat is within ``reach`` half-cells of the agent."""
    return any(abs(t[0] - s.agent[0]) + abs(t[1] - s.agent[1]) <= reach for t in _threats(game, s))


def _escapable(game: Game, s: State, depth: int = 2) -> bool:
    """Whether some action surely does not lose next tick, and (depth 2) leads only to states
    where one again surely does not. Far from every threat, trivially."""
    if not _near(game, s, 4 * depth + 2):
        return True
    for a in range(len(ACTIONS)):
        outs = outcomes(game, s, a)
        if any(out == LOST for *_, out in outs):
            continue
        if depth == 1 or all(out or _escapable(game, ns, depth - 1) for _, ns, _, out in outs):
            return True
    return False


def _crowding(game: Game, s: State) -> float:
    """A cost for threats close by and for little room to run: the cells the agent reaches
    (a cell a tick) before any threat (half a cell a tick) can touch them."""
    threats = _threats(game, s)
    near = [abs(t[0] - s.agent[0]) + abs(t[1] - s.agent[1]) for t in threats]
    if not near:
        return 0.0
    (w, h), (ax, ay) = game.size, s.agent
    room = 0
    for x in range(0, 2 * w, 2):
        for y in range(0, 2 * h, 2):
            mine = (abs(x - ax) + abs(y - ay)) // 2
            room += all(mine < abs(x - t[0]) + abs(y - t[1]) - 1 for t in threats)
    return 0.5 * max(0, 9 - min(near)) / 2 + max(0, ROOM - room) / 4


def expert_action(game: Game, s: State) -> int:
    """A safe greedy step: never risk a loss when some action does not; keep a way out for
    two ticks; take the win, then the message, when it comes; else shorten the walk to the
    message (then the goal) around where the enemy (and, before the message, the goal) may
    be, keeping room to run."""
    best: tuple[float, ...] | None = None
    choice = 4
    for a in range(len(ACTIONS)):
        lose = win = trap = dist = gain = 0.0
        for p, ns, reward, out in outcomes(game, s, a):
            gain += p * reward
            if out == LOST:
                lose += p
            elif out == WON:
                win += p
            else:
                trap += p * (not _escapable(game, ns))
                dist += p * (_to_go(game, ns) + _crowding(game, ns))
        key = (lose, trap, -win, -gain, dist, a)
        if best is None or key < best:
            best, choice = key, a
    return choice


class MessengerExpert:
    """Plays :func:`expert_action` on the privileged game and state (never the future draws)."""

    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        p = info["privileged"]
        return ACTIONS[expert_action(p["game"], p["state"])]
