"""Messenger as SmartPlay plays it (seed 000, section 3.3): the original MESSENGER/EMMA game.

Ours (neither SmartPlay nor messenger-emma is installable), after messenger-emma's
``stage_one.py`` / ``stage_two.py`` with their py-vgdl game files, and SmartPlay's text
wrapper (``messenger_env.py``); ``docs/fidelity.md`` lists what matches and what differs.

Game. A 10x10 open grid (a move off it leaves the mover in place). Three entities play the
enemy, the message holder and the goal. Which three, in which roles, comes from the seed's
split (:mod:`statelab.envs._messenger_games`): the original's fixed test, validation and
train games; ``splits`` names the seeds. The manual has one sentence per entity, in shuffled
order, naming it by a synonym or (about a third of the time) plainly, with its role and
(85% of the time) its movement; observations use canonical names. Positions are (x, y): x
the column from the west edge, y the row from the north edge
(:class:`~statelab.facts.MessengerFacts`; the manual says so).

- Level 2 (default; ``messenger:2``): each entity is a chaser, fleeing or immovable (test
  seeds: all 27 combinations; train and validation: the 6 where all three differ); agent and
  entities permuted over the corners (2, 2), (2, 7), (7, 2), (7, 7). Movers move as the
  original's VGDL sprites do (:mod:`statelab.envs._messenger_rules`): half a cell *every*
  tick (positions are kept in half-cells, as VGDL's 2-pixel cells do), each tick a random
  direction among those that shorten (chaser) or lengthen (fleeing) the distance to the
  agent, drawn from the episode's seeded generator. An entity straddling two cells is seen
  in its north-west one and touches the agent in either.
- Level 1 (``messenger:1``): all immovable, agent at (5, 5), entities on three of (5, 3),
  (3, 5), (7, 5), (5, 7); 20% of episodes start with the message held.

Actions (SmartPlay's order) and the seed's words for them: "Move North" = up (y - 1), "Move
South" = down (y + 1), "Move West" = left (x - 1), "Move East" = right (x + 1), "Do Nothing" =
stay; those words (and north, south, ...) are accepted too. Anything else is invalid: the world
does not advance, the reward is 0, but the step counts against the budget.

Rewards (VGDL's interaction order): enemy -1, ends; goal without the message -1, ends;
message +0.5, held, its holder leaves the grid; goal with the message +1, success. Level 1
(``stage_one.py``): the message is +1 and success when not held, else -1.

Score: SmartPlay's, the *last step's* reward r normalised to (r + 1) / 2: delivered 1.0;
caught, or the goal reached without the message, 0.0; anything else 0.5 (holding the message
at the end included), except 0.75 when the last step picked the message up.

Budget: SmartPlay's 4 (level 1) and 64 (level 2) by default. Seed 000 ran 10 steps with a
10-step history (Table 2; our ``history_len``): its configs pass ``max_steps: 10``. Most corner
layouts need more than 10 steps (a message on the opposite corner is 10 away); see
``tests/envs/test_messenger_expert.py`` for the expert's win rates under both budgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from statelab.core import Env, Observation, fingerprint_of
from statelab.envs import _messenger_games as games
from statelab.envs._draw import grid_image
from statelab.envs._messenger_expert import MessengerExpert
from statelab.envs._messenger_rules import (
    ACTIONS,
    MOVEMENTS,
    ROLES,
    WON,
    Game,
    State,
    cell,
    half,
    n_choices,
    step,
)
from statelab.envs._options import Option, option_parser
from statelab.envs._registry import register_env
from statelab.facts import MessengerFacts, render

__all__ = ["MessengerEnv", "parse_action"]

_ALIASES = {"north": 0, "up": 0, "move up": 0, "south": 1, "down": 1, "move down": 1,
            "west": 2, "left": 2, "move left": 2, "east": 3, "right": 3, "move right": 3,
            "stay": 4, "nothing": 4, "wait": 4}  # fmt: skip
_LOOKUP = {a.lower(): i for i, a in enumerate(ACTIONS)} | _ALIASES
CORNERS = ((2, 2), (7, 2), (2, 7), (7, 7))
L1_AGENT, L1_CELLS = (5, 5), ((5, 3), (3, 5), (7, 5), (5, 7))
LEVEL_STEPS = {1: 4, 2: 64}

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
GOAL = "Pick up the message and bring it to the goal, avoiding the enemy."


def parse_action(action: str) -> int | None:
    """Index into ACTIONS of an action or one of its aliases, matched loosely."""
    return _LOOKUP.get(" ".join(action.strip().rstrip(".").lower().split()))


def describe(f: MessengerFacts) -> str:
    """SmartPlay's frame text (``describe_frame``): the ``natural`` format of the facts."""
    return render("natural", f)


# -- episodes ------------------------------------------------------------------------------
def new_game(rng: Any, level: int, seed: int | None) -> tuple[Game, State]:
    """The episode of ``seed``: its split's game and variant, then words and layout from
    ``rng`` (a numpy Generator seeded with it)."""
    split = games.split_of(seed)
    index = seed if seed is not None else int(rng.integers(len(games.SPLITS["test"])))
    names, kinds = games.game_of(index, split)
    if level == 1:
        kinds = ("immovable",) * 3
    words, shown = games.manual_lines(rng, names, kinds)
    game = Game(level, names, kinds, words, shown, split=split)
    if level == 2:
        cells = [half(CORNERS[int(i)]) for i in rng.permutation(4)]
        return game, State(cells[0], cells[1], cells[2], cells[3], False)
    cells = [half(L1_CELLS[int(i)]) for i in rng.permutation(4)]
    return game, State(half(L1_AGENT), cells[0], cells[1], cells[2], bool(rng.random() < 0.2))


def manual_text(sentences: Sequence[str]) -> str:
    return "\n\n".join(p for p in (CONTEXT, "\n".join(sentences), ADVICE, COORDS) if p)


class MessengerEnv(Env):
    name: ClassVar[str] = "messenger"
    #: the expert answers from any state, off its own path too:
    #: expert_action reads the current game state
    expert_any_state: ClassVar[bool] = True
    max_steps: ClassVar[int] = LEVEL_STEPS[2]
    splits: ClassVar[dict[str, range]] = games.SPLITS
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
        self.state = State(half(L1_AGENT), None, None, None, False)
        self.last_reward, self.won, self._text = 0.0, False, ""

    # -- Env ------------------------------------------------------------------------------
    def _reset(
        self, rng_seed: int | None, options: dict[str, Any]
    ) -> tuple[Observation, dict[str, Any]]:
        game, state = new_game(self.np_random, self.level, rng_seed)
        # options (for tests and demos): {"movement": {role: kind}, "positions": {"agent" or
        # role: (x, y) cell or None}, "has_message": bool} override what the seed drew
        moves = options.get("movement", {})
        game = replace(
            game, movement=tuple(moves.get(r, game.movement[i]) for i, r in enumerate(ROLES))
        )
        if not set(game.movement) <= set(MOVEMENTS):
            raise ValueError(f"movements must be among {MOVEMENTS}, got {game.movement}")
        where: dict[str, Any] = {
            k: None if v is None else half(v) for k, v in options.get("positions", {}).items()
        }
        state = state._replace(**where, has_message=options.get("has_message", state.has_message))
        self.game, self.state, self.last_reward, self.won = game, state, 0.0, False
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
            self.last_reward = 0.0
            return obs, 0.0, False, self._privileged(obs.facts, valid=False)
        # VGDL draws one direction per mover (enemy, message, goal) each tick
        picks = [int(self.np_random.integers(n)) if n > 1 else 0
                 for n in n_choices(self.game, self.state)]  # fmt: skip
        self.state, reward, outcome = step(self.game, self.state, a, picks)
        self.last_reward = reward
        self.won = outcome == WON
        obs = self._observe(f"You took action {ACTIONS[a]}.")
        return obs, reward, outcome is not None, self._privileged(obs.facts)

    def fingerprint(self) -> str:
        """The instance state: the grid's facts with what the facts do not show, the game
        (which entity is the enemy, the message and the goal, and how each moves)."""
        assert self.game is not None
        return fingerprint_of((self.goal, self.facts(), self.game.names, self.game.movement))

    def facts(self) -> MessengerFacts:
        assert self.game is not None
        s, g = self.state, self.game
        where = (s.enemy, s.message, s.goal)
        ents = tuple((g.names[r], cell(p)) for r in g.order if (p := where[r]) is not None)
        return MessengerFacts(cell(s.agent), s.has_message, ents, g.size)

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
        """SmartPlay's: the last step's reward r (0 before any step) as (r + 1) / 2."""
        return (min(1.0, max(-1.0, self.last_reward)) + 1.0) / 2.0

    def success(self) -> bool:
        return self.won

    def expert(self) -> MessengerExpert:
        return MessengerExpert()


def _level(value: str) -> int:
    if value not in ("1", "2"):
        raise ValueError("the argument is the level, 1 or 2")
    return int(value)


register_env(
    "messenger",
    MessengerEnv,
    "statelab/Messenger-v0",
    "messenger[:<level>]",
    option_parser("messenger", {"level": Option("level", _level, "level=1|2")}, "level"),
)
