"""Messenger as SmartPlay plays it (seed 000, section 3.3; SmartPlay's copy of MESSENGER/EMMA).

Ours (SmartPlay's is not installable), after its ``messenger`` package (``stage_one.py``,
``stage_two.py``, the ``stage_2_nd`` VGDL files) and its text wrapper (``messenger_env.py``).

Game. A 10x10 open grid (a move off it leaves the mover in place). Three of twelve entities
play the enemy, the message holder and the goal. The manual has one sentence per entity, in
shuffled order, naming it only by a synonym (hawk for bird, ...) with its role and movement;
observations use canonical names. Entities, roles, synonyms, wording, movements and layout
all come from the episode seed. Positions are (x, y): x the column from the west edge, y the
row from the north edge (:class:`~statelab.facts.MessengerFacts`; the manual says so).

- Level 2 (default; ``messenger:2``): each entity is a chaser, fleeing or immovable (27
  combinations); agent and entities permuted over the corners (2, 2), (2, 7), (7, 2), (7, 7).
  Speed 0.5: movers move one cell on odd steps (1st, 3rd, ...) only. A chaser closes the larger
  gap to the agent (the vertical one on ties); a fleeing entity takes the step that increases
  its distance and leaves it most room to the wall (N, S, W, E on ties), or stays if cornered.
- Level 1 (``messenger:1``): all immovable, agent at (5, 5), entities on three of (5, 3),
  (3, 5), (7, 5), (5, 7); 20% of episodes start with the message held.

Actions (SmartPlay's order) and the seed's words for them: "Move North" = up (y - 1), "Move
South" = down (y + 1), "Move West" = left (x - 1), "Move East" = right (x + 1), "Do Nothing" =
stay; those words (and north, south, ...) are accepted too. Anything else is invalid: the world
does not advance, but the step counts against the budget.

A step: the agent moves; contacts are resolved; on odd steps movers move; contacts are resolved
again (so swapping cells is a contact). In VGDL's order: enemy -1, ends; goal +1 and success
with the message, else -1, ends; message: level 2 +0.5, held, its holder leaves the grid;
level 1 (``stage_one.py``) +1 and success when not held, else -1, ends.

Score: SmartPlay's (reward + 1) / 2 over the episode's total reward clipped to [-1, 1]:
delivered (0.5 + 1, clipped) = 1.0; message held = 0.75; nothing = 0.5; caught after taking the
message = 0.25; caught, or the goal reached without the message = 0.0.

Budget: SmartPlay's 4 (level 1) and 64 (level 2) by default. Seed 000 ran 10 steps with a
10-step history (Table 2; our ``history_len``): its configs pass ``max_steps: 10``. Most corner
layouts need more than 10 steps (a message on the opposite corner is 10 away), so under that
budget the expert wins 43 of seeds 0-99 (all 100 under 64); see ``tests/envs/test_messenger.py``.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, NamedTuple

from statelab.core import ConfigError, Env, Observation
from statelab.envs._draw import grid_image
from statelab.envs._registry import register_env
from statelab.facts import MessengerFacts, render

ENTITIES = ("airplane", "mage", "dog", "bird", "fish", "scientist", "thief", "ship", "ball",
            "robot", "queen", "sword")  # fmt: skip
SYNONYMS: dict[str, tuple[str, ...]] = {
    "airplane": ("jet",), "mage": ("wizard", "sorcerer"), "dog": ("canine", "hound"),
    "bird": ("eagle", "hawk"), "fish": ("whale", "shark"), "scientist": ("researcher",),
    "thief": ("bandit",), "ship": ("ferry",), "ball": ("sphere",), "robot": ("bot",),
    "queen": ("princess",), "sword": ("saber",),
}  # fmt: skip
ROLES = ("enemy", "message", "goal")
MOVEMENTS = ("chaser", "fleeing", "immovable")
ACTIONS: tuple[str, ...] = ("Move North", "Move South", "Move West", "Move East", "Do Nothing")
DELTAS = ((0, -1), (0, 1), (-1, 0), (1, 0), (0, 0))
_ALIASES = {"north": 0, "up": 0, "move up": 0, "south": 1, "down": 1, "move down": 1,
            "west": 2, "left": 2, "move left": 2, "east": 3, "right": 3, "move right": 3,
            "stay": 4, "nothing": 4, "wait": 4}  # fmt: skip
_LOOKUP = {a.lower(): i for i, a in enumerate(ACTIONS)} | _ALIASES
CORNERS = ((2, 2), (7, 2), (2, 7), (7, 7))
L1_AGENT, L1_CELLS = (5, 5), ((5, 3), (3, 5), (7, 5), (5, 7))
LEVEL_STEPS = {1: 4, 2: 64}
WON, LOST = "won", "lost"

CONTEXT = (
    "In the game MESSENGER, each entity takes one of three roles: an enemy, the message or the "
    "goal. Your objective is to bring the message to the goal while avoiding the enemy. If you "
    "touch the enemy at any point, or reach the goal before you have the message, you lose the "
    "game and receive a reward of -1."
)
ADVICE = (
    "To solve a game, it may help to list the objects you see, match each one with an entity "
    "description, and decide whether it is good or bad to touch it. The names of in-game "
    "objects may not match the descriptions exactly: identify them through synonyms."
)
COORDS = (
    "Where positions are given, they are (x, y) on the 10x10 grid: x is the column from 0 "
    "(west edge) to 9 (east edge), y the row from 0 (north edge) to 9 (south edge)."
)
ROLE_WORDS = {
    "enemy": ("a deadly enemy", "the lethal opponent", "a dangerous adversary"),
    "message": ("the secret message", "the classified report", "a restricted document"),
    "goal": ("the essential goal", "the crucial target", "a vital objective"),
}
MOVE_WORDS = {
    "chaser": ("is coming towards you", "is chasing you", "keeps approaching you"),
    "fleeing": ("is running away from you", "flees from you", "tries to escape from you"),
    "immovable": ("does not move", "stays still", "never leaves its place"),
}
PATTERNS = ("the {syn} that {move} is {role}.", "{role} is the {syn}, which {move}.",
            "the {syn} {move}; it is {role}.")  # fmt: skip
GOAL = "Pick up the message and bring it to the goal, avoiding the enemy."

Pos = tuple[int, int]


class State(NamedTuple):
    """The whole game state; an entity is None once it has left the grid."""

    agent: Pos
    enemy: Pos | None
    message: Pos | None
    goal: Pos | None
    has_message: bool
    tick: int = 0


@dataclass(frozen=True)
class Game:
    """What stays fixed in an episode: who is who, how they move, and how the manual says so."""

    level: int
    names: tuple[str, str, str]  # by role: enemy, message, goal
    movement: tuple[str, str, str]  # by role
    synonyms: tuple[str, str, str]  # by role: the word the manual uses
    sentences: tuple[str, ...]  # the manual's entity lines, in shown order
    size: Pos = (10, 10)

    @property
    def order(self) -> tuple[int, ...]:
        """Role indices in canonical entity order (the order observations list them)."""
        return tuple(sorted(range(3), key=lambda r: ENTITIES.index(self.names[r])))


def parse_action(action: str) -> int | None:
    """Index into ACTIONS of an action or one of its aliases, matched loosely."""
    return _LOOKUP.get(" ".join(action.strip().rstrip(".").lower().split()))


def distance(a: Pos, b: Pos) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def describe(f: MessengerFacts) -> str:
    """SmartPlay's frame text (``describe_frame``): the ``natural`` format of the facts."""
    return render("natural", f)


def _step_entity(kind: str, pos: Pos, agent: Pos, size: Pos) -> Pos:
    x, y = pos
    if kind == "chaser":
        dx, dy = agent[0] - x, agent[1] - y
        if abs(dy) >= abs(dx) and dy:
            return (x, y + (1 if dy > 0 else -1))
        return (x + (1 if dx > 0 else -1), y) if dx else pos
    if kind == "fleeing":  # each step with the room it leaves towards the wall ahead
        (w, h), best, room, far = size, pos, -1, distance(pos, agent)
        steps = ((x, y - 1, y - 1), (x, y + 1, h - 2 - y), (x - 1, y, x - 1), (x + 1, y, w - 2 - x))
        for nx, ny, left in steps:
            if left > room and distance((nx, ny), agent) > far:
                best, room = (nx, ny), left
        return best
    return pos


def _touch(game: Game, s: State) -> tuple[State, float, str | None]:
    a = s.agent
    if s.enemy == a:
        return s, -1.0, LOST
    if s.goal == a:
        return (s, 1.0, WON) if s.has_message else (s, -1.0, LOST)
    if s.message == a:
        if game.level == 1:
            return (s, -1.0, LOST) if s.has_message else (s, 1.0, WON)
        if not s.has_message:
            return s._replace(message=None, has_message=True), 0.5, None
    return s, 0.0, None


def transition(game: Game, s: State, action: int) -> tuple[State, float, str | None]:
    """One step of the rules: (next state, reward, 'won' / 'lost' / None). Pure, RNG-free."""
    (x, y), (dx, dy), (w, h) = s.agent, DELTAS[action], game.size
    agent = (x + dx, y + dy) if 0 <= x + dx < w and 0 <= y + dy < h else (x, y)
    s, reward, outcome = _touch(game, s._replace(agent=agent, tick=s.tick + 1))
    if outcome is None and s.tick % 2 == 1:
        e, m, g = (
            None if p is None else _step_entity(k, p, agent, game.size)
            for k, p in zip(game.movement, (s.enemy, s.message, s.goal), strict=True)
        )
        s, more, outcome = _touch(game, s._replace(enemy=e, message=m, goal=g))
        reward += more
    return s, reward, outcome


def _estimate(s: State) -> int:
    """Steps still needed if nothing moved: to the message (unless held), then to the goal."""
    if s.goal is None:
        return 0
    if s.has_message or s.message is None:
        return distance(s.agent, s.goal)
    return distance(s.agent, s.message) + distance(s.message, s.goal)


def plan(game: Game, start: State, horizon: int, max_nodes: int = 50_000) -> list[int] | None:
    """A winning action sequence of at most ``horizon`` steps, or None.

    Best-first search over whole states (the rules are deterministic), ordered by steps taken
    plus :func:`_estimate`; short, not always shortest. Never steps into a loss.
    """
    Key = tuple[Any, ...]
    key0: Key = (*start[:5], start.tick & 1)
    parent: dict[Key, tuple[Key, int] | None] = {key0: None}
    heap: list[tuple[int, int, int, State]] = [(_estimate(start), 0, 0, start)]
    count = 0
    while heap and len(parent) < max_nodes:
        _, g, _, s = heapq.heappop(heap)
        if g >= horizon:
            continue
        k = (*s[:5], s.tick & 1)
        for a in range(5):
            ns, _, outcome = transition(game, s, a)
            nk = (*ns[:5], ns.tick & 1)
            if outcome == LOST or nk in parent:
                continue
            parent[nk] = (k, a)
            if outcome == WON:
                path: list[int] = []
                while (link := parent[nk]) is not None:
                    nk, act = link
                    path.append(act)
                return path[::-1]
            count += 1
            heapq.heappush(heap, (g + 1 + _estimate(ns), g + 1, count, ns))
    return None


def safe_action(game: Game, s: State) -> int:
    """When no win is in reach: a step that does not lose, towards the message or the goal."""
    best: tuple[float, int, int] | None = None
    for a in range(5):
        ns, reward, outcome = transition(game, s, a)
        if outcome == LOST:
            continue
        target = ns.goal if ns.has_message else ns.message
        key = (-reward, distance(ns.agent, target) if target else 0, a)
        best = key if best is None or key < best else best
    return best[2] if best is not None else 4


class MessengerExpert:
    """Plans with the privileged game (roles, movements, state) by search; replans on surprise."""

    def __init__(self) -> None:
        self._plan: list[int] = []
        self._expect: State | None = None
        self._hopeless = False

    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        p = info["privileged"]
        game, s = p["game"], p["state"]
        if s != self._expect or not (self._plan or self._hopeless):
            found = plan(game, s, p["steps_left"])
            self._plan, self._hopeless = found or [], found is None
        # no win found within the budget (or the search limit): none later either; play safe
        a = self._plan.pop(0) if self._plan else safe_action(game, s)
        self._expect = transition(game, s, a)[0]
        return ACTIONS[a]


def new_game(rng: Any, level: int) -> tuple[Game, State]:
    """Draw an episode from ``rng`` (a numpy Generator): entities, roles, words, layout."""
    names = tuple(ENTITIES[int(i)] for i in rng.choice(len(ENTITIES), size=3, replace=False))
    kinds = tuple(MOVEMENTS[int(rng.integers(3))] if level == 2 else "immovable" for _ in ROLES)
    syns = tuple(SYNONYMS[n][int(rng.integers(len(SYNONYMS[n])))] for n in names)
    lines = []
    for role, kind, syn in zip(ROLES, kinds, syns, strict=True):
        words = [
            w[int(rng.integers(len(w)))] for w in (PATTERNS, ROLE_WORDS[role], MOVE_WORDS[kind])
        ]
        text = words[0].format(syn=syn, role=words[1], move=words[2])
        lines.append(text[0].upper() + text[1:])
    shown = tuple(lines[int(i)] for i in rng.permutation(3))
    game = Game(level, names, kinds, syns, shown)  # type: ignore[arg-type]
    if level == 2:
        cells = [CORNERS[int(i)] for i in rng.permutation(4)]
        return game, State(cells[0], cells[1], cells[2], cells[3], False)
    cells = [L1_CELLS[int(i)] for i in rng.permutation(4)]
    return game, State(L1_AGENT, cells[0], cells[1], cells[2], bool(rng.random() < 0.2))


def manual_text(sentences: Sequence[str]) -> str:
    return "\n\n".join(p for p in (CONTEXT, "\n".join(sentences), ADVICE, COORDS) if p)


class MessengerEnv(Env):
    name: ClassVar[str] = "messenger"
    max_steps: ClassVar[int] = LEVEL_STEPS[2]
    history_len: ClassVar[int] = 10
    facts_type: ClassVar[type] = MessengerFacts
    privileged_map: ClassVar[bool] = True
    default_format: ClassVar[str] = "natural"
    static_actions: ClassVar[bool] = True

    def __init__(self, level: int = 2, max_steps: int | None = None) -> None:
        if level not in LEVEL_STEPS:
            raise ValueError(f"level must be 1 or 2, got {level}")
        super().__init__(max_steps=max_steps if max_steps is not None else LEVEL_STEPS[level])
        self.level = level
        self.goal = GOAL
        #: complete after reset(): the entity lines depend on the episode
        self.manual = manual_text(())
        self.game: Game | None = None
        self.state = State(L1_AGENT, None, None, None, False)
        self.total, self.won, self._text = 0.0, False, ""

    # -- Env ------------------------------------------------------------------------------
    def _reset(
        self, rng_seed: int | None, options: dict[str, Any]
    ) -> tuple[Observation, dict[str, Any]]:
        game, state = new_game(self.np_random, self.level)
        # options (for tests and demos): {"movement": {role: kind}, "positions": {"agent" or
        # role: (x, y) or None}, "has_message": bool} override what the seed drew
        moves = options.get("movement", {})
        game = replace(
            game, movement=tuple(moves.get(r, game.movement[i]) for i, r in enumerate(ROLES))
        )
        if not set(game.movement) <= set(MOVEMENTS):
            raise ValueError(f"movements must be among {MOVEMENTS}, got {game.movement}")
        where: dict[str, Any] = {k: v and tuple(v) for k, v in options.get("positions", {}).items()}
        state = state._replace(**where, has_message=options.get("has_message", state.has_message))
        self.game, self.state, self.total, self.won = game, state, 0.0, False
        self.manual = manual_text(game.sentences)
        obs = self._observe("")
        return obs, self._privileged(obs.facts)

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        assert self.game is not None
        a = parse_action(action)
        if a is None:
            said = action.strip() or "(nothing)"
            feedback = f"You tried '{said}', which is not one of the actions; nothing happened."
            obs = self._observe(feedback)
            return obs, 0.0, False, self._privileged(obs.facts, valid=False)
        self.state, reward, outcome = transition(self.game, self.state, a)
        self.total += reward
        self.won = outcome == WON
        obs = self._observe(f"You took action {ACTIONS[a]}.")
        return obs, reward, outcome is not None, self._privileged(obs.facts)

    def facts(self) -> MessengerFacts:
        assert self.game is not None
        s, g = self.state, self.game
        where = (s.enemy, s.message, s.goal)
        ents = tuple((g.names[r], p) for r in g.order if (p := where[r]) is not None)
        return MessengerFacts(s.agent, s.has_message, ents, g.size)

    def _observe(self, feedback: str) -> Observation:
        facts = self.facts()
        self._text = f"{feedback}\n\n{describe(facts)}" if feedback else describe(facts)
        return Observation(self._text, facts, ACTIONS, self.goal, feedback)

    def _privileged(self, facts: MessengerFacts, valid: bool = True) -> dict[str, Any]:
        g = self.game
        assert g is not None
        return {
            "valid": valid,
            "privileged": {
                "facts": facts,
                "roles": dict(zip(ROLES, g.names, strict=True)),
                "movement": dict(zip(g.names, g.movement, strict=True)),
                "game": g,
                "state": self.state,
                "steps_left": self.budget - self.steps,
                "map": render("symbolic", facts),
            },
        }

    def render_rgb(self) -> Any:
        """The grid from above: the agent (A, another colour once it holds the message) and
        each entity by its letter of the ``symbolic`` format."""
        from statelab.facts.messenger import SYMBOLS

        f = self.facts()
        colours = (0, 1, 3)
        cells = [
            (pos, SYMBOLS.get(name, "?"), colours[i % 3])
            for i, (name, pos) in enumerate(f.entities)
        ]
        return grid_image(f.size, [(f.agent, "A", 6 if f.has_message else 5), *cells])

    def score(self) -> float:
        return (min(1.0, max(-1.0, self.total)) + 1.0) / 2.0

    def success(self) -> bool:
        return self.won

    def expert(self) -> MessengerExpert:
        return MessengerExpert()


def _level(arg: str | None) -> dict[str, Any]:
    if arg is None:
        return {}
    if arg not in ("1", "2"):
        raise ConfigError(f"env 'messenger:{arg}': the argument is the level, 1 or 2")
    return {"level": int(arg)}


register_env("messenger", MessengerEnv, "statelab/Messenger-v0", "messenger[:<level>]", _level)
