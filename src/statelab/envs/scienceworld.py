"""ScienceWorld (seed 004, section 4.2, Appendix B; Wang et al. 2022) on the ``scienceworld``
package (1.2.3: the simulator's jar ships in the wheel and runs on a JRE).

- Tasks: the seed's 24 task types, ``scienceworld/<task>`` with the package's task names
  (``scienceworld/boil`` ... ``scienceworld/use-thermometer``): every task of
  ``get_task_names()`` except the three inclined-plane tasks, the unknown-substance melting
  point and the two Mendelian-genetics tasks, as the anchor's MPO test set has them.
- Budgets per task (:data:`TASKS`), MPO's ``max_steps`` that the anchor reads: boil 100,
  change-state / freeze / melt 80, melting point 120, grow-fruit and chemistry-mix 60, find-*
  15, lifespan 10 or 12, and so on.
- Variations: the package's own train / dev / test variations. Seed ``s`` below the number of
  test variations plays test variation ``s``; the ``test`` split is the first (up to) ten of
  them per task, the anchor's 211 test episodes (MPO's ``test_indices``). Seeds 1000+i play
  train variation i (split ``train``), seeds 2000+i dev variation i (split ``dev``); any other
  seed plays variation ``seed % <variations>``.
- Simplifications (option ``simplify``): ``anchor`` (default) is the anchor's string,
  ``noElectricalAction,openDoors,selfWateringFlowerPots,teleportAction,openContainers``, with
  ``noElectricalAction`` left out for the electrical tasks; ``easy`` the package's ``easy``
  (MPO's); ``none`` no simplification. ``grow-fruit`` plays ``easy`` by default: with
  ``openContainers`` the bee hive is open from the first move and the package's own gold path
  fails (score 45-48 on the first three test variations).
- Score: the package's 0-100 score, normalised to [0, 1]; as in the anchor the episode's score
  is the best seen (a failing move, e.g. focusing on the wrong object, drops the package's
  score below zero and ends the episode), and success is a score of at least 70. The reward of
  a step is the change of that running best, so rewards sum to the score. The episode ends when
  the package says the task is completed (or failed), or at the budget.
- Observations: ``text`` is the simulator's answer to the action (the first is a ``look
  around``; with option ``start=task``, the authors' start, the task description alone:
  their agent begins from it and sees a room only once it looks), its listings sorted
  (:func:`canonical`: the simulator's order of a room's objects changes from one load to the
  next); ``goal`` the task description; ``facts``
  ``TextFacts(text, room, inventory)``, the room the agent is in and what it carries (read
  from the simulator without running an action: what the agent saw when it moved and picked
  things up). ``admissible`` is None by default (the manual lists the action templates, as
  the seed's prompt does); option ``admissible=on`` lists the package's valid action-object
  combinations at every step, which costs 30 ms to 1 s a step (up to 1,500 strings).
- Validity: an input the parser matches to no action ("No known action matches that input.")
  is a no-op in the simulator (no move is made) and ``info["valid"]`` is False.
- Expert: the package's gold path (``generateGoldPath=True``) distilled for the
  simplifications in use, as seed 004 Appendix B.3 distils its examples: runs of ``open door
  to X`` / ``go to X`` become one ``teleport to <room>`` when teleporting is on, ``look
  around`` is dropped, and ten ``wait1`` in a row become one ``wait``, as do ten actions in
  a row that only watch (``examine``, reading a thermometer) while a pot heats (or, where arriving
  early breaks the timing of a life cycle, the walk is kept and only the rest applies). Each
  candidate is verified by replaying it; the first that wins within the budget is played,
  else the best-scoring one (``identify-life-stages-1`` variations 9-12: 0.95 in its 30
  steps; the shortest win is 33).
  Where no candidate wins, the gold path without the attempts its agent abandoned is tried
  (mercury: straight to the workshop's freezer, not first the kitchen's) and without the
  watering of self-watering flower pots (grow-fruit variation 95), then the plan's
  unmatched actions are repaired, and at last the object
  it focuses on is searched for among the simulator's valid ``focus on`` actions
  (:mod:`statelab.envs._scienceworld_expert`).
  ``privileged["walkthrough"]`` is the rest of that plan while the episode has followed it.
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, TypeVar

from statelab.core import ConfigError, Env, Observation, on_off
from statelab.envs import _scienceworld_server as server
from statelab.envs._options import Option, option_parser
from statelab.envs._registry import Needs, register_env
from statelab.envs._scienceworld_expert import (
    substitutions,
    with_sink_left_on,
    without_retries,
    without_watering,
)
from statelab.facts import TextFacts

#: task -> (budget, first dev variation, first test variation, number of variations)
TASKS: dict[str, tuple[int, int, int, int]] = {
    "boil": (100, 14, 21, 30),
    "change-the-state-of-matter-of": (80, 14, 21, 30),
    "chemistry-mix": (60, 16, 24, 32),
    "chemistry-mix-paint-secondary-color": (15, 18, 27, 36),
    "chemistry-mix-paint-tertiary-color": (30, 18, 27, 36),
    "find-animal": (15, 150, 225, 300),
    "find-living-thing": (15, 150, 225, 300),
    "find-non-living-thing": (15, 150, 225, 300),
    "find-plant": (15, 150, 225, 300),
    "freeze": (80, 14, 21, 30),
    "grow-fruit": (60, 62, 93, 126),
    "grow-plant": (30, 62, 93, 126),
    "identify-life-stages-1": (30, 6, 9, 14),
    "identify-life-stages-2": (30, 4, 6, 10),
    "lifespan-longest-lived": (10, 62, 93, 125),
    "lifespan-longest-lived-then-shortest-lived": (12, 62, 93, 125),
    "lifespan-shortest-lived": (10, 62, 93, 125),
    "measure-melting-point-known-substance": (120, 218, 327, 436),
    "melt": (80, 14, 21, 30),
    "power-component": (20, 10, 15, 20),
    "power-component-renewable-vs-nonrenewable-energy": (30, 10, 15, 20),
    "test-conductivity": (30, 450, 675, 900),
    "test-conductivity-of-unknown-substances": (30, 300, 450, 600),
    "use-thermometer": (30, 270, 405, 540),
}
#: test variations per task in the anchor's test set (MPO's test_indices: the first ten)
ANCHOR_TEST = 10
TRAIN_BASE, DEV_BASE = 1000, 2000
SUCCESS_SCORE = 70
ANCHOR = "noElectricalAction,openDoors,selfWateringFlowerPots,teleportAction,openContainers"
#: tasks whose default simplification is not the anchor's (see the module docstring)
DEFAULT_SIMPLIFY = {"grow-fruit": "easy"}
TEMPLATES = (
    "look around; look at OBJ; look in OBJ; inventory; task",
    "go to LOC (a room you can see a door to); teleport to LOC (any room)",
    "open OBJ; close OBJ; pick up OBJ; put down OBJ; move OBJ to OBJ",
    "pour OBJ in OBJ; dunk OBJ in OBJ; mix OBJ",
    "activate OBJ; deactivate OBJ; use OBJ on OBJ",
    "connect OBJ to OBJ; disconnect OBJ",
    "eat OBJ; flush OBJ; read OBJ; focus on OBJ",
    "wait (ten time steps); wait1 (one time step)",
)
MANUAL = (
    "You are an agent in a house of ten rooms (kitchen, bathroom, workshop, art studio, "
    "greenhouse, outside, foundry, hallway, living room, bedroom) doing elementary science "
    "tasks. Objects are named by what they are (metal pot, orange juice); when a name is "
    "ambiguous the simulator lists numbered choices and the next action is the number. "
    "'focus on OBJ' marks the object the task asks about: focusing on the wrong one ends the "
    "task. Actions:\n" + "\n".join(f"- {t}" for t in TEMPLATES)
)
#: the package and a Java runtime for its simulator's JVM
NEEDS = Needs(
    "pip install 'statelab[games]' (or scienceworld==1.2.3) and a Java runtime 11+ "
    "(e.g. apt install openjdk-17-jre-headless)",
    ("scienceworld", "py4j"),
    ("java",),
)
_ROOM_MOVE = re.compile(r"^(?:open door to .+|go to .+)$")
#: actions that look and change nothing (each takes one time step, as a ``wait1`` does)
_PASSING = re.compile(r"^(?:examine .+|use thermometer in inventory on .+|look at .+)$")


def simplifications(task: str, simplify: str) -> str:
    """The package's simplification string for ``task`` under option ``simplify``."""
    if simplify == "none":
        return ""
    if simplify == "easy":
        return "easy"
    flags = ANCHOR.split(",")
    if "power-component" in task or "conductivity" in task:
        flags.remove("noElectricalAction")
    return ",".join(flags)


def variation(task: str, seed: int) -> int:
    """The variation a seed plays (module docstring: test, train and dev seeds)."""
    _, dev, test, total = TASKS[task]
    if 0 <= seed < total - test:
        return test + seed
    if TRAIN_BASE <= seed < TRAIN_BASE + dev:
        return seed - TRAIN_BASE
    if DEV_BASE <= seed < DEV_BASE + test - dev:
        return dev + seed - DEV_BASE
    return seed % total


def distillations(gold: list[str], teleport: bool) -> list[list[str]]:
    """Candidate shortenings of a gold path, most distilled first, the path itself last."""
    out: list[list[str]] = []
    if teleport:
        moved: list[str] = []
        run: list[str] = []
        for a in [*gold, ""]:
            if _ROOM_MOVE.match(a):
                run.append(a)
                continue
            goes = [r[len("go to ") :] for r in run if r.startswith("go to ")]
            if goes:
                moved.append(f"teleport to {goes[-1]}")
            run = []
            if a:
                moved.append(a)
        lean = [a for a in moved if a != "look around"]
        out += [_waits(lean, _PASSING), _waits(lean), lean, moved]
    # the walk kept (it takes time a growing plant or animal may need)
    walk = [a for a in gold if a != "look around"]
    return [*out, _waits(walk, _PASSING), _waits(walk), walk, list(gold)]


def _waits(plan: list[str], passing: re.Pattern[str] | None = None) -> list[str]:
    """Every ten ``wait1`` in a row as one ``wait`` (ten time steps); with ``passing``, every
    ten actions in a row that only pass time (watching a thermometer while a pot heats)."""
    out: list[str] = []
    run = 0
    for a in plan:
        passes = a == "wait1" or (passing is not None and passing.match(a) is not None)
        run = run + 1 if passes else 0
        out.append(a)
        if run == 10:
            del out[-10:]
            out.append("wait")
            run = 0
    return out


def command(action: str) -> str:
    """The simulator's input for an agent's action (a leading '>' and a final '.' dropped)."""
    return " ".join(action.strip().lstrip(">").split()).rstrip(".").strip()


def _split_top(s: str) -> list[str]:
    """``s`` split at the commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [*parts, cur.strip()]


def _sort_lists(line: str) -> str:
    """Every ``...: a, b, c.`` and ``(containing a, b)`` list of a line in sorted order."""

    def sort_items(body: str) -> str:
        items = _split_top(body)
        return ", ".join(sorted(_sort_lists(i) for i in items)) if len(items) > 1 else body

    line = re.sub(
        r"\(containing ((?:[^()]|\([^()]*\))*)\)",
        lambda m: f"(containing {sort_items(m.group(1))})",
        line,
    )
    head, sep, tail = line.partition(": ")
    if sep and tail.endswith(".") and "," in tail:
        return f"{head}: {sort_items(tail[:-1])}."
    return line


def canonical(text: str) -> str:
    """The simulator's text with its listings in a fixed order.

    The simulator lists a room's objects (and a container's contents) in an order that
    changes from one load of a variation to the next; sorting the tab-indented lines of each
    block and the comma lists makes an observation a function of the state alone."""
    lines = [_sort_lists(x) for x in text.split("\n")]
    out: list[str] = []
    block: list[str] = []
    for x in [*lines, ""]:
        if x.startswith("\t"):
            block.append(x)
            continue
        out += sorted(block)
        block = []
        out.append(x)
    return "\n".join(out[:-1])


def inventory_items(text: str) -> tuple[str, ...]:
    """The items of the simulator's inventory listing (one tab-indented line each)."""
    lines = text.split("\n")[1:]
    return tuple(s.strip() for s in lines if s.startswith("\t") and s.strip())


class ScienceWorldExpert:
    """Plays the env's verified plan (``privileged["walkthrough"]``), one action a step."""

    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        walkthrough = info["privileged"].get("walkthrough") or ["look around"]
        return str(walkthrough[0])


_F = TypeVar("_F", bound=Callable[..., Any])


def _calls_simulator(method: _F) -> _F:
    """Count the method's calls in flight on the env: a simulator given back while one is
    (its deadline passed, the call still waits on the JVM) is killed, never reused."""

    @functools.wraps(method)
    def counted(self: ScienceWorldEnv, *args: Any, **kw: Any) -> Any:
        with self._in_flight():
            return method(self, *args, **kw)

    return counted  # type: ignore[return-value]


class ScienceWorldEnv(Env):
    """One ScienceWorld task type; :func:`_register` makes a subclass per task."""

    name: ClassVar[str] = "scienceworld"
    #: the expert answers from any state, off its own path too:
    #: a verified plan, followed only while on it
    expert_any_state: ClassVar[bool] = False
    task: ClassVar[str] = "boil"
    #: a task is won at 70 of its 100 points (the anchor's and MPO's success)
    win_score: ClassVar[float] = SUCCESS_SCORE / 100
    max_steps: ClassVar[int] = 100
    lists_actions: ClassVar[bool] = False  # no admissible list: no random floor row
    history_len: ClassVar[int] = 100
    facts_type: ClassVar[type] = TextFacts
    default_format: ClassVar[str] = "natural"
    static_actions: ClassVar[bool] = False
    kind: ClassVar[str] = "scienceworld"
    task_family: ClassVar[str] = "scienceworld"
    tracks_state: ClassVar[bool] = True
    manual = MANUAL
    #: seconds a step may take; a step takes 4 ms to 1 s
    step_timeout: ClassVar[float] = 60.0
    #: seconds a reset may take: the wait for a simulator at the cap, a new JVM's start and
    #: the reset itself (a load, the expert's plan verified), each with its own budget
    #: (:data:`~statelab.envs._scienceworld_server.RESET_TIMEOUT`): waiting for a JVM to
    #: start never eats the reset's time, and each says in one line which one ran out
    reset_timeout: ClassVar[float] = server.RESET_TIMEOUT

    def __init__(
        self,
        simplify: str | None = None,
        admissible: bool = False,
        max_steps: int | None = None,
        start: str = "look",
    ) -> None:
        super().__init__(max_steps)
        self.start = start
        self.simplify = simplify or DEFAULT_SIMPLIFY.get(self.task, "anchor")
        self.flags = simplifications(self.task, self.simplify)
        self.list_admissible = admissible
        self._sim: server.Simulator | None = None
        self._release: weakref.finalize | None = None
        self._calls = 0
        self._calls_lock = threading.Lock()
        self._abandoned = False
        self.variation = 0
        self.goal = ""
        self._text = ""
        self._best = 0
        self._plan: list[str] = []
        self._taken: list[str] = []
        self._visited: list[str] = []

    # -- the simulator ---------------------------------------------------------------------
    def _simulator(self) -> server.Simulator:
        if self._sim is None and self._abandoned:
            raise RuntimeError("the env was closed while its call ran past its deadline")
        if self._sim is None:
            sw = server.acquire()
            self._sim = server.Simulator(sw)
            self._release = weakref.finalize(self, server.release, sw)
        return self._sim

    @contextlib.contextmanager
    def _in_flight(self) -> Iterator[None]:
        with self._calls_lock:
            self._calls += 1
        try:
            yield
        finally:
            with self._calls_lock:
                self._calls -= 1

    def close(self) -> None:
        """Give the simulator back to the process's pool (killed instead when a call of this
        env is still in flight, or its JVM is dead or stopped)."""
        release, self._release, self._sim = self._release, None, None
        got = release.detach() if release is not None else None  # None: given back already
        if got is not None:
            with self._calls_lock:
                broken = self._calls > 0
            self._abandoned = self._abandoned or broken  # its late call takes no new one
            _, give_back, args, kw = got
            give_back(*args, **{**kw, "broken": broken})

    # -- the episode -----------------------------------------------------------------------
    def current_task(self) -> str:
        """The task this instance plays (its spelling's, e.g. ``boil``)."""
        return self.task

    @_calls_simulator
    def _reset(
        self, rng_seed: int | None, options: dict[str, Any]
    ) -> tuple[Observation, dict[str, Any]]:
        sim = self._simulator()
        self.variation = variation(self.task, 0 if rng_seed is None else int(rng_seed))
        self._plan = list(self._expert_plan(sim))
        # a fresh load every episode, as the expert's plan was verified (without generating the
        # gold path: that load leaves the world elsewhere, e.g. the bees of find-living-thing)
        sim.load(self.task, self.variation, self.flags, gold=False)
        text = canonical(sim.reset())
        self.goal = sim.task_description()
        if self.start == "task":  # the authors' start: the task description alone
            text = self.goal
        self._best, self._taken, self._visited = 0, [], []
        return self._observe(text, valid=True)

    def _expert_plan(self, sim: server.Simulator) -> list[str]:
        key = (self.task, self.variation, self.flags, self.budget)
        if key not in _PLANS:
            sim.load(self.task, self.variation, self.flags, gold=True)
            gold = sim.gold()
            load = key[:3]
            best: tuple[int, int, list[str]] = (-(10**9), 0, gold)

            def tried(plans: list[list[str]]) -> bool:
                """Replay each plan; keep the best; True once one wins within the budget."""
                nonlocal best
                for plan in plans:
                    score, used = _replay(sim, plan, load)
                    if (score, -used) > best[:2] or (score == 100 and used <= self.budget):
                        best = (score, -used, plan[:used])
                    if score == 100 and used <= self.budget:
                        return True
                return False

            teleport = "teleportAction" in self.flags or self.flags == "easy"
            candidates = distillations(gold, teleport)
            won = tried(candidates)
            for direct in self._shortcuts(gold):
                won = won or tried(distillations(direct, teleport))
            if not won:
                # the gold agent's names for objects are its own random draws (unique
                # referents): an unmatched action gets the simulator's valid actions most
                # like it, each verified by a replay from a fresh load
                for _ in range(REPAIRS):
                    fixes = _repairs(sim, best[2], load)
                    won = bool(fixes) and tried(fixes)
                    if not fixes or won:
                        break
                if not won:  # the last resort: another object to focus on (a search)
                    won = tried(substitutions(sim, candidates[0], load))
                if not won:
                    tried(substitutions(sim, best[2], load))
            _PLANS[key] = best[2]
        return _PLANS[key]

    def _shortcuts(self, gold: list[str]) -> list[list[str]]:
        """Shorter plans than the gold path (tried when no distillation of it wins): without
        its abandoned attempts, without watering where the pots water themselves, and with the
        sink left running between watering rounds."""
        out = [without_retries(gold)]
        if "selfWateringFlowerPots" in self.flags or self.flags == "easy":
            out.append(without_watering(gold))
        out.append(with_sink_left_on(gold))
        return [p for p in out if p != gold]

    @_calls_simulator
    def would_accept(self, action: str) -> bool:
        """Seed 004's oracle WALL-E: whether this step would accept ``action`` (``valid``),
        asked of the simulator's parser without running it (:meth:`Simulator.would_accept`:
        no tick, no random draw, the parser's state put back). Only the validate stage of a
        world model that checks actions calls it."""
        return self._simulator().would_accept(command(action))

    @_calls_simulator
    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        sim = self._simulator()
        cmd = command(action)
        text, score, completed = sim.step(cmd)
        text = canonical(text)
        valid = not text.startswith(server.NO_MATCH)
        before = self._best
        self._best = max(self._best, score)
        self._taken.append(cmd)
        obs, info = self._observe(text, valid)
        return obs, (self._best - before) / 100.0, completed, info

    def _observe(self, text: str, valid: bool) -> tuple[Observation, dict[str, Any]]:
        sim = self._simulator()
        self._text = text
        room, items = sim.room(), inventory_items(canonical(sim.inventory()))
        if room not in self._visited:
            self._visited.append(room)
        admissible = sim.valid_actions() if self.list_admissible else None
        facts = TextFacts(text, room, items)
        obs = Observation(text, facts, admissible, self.goal)
        on_plan = self._plan[: len(self._taken)] == self._taken
        privileged = {
            "facts": TextFacts(f"You are in the {room}. {text}", room, items),
            "walkthrough": self._plan[len(self._taken) :] if on_plan else [],
            "gold": list(self._plan),
            "task": self.task,
            "variation": self.variation,
            "simplifications": self.flags,
            "raw_score": sim.score(),
            "tracked": {"location": room, "inventory": list(items), "visited": list(self._visited)},
        }
        return obs, {"valid": valid, "privileged": privileged}

    def score(self) -> float:
        return min(1.0, max(0, self._best) / 100.0)

    def success(self) -> bool:
        return self._best >= SUCCESS_SCORE

    def expert(self) -> ScienceWorldExpert:
        return ScienceWorldExpert()


#: (task, variation, simplifications, budget) -> the verified expert plan (per process)
_PLANS: dict[tuple[str, int, str, int], list[str]] = {}


def _replay(sim: server.Simulator, plan: list[str], load: tuple[str, int, str]) -> tuple[int, int]:
    """(best score, actions used until the task completed) of ``plan`` from a fresh load."""
    sim.load(*load, gold=False)
    sim.reset()
    best, used = 0, 0
    for a in plan:
        _, score, completed = sim.step(a)
        best, used = max(best, score), used + 1
        if completed:
            break
    return best, used


#: rounds of repair of a plan's unmatched actions (each tries :data:`REPAIR_CHOICES`)
REPAIRS, REPAIR_CHOICES = 3, 4


def _repairs(sim: server.Simulator, plan: list[str], load: tuple[str, int, str]) -> list[list[str]]:
    """The plan with its first unmatched action replaced by each of the few valid actions
    most like it (same verb, most words shared); none when every action matches."""
    sim.load(*load, gold=False)
    sim.reset()
    for i, a in enumerate(plan):
        text, _, completed = sim.step(a)
        if completed:
            return []
        if not text.startswith(server.NO_MATCH):
            continue
        words = set(a.split())
        verb = a.split()[0] if a.split() else ""
        scored = sorted(
            (-len(words & set(v.split())), v)
            for v in sim.valid_actions()
            if v.split()[:1] == [verb] and v != a
        )
        return [[*plan[:i], v, *plan[i + 1 :]] for _, v in scored[:REPAIR_CHOICES]]
    return []


def _simplify(value: str) -> str:
    if value not in ("anchor", "easy", "none"):
        raise ValueError("expected anchor, easy or none")
    return value


def _start(value: str) -> str:
    if value not in ("look", "task"):
        raise ValueError("expected look or task")
    return value


OPTIONS = {
    "simplify": Option("simplify", _simplify, "simplify=anchor|easy|none"),
    "start": Option("start", _start, "start=look|task"),
    "admissible": Option("admissible", on_off, "admissible=on|off"),
}


@functools.cache
def env_class(task: str) -> type[ScienceWorldEnv]:
    """The env class of one task (its name, budget and splits)."""
    if task not in TASKS:
        raise ConfigError(f"unknown ScienceWorld task {task!r}; tasks: {', '.join(TASKS)}")
    budget, dev, test, _ = TASKS[task]
    attrs = {
        "name": f"scienceworld/{task}",
        "task": task,
        "max_steps": budget,
        "history_len": budget,
        "splits": {
            "test": range(0, min(ANCHOR_TEST, TASKS[task][3] - test)),
            "train": range(TRAIN_BASE, TRAIN_BASE + dev),
            "dev": range(DEV_BASE, DEV_BASE + test - dev),
        },
        "__doc__": f"ScienceWorld's {task} task (budget {budget}).",
    }
    cls_name = "ScienceWorld_" + re.sub(r"\W", "_", task)
    return type(cls_name, (ScienceWorldEnv,), attrs)


def gym_id(task: str) -> str:
    return "statelab/ScienceWorld-" + "".join(w.title() for w in task.split("-")) + "-v0"


for _task in TASKS:
    _name = f"scienceworld/{_task}"
    register_env(
        _name,
        env_class(_task),
        gym_id(_task),
        f"{_name}[:simplify=anchor|easy|none+admissible=on|off+start=look|task]",
        option_parser(_name, OPTIONS),
        needs=NEEDS,
    )

__all__ = ["TASKS", "ScienceWorldEnv", "ScienceWorldExpert", "env_class", "variation"]
