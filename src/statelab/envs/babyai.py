"""BabyAI as BALROG plays it (seed 000, section 3.3; Table 2: 128 steps, history 128).

Five tasks on minigrid's BabyAI machinery, built the way BALROG builds them: its
``BabyAI-MixedTrainLocal-v0`` (GLAM's babyai-text level) with ``num_dists=0``, the value in
BALROG's config, one task per config name:

- ``babyai/goto``: one 8x8 room holding 1 object; "go to the <colour> <type>".
- ``babyai/pickup``: one 8x8 room holding 1 object; "pick up the <colour> <type>".
- ``babyai/putnext``: one 8x8 room holding 2 objects; "put the X next to the Y".
- ``babyai/pickup-seq-goto``: one 8x8 room holding 2 objects; "pick up the X, then go to the
  Y" or "go to the Y after you pick up the X" (minigrid's ``BeforeInstr``/``AfterInstr`` over
  ``PickupInstr`` and ``GoToInstr``).
- ``babyai/open``: two 8x8 rooms side by side joined by one locked door (yellow, green, blue or
  purple); the agent starts in the other room with the door's key and nothing else; "open
  the door" or "open the <colour> door".

``babyai/<task>:dists=N`` adds N distractors (random keys, balls and boxes, repeats allowed)
to the agent's room, as GLAM's level does with its own default ``num_dists=8``: goto and
pickup rooms then hold N + 1 objects, putnext and pickup-seq-goto N + 2, open the key and N
more. ``dists=8`` is the construction statelab used before BALROG's became the default; with
distractors a mission can fit several objects ("go to a grey ball" with two grey balls), and
any of them satisfies it.

``babyai/open:levels=balrog`` builds the open level in the order BALROG's sampler draws it
(:mod:`statelab.envs._babyai_levels`), so seeds give BALROG's levels (seed 004's test levels);
the other four tasks already do (100 of 100 levels of seeds 0-24 identical, a test).

As in BALROG's training split, missions naming a yellow box, red key, red door, green ball or
grey door are redrawn. Keys, balls and boxes only; no unblocking needed. The level (rooms,
objects, mission) is :class:`~statelab.envs._babyai_missions.LocalLevel`.

Actions (BALROG's six, in minigrid's order): turn left, turn right, go forward, pick up, drop,
toggle. Minigrid's ``done`` is not offered. An action outside the six (after tidying case,
spaces and a final full stop) changes nothing, is reported invalid with a feedback line
listing the six, and still uses a step (minigrid's step count too). BALROG instead executes
its default action, "go forward", and prefixes the next observation with "Your previous
output did not contain a valid action. Defaulted to action: go forward".

Reward is minigrid's: 1 - 0.9 * steps / 128 on success, 0 otherwise. Score (normalised as in
seed 000, where 1 means the task was completed) is 1.0 on success and 0.0 otherwise.

The observation text is our describer of minigrid's 7x7 egocentric view (see
:mod:`statelab.facts.egoview`); on 3,281 states shared with BALROG it listed the same
objects, offsets and walls as BALROG's text (2,778 byte-identical; the rest differ only in "a
open" and a final period). The mission is ``Observation.goal``. ``image=True`` adds
minigrid's agent-view RGB render (16-pixel tiles, as BALROG) as ``Observation.image``.

The expert is minigrid's ``BabyAIBot``, kept in step with the episode by the env (it reads
the env's internal state, which is privileged) and answering with our action strings.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
from minigrid.utils.baby_ai_bot import BabyAIBot

from statelab.core import (
    FORMAT_ERROR,
    MOVED,
    NO_OP,
    Env,
    Observation,
    choice,
    count,
    fingerprint_of,
)
from statelab.envs._babyai_missions import DEFAULT_DISTRACTORS, LocalLevel
from statelab.envs._babyai_view import full_map, full_view_of, world_array
from statelab.envs._options import Option, option_parser
from statelab.envs._registry import register_env
from statelab.facts.egoview import EgoViewFacts, describe, ego_view

#: BALROG's action strings; the index is minigrid's action id
ACTIONS: tuple[str, ...] = ("turn left", "turn right", "go forward", "pick up", "drop", "toggle")
ACTION_IDS = {a: i for i, a in enumerate(ACTIONS)}
#: config name suffix -> Gymnasium id
TASKS: dict[str, str] = {
    "goto": "statelab/BabyAI-GoTo-v0",
    "open": "statelab/BabyAI-Open-v0",
    "pickup": "statelab/BabyAI-Pickup-v0",
    "pickup-seq-goto": "statelab/BabyAI-PickUpSeqGoTo-v0",
    "putnext": "statelab/BabyAI-PutNext-v0",
}
IMAGE_TILE = 16
#: more make most 8x8 rooms unreachable somewhere: resets slow to seconds (16: 2 s each)
MAX_DISTRACTORS = 12

MANUAL = (
    "You are an agent playing a simple navigation game in a grid world of rooms. Each "
    "episode gives you a mission, such as going to an object, picking one up, putting one "
    "next to another, or opening a door.\n"
    "The possible actions are:\n"
    "turn left: turn 90 degrees to the left,\n"
    "turn right: turn 90 degrees to the right,\n"
    "go forward: take one step forward,\n"
    "pick up: pick up the object one step in front of you (you can carry one object),\n"
    "drop: put the object you carry on the empty cell in front of you,\n"
    "toggle: open or close the door in front of you (a locked door opens only while you "
    "carry a key of its colour).\n"
    "You see a 7x7 area ahead of you and to your sides, not through walls or closed doors. "
    "Positions are relative to you: 'forward' is the way you face, 'left' and 'right' are "
    "your own left and right, and '1 step forward' is the cell right in front of you. "
    "To go to an object, stand next to it and face it.\n"
    "Tips:\n"
    "- To interact with an object or a door, first stand facing it, one step away.\n"
    "- Repeating an action that does not change the observation is pointless."
)


class BabyAIExpert:
    """minigrid's BabyAIBot, through our action strings. The env keeps the bot in step."""

    def __init__(self, env: BabyAIEnv) -> None:
        self.env = env

    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        return self.env._expert_action()


class BabyAIEnv(Env):
    name: ClassVar[str] = "babyai"
    #: the expert answers from any state, off its own path too:
    #: minigrid's bot replans from the current grid (or starts afresh)
    expert_any_state: ClassVar[bool] = True
    max_steps: ClassVar[int] = 128
    history_len: ClassVar[int] = 128
    facts_type: ClassVar[type] = EgoViewFacts
    privileged_map: ClassVar[bool] = True
    default_format: ClassVar[str] = "natural"
    kind: ClassVar[str] = "babyai"
    task_family: ClassVar[str] = "babyai"

    def __init__(
        self,
        task: str = "goto",
        max_steps: int | None = None,
        image: bool = False,
        num_dists: int = DEFAULT_DISTRACTORS,
        levels: str = "statelab",
    ):
        super().__init__(max_steps=max_steps)
        if task not in TASKS:
            raise ValueError(f"unknown BabyAI task {task!r}; allowed: {', '.join(TASKS)}")
        if not 0 <= num_dists <= MAX_DISTRACTORS:
            raise ValueError(f"num_dists must be from 0 to {MAX_DISTRACTORS}, got {num_dists}")
        self.task = task
        self.image = image
        self.manual = MANUAL
        self.level = LocalLevel(
            task,
            self.budget,
            render_mode="rgb_array" if image else None,
            num_dists=num_dists,
            levels=levels,
        )
        self._raw: dict[str, Any] = {}
        self._won = False
        self._expert_wanted = False
        self._bot: BabyAIBot | None = None
        self._free_hands = False  # the bot failed while holding something: drop it first
        self._pending: list[int] = []  # world-changing actions the bot has not seen yet
        self._suggestion = 0
        self._text = ""
        #: the view after the last action that ran (None before one): seed 004 counts an
        #: action leaving it unchanged (walking into a wall) as a no-op
        self._last_view: str | None = None
        self._unchanged = False

    # -- Env ------------------------------------------------------------------------------
    def current_task(self) -> str:
        """The task this instance plays (its spelling's, e.g. ``goto``)."""
        return self.task

    def _reset(
        self, rng_seed: int | None, options: dict[str, Any]
    ) -> tuple[Observation, dict[str, Any]]:
        self._raw, _ = self.level.reset(seed=rng_seed)
        self._won = False
        self._last_view, self._unchanged = None, False
        self._bot, self._free_hands, self._pending = None, False, []
        if self._expert_wanted:
            self._start_bot()
        return self._observe(""), self._privileged()

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        idx = ACTION_IDS.get(" ".join(action.strip().rstrip(".").lower().split()))
        if idx is None:
            self.level.step_count += 1  # a wasted step counts towards minigrid's reward too
            feedback = (
                f"'{action.strip()}' is not a valid action; nothing changed. "
                f"Valid actions: {', '.join(ACTIONS)}."
            )
            return self._observe(feedback), 0.0, False, self._privileged(valid=False)
        self._raw, reward, terminated, _, _ = self.level.step(idx)
        self._won = bool(terminated and reward > 0)
        if self._expert_wanted and not terminated:
            self._pending.append(idx)  # the bot catches up when next asked
        obs = self._observe("")
        self._unchanged = obs.text == self._last_view
        self._last_view = obs.text
        return obs, float(reward), bool(terminated), self._privileged()

    def fingerprint(self) -> str:
        """The instance state: the grid (doors' states included), where the agent stands and
        faces, what it carries, and the mission."""
        lv = self.level
        carrying = lv.carrying.encode() if lv.carrying is not None else None
        pos = (int(lv.agent_pos[0]), int(lv.agent_pos[1]))
        return fingerprint_of((lv.mission, lv.grid.encode(), pos, int(lv.agent_dir), carrying))

    def outcome(self, info: Any) -> str:
        """Seed 004's reading (its authors' BabyAI env): an action outside the six is a
        format error (the env cannot read it); one that leaves the view's text as it was
        after the last action that ran (walking into a wall; never the first) is a no-op."""
        if not info.get("valid", True):
            return FORMAT_ERROR
        return NO_OP if self._unchanged else MOVED

    def _observe(self, feedback: str) -> Observation:
        facts = ego_view(self._raw["image"], self._raw["direction"], self.level.mission)
        view = describe(facts)
        self._text = f"{feedback}\n{view}" if feedback else view
        return Observation(
            text=self._text,
            facts=facts,
            admissible=ACTIONS,
            goal=self.level.mission,
            feedback=feedback,
            image=self.render_rgb() if self.image else None,
        )

    def render_rgb(self) -> Any:
        """minigrid's render of the agent's 7x7 view (112x112x3 uint8, as BALROG shows it)."""
        return self.level.get_frame(highlight=True, tile_size=IMAGE_TILE, agent_pov=True)

    def _privileged(self, valid: bool = True) -> dict[str, Any]:
        lv = self.level
        grid = lv.grid.encode()
        world = world_array(lv, grid)
        return {
            "valid": valid,
            "privileged": {
                "facts": full_view_of(lv, world),
                "map": full_map(lv, world),
                "grid": grid,
                "agent_pos": (int(lv.agent_pos[0]), int(lv.agent_pos[1])),
                "agent_dir": int(lv.agent_dir),
                "carrying": lv.carrying.encode() if lv.carrying is not None else None,
            },
        }

    def success(self) -> bool:
        return self._won

    # -- expert ---------------------------------------------------------------------------
    def expert(self) -> BabyAIExpert:
        """The bot starts now if this episode has none, and at every later reset."""
        self._expert_wanted = True
        if self._bot is None and self._raw:
            self._start_bot()
        return BabyAIExpert(self)

    def _start_bot(self) -> None:
        lv = self.level
        if self._free_hands and lv.carrying is not None:
            ahead_free = lv.grid.get(*lv.front_pos) is None
            self._bot, self._suggestion = None, ACTION_IDS["drop" if ahead_free else "turn left"]
            return
        self._free_hands = False
        try:
            self._bot = BabyAIBot(lv)
            self._suggestion = int(self._bot.replan())
        except Exception:
            # The bot assumes its own history: it cannot go on holding something it did not
            # plan for, nor find a box another agent toggled away. Free the hands first (or
            # look around), then it starts afresh.
            self._bot, self._suggestion = None, ACTION_IDS["turn left"]
            if lv.carrying is not None:
                self._free_hands = True
                self._start_bot()

    def _replan(self, taken: int) -> None:
        if self._bot is not None:
            try:
                self._suggestion = int(self._bot.replan(taken))
                return
            except Exception:
                self._bot = None
                self._free_hands = self.level.carrying is not None
        self._start_bot()

    def _expert_action(self) -> str:
        # The bot replans once per world step, told the action taken. Asked at every step (the
        # expert playing), it sees one pending action; after steps it was not asked about,
        # it starts afresh from the current state.
        if len(self._pending) == 1:
            self._replan(self._pending[0])
        elif self._pending:
            self._bot = None
            self._start_bot()
        self._pending.clear()
        # the bot says "done" only once the mission is complete; any move then is harmless
        return ACTIONS[self._suggestion] if self._suggestion < len(ACTIONS) else ACTIONS[0]


OPTIONS = {
    "dists": Option("num_dists", count(0, MAX_DISTRACTORS), "dists=N"),
    "levels": Option("levels", choice("statelab", "balrog"), "levels=statelab|balrog"),
}


for _t, _gid in TASKS.items():
    # register_env gives Gymnasium no kwargs, so the id is registered here with the task first
    if _gid not in gym.registry:
        gym.register(
            _gid,
            entry_point=BabyAIEnv,  # type: ignore[arg-type]
            kwargs={"task": _t},
            disable_env_checker=True,
        )
    register_env(
        f"babyai/{_t}",
        BabyAIEnv,
        _gid,
        f"babyai/{_t}[:dists=N][+levels=statelab|balrog]",
        option_parser(f"babyai/{_t}", OPTIONS),
        kwargs={"task": _t},
    )

__all__ = ["ACTIONS", "TASKS", "BabyAIEnv", "BabyAIExpert"]
