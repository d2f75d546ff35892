"""Household: ALFWorld's text games (seed 002, section 4.1, Appendix A), generated offline.

ALFWorld's own games need a download; ours are generated from what the ``alfworld`` wheel
ships (:mod:`statelab.envs._household_gen`: scenes, placement rules, goals) and played as
ALFWorld plays them: a ``.tw-pddl`` game (ALFWorld's PDDL domain and text grammar, our
problem) loaded by TextWorld's PDDL backend behind ALFWorld's ``AlfredDemangler`` and
``AlfredInfos`` wrappers (``textworld.start`` with the wrappers ``textworld.gym.register_game``
would apply). Needs ``textworld``, ``fast-downward-textworld`` (the PDDL state engine) and
``alfworld``; they are imported on first reset only.

- Task types (ALFWorld's): ``pick_and_place_simple`` "put a X in/on Y",
  ``look_at_obj_in_light`` "look at X under the desklamp", ``pick_clean_then_place_in_recep``,
  ``pick_heat_then_place_in_recep``, ``pick_cool_then_place_in_recep`` "put a clean / hot /
  cool X in Y", ``pick_two_obj_and_place`` "put two X in Y" (each with ALFWorld's second
  template too). A train seed's type is ``TASK_TYPES[seed % 6]``, a test seed's follows
  ALFWorld's mix (below); ``household:<type>`` (full or short name: put, examine, clean, heat,
  cool, puttwo) plays only that type, whatever the seed.
  ``+placement=zipf`` (``household:placement=zipf``, ``household:heat+placement=zipf``) places
  the task's object by the seed-004 authors' Zipf law (section 5.3; receptacle types ranked
  per object type, the goal's type dropped, a type's mass split over its instances:
  :mod:`statelab.envs._household_prior`). The task's object starts where ALFWorld's sampler
  lets it: never in the goal's type for put and put-two tasks, never in the appliance for
  clean / heat / cool tasks (which may start in the goal's type), anywhere for look-at tasks.
  ``+starts=apart`` plays the earlier games (version 3, or 2 with ``rooms=alfred``: never in
  the goal's type nor the appliance, the earlier Zipf ranking), byte for byte.
  Receptacles stand where ALFWorld's generator puts the agent to reach them (games version 5:
  two share a place, so that ``go to`` one from the other is not admissible, only where
  ALFWorld's games give them one); ``+places=layout`` plays the version-4 games (the layout's
  stored poses, which give more receptacles one place), byte for byte.
- Splits: ``train`` seeds 0-9,999, ``test`` the 134 seeds 100,000-100,133. By default
  (``rooms=alfworld``) the test games are in the rooms of ALFWorld's 134 unseen games (scenes
  10, 219, 308, 424, with the receptacles ALFWorld lists there and floor-lamp look-at tasks in
  219), with its task-type mix (pick 24, look 18, clean 31, heat 23, cool 21, pick-two 17),
  and no train game is in those rooms. ``household:rooms=alfred`` is the former split (ALFRED's
  test scenes, 22 or 23 games of each type by seed % 6; with ``+starts=apart`` the
  same games as before).
- Text is the game's: the room, "Your task is to: ..."; "You arrive at fridge 1. The fridge 1
  is closed."; TextWorld's banner ("-= Welcome to TextWorld, ALFRED! =-", which ReAct's and
  StateAct's ALFWorld code cut off too) and any status-bar line TextWorld may add are removed.
  ``admissible`` is the game's list of admissible commands at each step.
- Commands: go to, open, close, take X from Y, move X to Y, heat / cool / clean X with Y, use,
  examine, inventory, look, help. The seed's in/on correction (Appendix A.2.1): ``put X in Y``,
  ``put X on Y``, ``put X in/on Y`` (and into / onto) are sent as the grammar's ``move X to
  Y``; letter case, extra spaces, a leading ``>`` and a trailing full stop are tidied first.
  A command the game does not admit gets "Nothing happens." and ``info["valid"]`` False.
- Budget 50 steps, ``full`` history 50 (StateAct). Reward is the game's (1 when won); score
  1.0 on success, else 0.0.
- ``facts``: ``TextFacts(text, location, inventory)``, location the receptacle the agent went
  to last ("middle of room" at the start), inventory what it holds.
- Privileged: ``facts`` (the true state in words), ``placements`` (object -> receptacle),
  ``task_type``, ``tracked`` (seed 002 Appendix F's gold state from accepted actions:
  ``location``, ``inventory``, ``visited``), ``walkthrough`` (the expert's plan from the
  current state), ``world`` and ``task`` (for the expert), ``scene`` and ``game_file``.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

from statelab.core import Env, Observation, Policy
from statelab.envs import _household_gen as gen
from statelab.envs import _household_world as hw
from statelab.envs._household_layout import PLACES
from statelab.envs._options import Option, option_parser
from statelab.envs._registry import Needs, register_env
from statelab.facts import TextFacts

NOTHING = "Nothing happens."
INSTALL = (
    "`pip install textworld==1.7.0 fast-downward-textworld==20.6.4` "
    "and `pip install --no-deps alfworld==0.4.2`"
)
MANUAL = (
    "Interact with a household to solve a task. You are in a room with receptacles (cabinets, "
    "countertops, drawers, a fridge, a sinkbasin, ...) that hold objects; some receptacles "
    "must be opened to see or reach what is inside. You can carry one object at a time.\n"
    "Commands:\n"
    "- go to <receptacle>\n- open <receptacle> / close <receptacle>\n"
    "- take <object> from <receptacle>\n"
    "- move <object> to <receptacle> (also written put <object> in/on <receptacle>)\n"
    "- clean <object> with <sinkbasin>, heat <object> with <microwave>, "
    "cool <object> with <fridge>\n"
    "- use <lamp> (switch it on)\n- examine <something>, inventory, look\n"
    "Objects and receptacles are named with a number, e.g. apple 1, countertop 2. A command "
    'that cannot be done here answers "Nothing happens."'
)
_PUT = re.compile(r"^put (?P<o>.+?) (?:in/on|into|onto|in|on) (?P<r>.+)$")
#: Fast Downward's translator keeps global options and rewrites sys.argv: one load at a time
_LOAD_LOCK = threading.Lock()
_STATUS = re.compile(r"^\s*-= .* =-\s*-?\d+(?:/\d+)?\b.*$")
_BANNER = re.compile(r"^\s*-= Welcome to TextWorld.* =-\s*$")


def normalise(action: str) -> str:
    """The command as the grammar spells it (the seed's in/on mapping applied)."""
    cmd = " ".join(action.strip().lstrip(">").strip().rstrip(".").lower().split())
    m = _PUT.match(cmd)
    return f"move {m['o']} to {m['r']}" if m else cmd


#: the goal templates' openings (ALFWorld's goal_library), by task type; the rest is "put"
_GOAL_TYPES = (
    (("look at ", "examine the "), "look_at_obj_in_light"),
    (("put a clean ", "clean some "), "pick_clean_then_place_in_recep"),
    (("put a hot ", "heat some "), "pick_heat_then_place_in_recep"),
    (("put a cool ", "cool some "), "pick_cool_then_place_in_recep"),
    (("put two ", "find two "), "pick_two_obj_and_place"),
    (("put a ", "put some "), "pick_and_place_simple"),
)


def task_type_of_goal(goal: str) -> str | None:
    """The task type a goal sentence names (by ALFWorld's templates), or None."""
    text = " ".join(goal.lower().split())
    for openings, task_type in _GOAL_TYPES:
        if text.startswith(openings):
            return task_type
    return None


def clean_text(text: str) -> str:
    """The game's text without TextWorld's banner and status-bar lines ("-= Kitchen =-0/1")."""
    lines = [ln for ln in str(text).splitlines() if not (_STATUS.match(ln) or _BANNER.match(ln))]
    return "\n".join(lines).strip()


@functools.cache
def _speedups() -> None:
    """Memoise TextWorld's parse of grammar strings and of rule conditions (pure functions it
    calls on every step) and Fast Downward's PDDL translation (pure; redone on every reset):
    same outputs, several times faster."""
    import fast_downward
    import textworld.envs.pddl.textgen as textgen

    parse = textgen._parse_and_convert

    @functools.lru_cache(maxsize=4096)
    def parsed(text: str, rule_name: str = "symbols") -> Any:
        return parse(text, rule_name=rule_name)

    def parse_copy(text: str, rule_name: str = "symbols", **_: Any) -> Any:
        return copy.deepcopy(parsed(text, rule_name))

    textgen._parse_and_convert = parse_copy
    textgen.Rule.parse_conjunctive_query = staticmethod(
        functools.lru_cache(maxsize=1024)(textgen.Rule.parse_conjunctive_query)
    )
    translate = fast_downward.pddl2sas

    @functools.lru_cache(maxsize=8)
    def pddl2sas(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> Any:
        return translate(domain, problem, verbose=verbose, optimize=optimize)

    fast_downward.pddl2sas = pddl2sas


class HouseholdExpert:
    """Plays the expert's plan from the current true state (``privileged["walkthrough"]``)."""

    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        walkthrough = info["privileged"].get("walkthrough") or ["look"]
        return str(walkthrough[0])


class HouseholdEnv(Env):
    name: ClassVar[str] = "household"
    #: the expert answers from any state, off its own path too:
    #: the plan is recomputed from the current world
    expert_any_state: ClassVar[bool] = True
    max_steps: ClassVar[int] = 50
    history_len: ClassVar[int] = 50
    facts_type: ClassVar[type] = TextFacts
    default_format: ClassVar[str] = "natural"
    static_actions: ClassVar[bool] = False
    splits: ClassVar[dict[str, range]] = {
        "train": range(0, 10_000),
        "test": range(gen.TEST_START, gen.TEST_START + 134),
    }
    kind: ClassVar[str] = "household"
    task_family: ClassVar[str] = "household"
    tracks_state: ClassVar[bool] = True
    task_types: ClassVar[bool] = True
    #: TextWorld's PDDL engine parses with module-level grammar parsers (the game's logic at
    #: load, the text grammar's derivations at every step): one call at a time
    thread_safe: ClassVar[bool] = False
    manual = MANUAL

    def __init__(
        self,
        task_type: str | None = None,
        max_steps: int | None = None,
        placement: str = "uniform",
        rooms: str = "alfworld",
        starts: str = "alfworld",
        places: str = "alfworld",
    ) -> None:
        super().__init__(max_steps=max_steps)
        if placement not in gen.PLACEMENTS:
            raise ValueError(f"placement {placement!r}; one of {gen.PLACEMENTS}")
        gen.version(rooms, starts, places)  # checks the spellings
        self.placement = placement
        self.rooms = rooms
        self.starts = starts
        self.places = places
        self.task_type = None if task_type is None else gen.TASK_TYPES[gen.task_index(task_type)]
        self.goal = ""
        self._tw: Any = None
        self._path: Path | None = None
        self._meta: dict[str, Any] = {}
        self._task: hw.Task | None = None
        self._world: hw.World | None = None
        self._admissible: tuple[str, ...] = ()
        self._tracked: dict[str, Any] = {}
        self._won = False
        self._text = ""

    #: what the few-shot examples are selected by (seed 002 picks them by task type)
    task_type_of_goal = staticmethod(task_type_of_goal)

    def task_type_of(self, seed: int) -> str:
        return self.task_type or gen.task_type_of(seed, self.rooms)

    # -- TextWorld ------------------------------------------------------------------------
    def _play(self, path: Path) -> Any:
        """Load ``path`` (once per game) and reset it; returns TextWorld's game state."""
        argv = sys.argv  # Fast Downward's translator overwrites sys.argv
        with _LOAD_LOCK:
            try:
                return self._load_and_reset(path)
            finally:
                sys.argv = argv

    def _load_and_reset(self, path: Path) -> Any:
        if self._tw is None:
            try:
                import textworld
                from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
            except ImportError as err:
                raise ImportError(f"household needs {INSTALL} ({err})") from err
            _speedups()
            infos = textworld.EnvInfos(won=True, admissible_commands=True, facts=True)
            self._tw = textworld.start(str(path), infos, [AlfredDemangler, AlfredInfos])
        elif path != self._path:
            self._tw.load(str(path))
        self._path = path
        return self._tw.reset()

    # -- Env ------------------------------------------------------------------------------
    def _reset(
        self, rng_seed: int | None, options: dict[str, Any]
    ) -> tuple[Observation, dict[str, Any]]:
        seed = int(self.np_random.integers(0, 10_000)) if rng_seed is None else int(rng_seed)
        task_type = self.task_type_of(seed)
        try:
            path = gen.ensure_game(
                seed, task_type, self.placement, self.rooms, self.starts, self.places
            )
        except ImportError as err:
            raise ImportError(f"household needs {INSTALL} ({err})") from err
        self._meta = json.loads(path.read_text())["statelab"]
        self._task = hw.Task.from_meta(self._meta, gen.task_index(task_type))
        self.goal = self._meta["goal"]
        state = self._play(path)
        self._tracked = {"location": hw.MIDDLE, "inventory": [], "visited": []}
        self._won = bool(state["won"])
        return self._update(state, "")

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        cmd = normalise(action)
        if cmd not in self._admissible:
            obs = self._observe(NOTHING, NOTHING)
            return obs, 0.0, False, self._privileged(obs, valid=False)
        state, score, done = self._tw.step(cmd)
        self._track(cmd)
        self._won = bool(state["won"])
        obs, info = self._update(state, None)
        return obs, float(score), bool(done or self._won), info

    def _track(self, cmd: str) -> None:
        """Seed 002 Appendix F: the gold state follows the accepted actions."""
        t = self._tracked
        if cmd.startswith("go to "):
            t["location"] = cmd[len("go to ") :]
            if t["location"] not in t["visited"]:
                t["visited"].append(t["location"])
        elif cmd.startswith("take "):
            t["inventory"].append(cmd[len("take ") :].partition(" from ")[0])
        elif cmd.startswith("move "):
            obj = cmd[len("move ") :].partition(" to ")[0]
            t["inventory"] = [o for o in t["inventory"] if o != obj]

    def _update(self, state: Any, feedback: str | None) -> tuple[Observation, dict[str, Any]]:
        text = clean_text(state["feedback"])
        self._admissible = tuple(state["admissible_commands"])
        at = None if self._tracked["location"] == hw.MIDDLE else self._tracked["location"]
        self._world = hw.read_world(state["facts"], at)
        obs = self._observe(text, text if feedback is None else feedback)
        return obs, self._privileged(obs)

    def _observe(self, text: str, feedback: str) -> Observation:
        self._text = text
        w = self._world
        assert w is not None
        facts = TextFacts(text, hw.location(w), w.holding)
        return Observation(text, facts, self._admissible, self.goal, feedback)

    def _privileged(self, obs: Observation, valid: bool = True) -> dict[str, Any]:
        w, t = self._world, self._task
        assert w is not None and t is not None
        return {
            "valid": valid,
            "privileged": {
                "facts": TextFacts(hw.describe(w, t), hw.location(w), w.holding),
                "placements": hw.placements(w),
                "task_type": self._meta["task_type"],
                "tracked": copy.deepcopy(self._tracked),
                "walkthrough": [] if self._won else hw.plan(w, t),
                "world": w,
                "task": t,
                "scene": self._meta["scene"],
                "game_file": str(self._path),
            },
        }

    def success(self) -> bool:
        return self._won

    def expert(self) -> HouseholdExpert:
        return HouseholdExpert()

    def fewshot_expert(self) -> Policy:
        """The player whose traces are the few-shot examples: it searches, knowing only what
        a player sees (:mod:`statelab.envs._household_search`)."""
        from statelab.envs._household_search import SearchingExpert

        return SearchingExpert()


def _read_task_type(value: str) -> str:
    try:
        return gen.TASK_TYPES[gen.task_index(value)]
    except ValueError:
        names = ", ".join((*gen.TASK_TYPES, "put", "examine", "clean", "heat", "cool", "puttwo"))
        raise ValueError(f"a task type, one of {names}") from None


def _read_placement(value: str) -> str:
    if value not in gen.PLACEMENTS:
        raise ValueError(f"expected one of {', '.join(gen.PLACEMENTS)}")
    return value


def _read_rooms(value: str) -> str:
    if value not in gen.ROOMS:
        raise ValueError(f"expected one of {', '.join(gen.ROOMS)}")
    return value


def _read_starts(value: str) -> str:
    if value not in gen.STARTS:
        raise ValueError(f"expected one of {', '.join(gen.STARTS)}")
    return value


def _read_places(value: str) -> str:
    if value not in PLACES:
        raise ValueError(f"expected one of {', '.join(PLACES)}")
    return value


_OPTIONS = {
    "type": Option("task_type", _read_task_type, "type=<task type>"),
    "placement": Option("placement", _read_placement, "placement=uniform|zipf"),
    "rooms": Option("rooms", _read_rooms, "rooms=alfworld|alfred"),
    "starts": Option("starts", _read_starts, "starts=alfworld|apart"),
    "places": Option("places", _read_places, "places=alfworld|layout"),
}
_task_type = option_parser("household", _OPTIONS, positional="type")

register_env(
    "household",
    HouseholdEnv,
    "statelab/Household-v0",
    "household[:<task type>][+placement=uniform|zipf][+rooms=alfworld|alfred]"
    "[+starts=alfworld|apart][+places=alfworld|layout]",
    _task_type,
    needs=Needs(INSTALL, ("textworld", "fast_downward", "alfworld")),
)
