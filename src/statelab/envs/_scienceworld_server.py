"""ScienceWorld's simulator (a JVM behind py4j) as the env drives it: a per-process pool of
started simulators, and the few server calls on the hot path.

Starting a simulator costs about 3.4 s and 280 MB (its JVM runs with :data:`JAVA_OPTS`), so
a process keeps the ones its envs gave back (at most :data:`MAX_IDLE`) and hands them to the
next env: an env takes one at its first reset and gives it back on :meth:`close` or when it is
garbage-collected. One simulator serves one env at a time (a load replaces its task), so
concurrent episodes each hold their own.

The package's ``step()`` recomputes the valid-action list (about 1,000 strings, 160-300 ms)
and runs three free actions after every action; :class:`Simulator` calls the server's own
``step`` (4-30 ms) and asks for the valid actions, the room and the inventory only when wanted.
"""

from __future__ import annotations

import contextlib
import functools
import io
import threading
from typing import Any

#: started simulators a process keeps for its next envs
MAX_IDLE = 2
#: every object's identity hash is the same constant: the simulator keeps objects in hash
#: sets, so with the JVM's default (random) identity hashes a variation's objects are named,
#: listed and offered in ambiguity choices in an order that changes from one load to the next
#: (the package's gold path for find-living-thing variation 226 focused on a wolf, a bee or a
#: toad on four loads). With a constant hash the order is the insertion order: a variation
#: plays the same way on every load, and a stored episode replays.
JAVA_OPTS = ["-XX:+UnlockExperimentalVMOptions", "-XX:hashCode=2"]
#: what the parser answers to an input that matches no action (a no-op: no move is made)
NO_MATCH = "No known action matches that input."
_LOCK = threading.Lock()
_IDLE: list[Any] = []


def _start() -> Any:
    """A new simulator, its JVM started with :data:`JAVA_OPTS`."""
    try:
        import scienceworld.scienceworld as package
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise RuntimeError(
            "scienceworld envs need the scienceworld package and Java: "
            "pip install scienceworld==1.2.3 (and a JRE 11+, e.g. openjdk-17)"
        ) from err
    with _LOCK, contextlib.redirect_stdout(io.StringIO()):
        launch = package.launch_gateway  # the package passes no JVM options of its own
        package.launch_gateway = functools.partial(launch, javaopts=JAVA_OPTS)
        try:
            return package.ScienceWorldEnv("", envStepLimit=10**9)
        finally:
            package.launch_gateway = launch


def acquire() -> Any:
    """A started simulator: an idle one of this process, else a new one."""
    with _LOCK:
        if _IDLE:
            return _IDLE.pop()
    return _start()


def release(sw: Any) -> None:
    """Give a simulator back: kept for the next env, or shut down past :data:`MAX_IDLE`."""
    with _LOCK:
        if len(_IDLE) < MAX_IDLE:
            _IDLE.append(sw)
            return
    with contextlib.suppress(Exception):
        sw.close()


def idle() -> int:
    """How many started simulators this process keeps idle (tests, benchmarks)."""
    with _LOCK:
        return len(_IDLE)


class Simulator:
    """The server calls of one episode, on a simulator taken from the pool."""

    def __init__(self, sw: Any) -> None:
        self.sw = sw
        self.server = sw.server

    def load(self, task: str, variation: int, simplifications: str, gold: bool) -> None:
        self.server.load(task, int(variation), simplifications, bool(gold))

    def reset(self) -> str:
        """Back to the first move; the first observation is a ``look around``."""
        self.server.reset()
        return str(self.server.step("look around"))

    def step(self, action: str) -> tuple[str, int, bool]:
        """(observation, score 0-100 as the package rounds it, completed). As the package's
        own ``step``, a score below zero (a failed task, e.g. a wrong focus) completes it."""
        text = str(self.server.step(action))
        score = round(100 * float(self.server.getScore()))
        return text, score, bool(self.server.getCompleted()) or score < 0

    def score(self) -> int:
        return round(100 * float(self.server.getScore()))

    def gold(self) -> list[str]:
        return [str(a) for a in self.server.getGoldActionSequence()]

    def moves(self) -> int:
        return int(self.server.getNumMoves())

    def task_description(self) -> str:
        return str(self.server.getTaskDescription()).strip()

    def room(self) -> str:
        """The room the agent is in (three py4j calls; no action is run)."""
        agent = self.server.agentInterface().get().agent()
        return str(agent.getContainer().get().name())

    def inventory(self) -> str:
        """The package's free inventory action (takes no time in the simulation)."""
        return str(self.server.freeActionInventory())

    def would_accept(self, action: str) -> bool:
        """Whether the simulator's parser matches ``action`` to an action (seed 004's oracle
        WALL-E: "ask the env whether the action is valid"), without running it.

        This is the parse half of the server's ``step``: ``InputParser.parse`` on the agent's
        room, as ``AgentInterface.processUserInput`` calls it. Parsing builds the matched
        action but does not run it, ticks nothing and draws no random number; its one side
        effect is that an ambiguous input leaves the parser waiting for a number
        (``lastAmbiguousMatches``), which we put back as it was. While the parser already
        waits for a number, ``step`` takes any input as the answer (the env calls that
        valid), so the oracle says yes without parsing. Every input ``step`` would refuse with
        :data:`NO_MATCH` (the env's ``valid`` False) gets False here, every other True."""
        ai = self.server.agentInterface().get()
        parser = ai.inputParser()
        if parser.isInAmbiguousState():
            return True
        saved = parser.lastAmbiguousMatches()
        agent = ai.agent()
        room = agent.getContainer().get()
        goals = ai.task().goalSequence()
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                out = parser.parse(action, room, ai.universe(), agent, ai.objMonitor(), goals, room)
        finally:
            getattr(parser, "lastAmbiguousMatches_$eq")(saved)
        return bool(out._1()) or str(out._3()) != NO_MATCH

    def valid_actions(self) -> tuple[str, ...]:
        """The valid action-object combinations (slow: 160-300 ms; an under-approximation of
        what the parser accepts, e.g. ``examine X`` is missing)."""
        return tuple(str(a) for a in self.server.getValidActionObjectCombinations())
