"""ScienceWorld's simulator (a JVM behind py4j) as the env drives it: a per-process pool of
started simulators, and the few server calls on the hot path.

Starting a simulator costs about 3.4 s and 280 MB (its JVM runs with :func:`java_opts`: a
constant identity hash and a heap cap, ``STATELAB_SCIENCEWORLD_XMX``), so
a process keeps the ones its envs gave back (at most :data:`MAX_IDLE`) and hands them to the
next env: an env takes one at its first reset and gives it back on :meth:`close` or when it is
garbage-collected. One simulator serves one env at a time (a load replaces its task), so
concurrent episodes each hold their own (the run's env calls run on worker threads, so they
play in parallel, one JVM each).

The simulators alive at once, out and idle together, are capped (:func:`max_live`: a setting,
else one per GiB of memory), whatever the run's concurrency: at the cap an env waits for one to
come free, at most :data:`CAP_WAIT_S`, then its episode fails in one line.

A simulator is checked before it is reused (:func:`healthy`: its JVM runs, is not stopped,
and answers a ping within :data:`PING_S`); a dead or stopped one is killed and replaced, and
so is one given back while a call of its env was still in flight (a call past its deadline).
py4j's own log of a dead JVM (a traceback per retry) is kept off stderr.

The package's ``step()`` recomputes the valid-action list (about 1,000 strings, 160-300 ms)
and runs three free actions after every action; :class:`Simulator` calls the server's own
``step`` (4-30 ms) and asks for the valid actions, the room and the inventory only when wanted.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import os
import re
import shutil
import threading
from pathlib import Path
from typing import Any

#: started simulators a process keeps for its next envs
MAX_IDLE = 2
#: seconds a simulator taken from the pool has to answer a ping before it is replaced
PING_S = 5.0
#: every object's identity hash is the same constant: the simulator keeps objects in hash
#: sets, so with the JVM's default (random) identity hashes a variation's objects are named,
#: listed and offered in ambiguity choices in an order that changes from one load to the next
#: (the package's gold path for find-living-thing variation 226 focused on a wolf, a bee or a
#: toad on four loads). With a constant hash the order is the insertion order: a variation
#: plays the same way on every load, and a stored episode replays.
JAVA_OPTS = ["-XX:+UnlockExperimentalVMOptions", "-XX:hashCode=2"]
#: the JVM's heap cap (``-Xmx``) unless ``STATELAB_SCIENCEWORLD_XMX`` sets another
#: (:func:`java_opts`). Without one the JVM may take a quarter of the machine's memory (JVMs
#: reached 3.5 GB resident): one boil episode (gold path, verification, 36 steps) peaked at
#: 1,305 MB uncapped, 1,005 MB at 1g, 588 MB at 512m, 338 MB at 256m, with the same plan and
#: score; identify-life-stages-1's full search 523 MB at 512m
#: (benchmarks/scienceworld_xmx.json)
DEFAULT_XMX = "512m"
_XMX = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")
#: what the parser answers to an input that matches no action (a no-op: no move is made)
NO_MATCH = "No known action matches that input."
_LOCK = threading.Lock()  # the idle list and the counts
_FREE = threading.Condition(_LOCK)  # a simulator came free (idle, or one fewer alive)
#: memory a simulator's JVM may take as it plays, in MiB: :func:`max_live`'s default is one
#: simulator per this much of the machine's memory
JVM_MB = 1024
#: seconds :func:`acquire` waits for a simulator to come free at the cap (under the env's
#: reset deadline, so the wait fails its episode in one line of its own)
CAP_WAIT_S = 240.0
#: seconds a new simulator's JVM may take to start (3.4 s unloaded): a deadline of its own,
#: apart from the cap's wait and the reset's, so a slow start fails in one line that says so
#: (its late JVM shut down when it comes) and a wait or a start never eats the reset's time
START_S = 120.0
#: seconds a reset itself may take once it holds a simulator (a load, the expert's plan
#: verified); the env's reset deadline is the three together (:data:`RESET_TIMEOUT`)
RESET_S = 300.0
_START = threading.Lock()  # the package's launch_gateway, patched while one starts
_IDLE: list[Any] = []
#: simulators out of the pool now, and the most at once (tests, benchmarks)
_OUT = {"now": 0, "peak": 0}


def java_opts() -> list[str]:
    """The JVM options a simulator starts with: :data:`JAVA_OPTS` and the heap cap,
    ``-Xmx`` of ``STATELAB_SCIENCEWORLD_XMX`` (a size as java writes it: ``1g``, ``768m``;
    ``none`` for no cap, the JVM's own default), else :data:`DEFAULT_XMX`."""
    setting = os.environ.get("STATELAB_SCIENCEWORLD_XMX", "").strip() or DEFAULT_XMX
    if setting.lower() == "none":
        return list(JAVA_OPTS)
    if not _XMX.match(setting):
        raise RuntimeError(
            f"STATELAB_SCIENCEWORLD_XMX={setting!r}: expected a heap size (1g, 768m) or none"
        )
    return [*JAVA_OPTS, f"-Xmx{setting}"]


def _start() -> Any:
    """A new simulator, its JVM started with :func:`java_opts`."""
    try:
        import scienceworld.scienceworld as package
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise RuntimeError(
            "scienceworld envs need the scienceworld package and Java: "
            "pip install scienceworld==1.2.3 (and a JRE 11+, e.g. openjdk-17)"
        ) from err
    if shutil.which("java") is None:
        raise RuntimeError("scienceworld envs need a Java runtime 11+ (e.g. openjdk-17)")
    opts = java_opts()
    _quiet_py4j()
    with _START, contextlib.redirect_stdout(io.StringIO()):
        launch = package.launch_gateway  # the package passes no JVM options of its own
        package.launch_gateway = functools.partial(launch, javaopts=opts)
        try:
            return package.ScienceWorldEnv("", envStepLimit=10**9)
        finally:
            package.launch_gateway = launch


def _start_within(timeout: float) -> Any:
    """:func:`_start` on a daemon thread, given ``timeout`` seconds: a JVM that has not
    started by then fails the start in one line (shut down when it does start)."""
    done = threading.Event()
    box: dict[str, Any] = {}
    late = threading.Lock()

    def start() -> None:
        try:
            sw = _start()
        except BaseException as e:  # the start's own error, raised by the caller
            box["error"] = e
        else:
            with late:
                if box.get("gave_up"):
                    with contextlib.suppress(Exception):
                        _discard(sw)
                    return
                box["sw"] = sw
        finally:
            done.set()

    threading.Thread(target=start, daemon=True, name="scienceworld-start").start()
    done.wait(timeout)
    with late:
        if "sw" in box:
            return box["sw"]
        if "error" in box:
            raise box["error"]
        box["gave_up"] = True
    raise RuntimeError(
        f"a ScienceWorld simulator (JVM) did not start within {timeout:g} s (START_S);"
        " the machine may be overloaded"
    )


def _from_py4j(record: logging.LogRecord) -> bool:
    return "py4j" not in Path(record.pathname).parts


@functools.cache
def _quiet_py4j() -> None:
    """A dead JVM's errors reach the env as one exception each; py4j's own log of them (a
    traceback per retry, some of it logged on the root logger) stays off the run's stderr."""
    logging.getLogger("py4j").propagate = False
    logging.getLogger().addFilter(_from_py4j)


def _process(sw: Any) -> Any:
    """The simulator's JVM (a ``subprocess.Popen``), or None."""
    return getattr(getattr(sw, "_gateway", None), "java_process", None)


def _runs(sw: Any) -> bool:
    """Whether the simulator's JVM is running: not exited, not stopped (SIGSTOP), not a
    zombie; read from the process table, without a call into the JVM."""
    proc = _process(sw)
    if proc is None or proc.poll() is not None:
        return False
    try:
        stat = Path(f"/proc/{proc.pid}/stat").read_text()
    except OSError:  # no /proc here: poll() said it runs
        return True
    state = stat.rpartition(")")[2].split()[:1]
    return state not in (["T"], ["t"], ["Z"], ["X"])


def _answers(sw: Any, timeout: float) -> bool:
    """Whether the JVM answers a trivial call within ``timeout`` seconds (on a daemon thread:
    a JVM that never answers holds that thread, not the caller)."""
    answered: list[bool] = []

    def ping() -> None:
        with contextlib.suppress(Exception):
            sw._gateway.jvm.java.lang.System.currentTimeMillis()
            answered.append(True)

    t = threading.Thread(target=ping, name="scienceworld-ping", daemon=True)
    t.start()
    t.join(timeout)
    return bool(answered)


def healthy(sw: Any, timeout: float = PING_S) -> bool:
    """Whether a simulator may serve another episode: its JVM runs and answers."""
    return _runs(sw) and _answers(sw, timeout)


def _discard(sw: Any) -> None:
    """Kill the simulator's JVM and drop it (a stopped JVM dies of SIGKILL too); any call
    still waiting on it then fails at once, and the package's own ``close`` (run again when
    the object is collected) becomes a no-op, so nothing prints at exit.

    Its py4j client is marked disconnected first: every py4j object of a dead JVM still
    held somewhere would otherwise, when collected, connect to that JVM to release itself,
    fail, and log a formatted traceback from inside the garbage collector, wherever it ran
    (inside ``ast.parse``, that re-entry is CPython 3.11's "AST constructor recursion depth
    mismatch": pytest's session close crashed so after the stopped-JVM test)."""
    proc = _process(sw)
    if proc is not None:
        with contextlib.suppress(Exception):
            proc.kill()
            proc.wait(timeout=10)
    gateway = getattr(sw, "_gateway", None)
    client = getattr(gateway, "_gateway_client", None)
    if client is not None:
        client.is_connected = False  # py4j's release of a collected object then sends nothing
        _forget_objects(client)
        with contextlib.suppress(Exception):
            client.close()
    with contextlib.suppress(Exception):
        gateway.shutdown_callback_server()  # type: ignore[union-attr]
    sw.close = lambda: None


def _forget_objects(client: Any) -> None:
    """Drop py4j's release callbacks of every object of ``client``'s JVM (a weak reference
    whose callback is gone is never called): none of them runs inside a later collection."""
    with contextlib.suppress(Exception):
        from py4j.finalizer import ThreadSafeFinalizer

        prefix = f"{client.address}{client.port}"
        with ThreadSafeFinalizer.lock:
            keys = [k for k in ThreadSafeFinalizer.finalizers if k.startswith(prefix)]
            for key in [k for k in keys if not k[len(prefix) : len(prefix) + 1].isdigit()]:
                del ThreadSafeFinalizer.finalizers[key]


#: the deadline of a ScienceWorld env's reset: the wait for a simulator at the cap, a new
#: JVM's start and the reset itself, each its own budget (a reset under load that waited and
#: started a JVM still has :data:`RESET_S` for itself)
RESET_TIMEOUT = CAP_WAIT_S + START_S + RESET_S


def max_live() -> int:
    """The most simulators (JVMs) this process keeps alive at once, out and idle together:
    ``STATELAB_SCIENCEWORLD_JVMS`` when set, else one per :data:`JVM_MB` of memory (at
    least 1). A run whose concurrency is higher waits for a simulator to come free."""
    setting = os.environ.get("STATELAB_SCIENCEWORLD_JVMS", "").strip()
    if setting:
        try:
            return max(1, int(setting))
        except ValueError:
            raise RuntimeError(
                f"STATELAB_SCIENCEWORLD_JVMS={setting!r}: expected a whole number of JVMs"
            ) from None
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):  # pragma: no cover - no sysconf here
        return 8
    return max(1, memory // (JVM_MB << 20))


def _take() -> Any:
    """An idle simulator (counted out), or None having reserved a start (counted out too),
    waiting while :func:`max_live` are alive and none is idle."""
    cap = max_live()
    with _FREE:
        if not _FREE.wait_for(lambda: _IDLE or _OUT["now"] + len(_IDLE) < cap, CAP_WAIT_S):
            raise RuntimeError(
                f"{cap} ScienceWorld simulators are in use (the cap, STATELAB_SCIENCEWORLD_JVMS);"
                f" none came free in {CAP_WAIT_S:g} s"
            )
        _OUT["now"] += 1
        _OUT["peak"] = max(_OUT["peak"], _OUT["now"])
        return _IDLE.pop() if _IDLE else None


def _gone() -> None:
    """One simulator counted out is no more (dropped, or kept idle): a waiter may go on."""
    with _FREE:
        _OUT["now"] -= 1
        _FREE.notify_all()


def acquire() -> Any:
    """A started simulator: a healthy idle one of this process, else a new one (an idle one
    that died or stopped meanwhile is killed and dropped); while :func:`max_live` are alive
    and none is idle, it waits (at most :data:`CAP_WAIT_S`) for one to come free; a new one's
    JVM has :data:`START_S` to start."""
    while True:
        sw = _take()
        if sw is None:
            try:
                return _start_within(START_S)
            except BaseException:
                _gone()
                raise
        if healthy(sw):
            return sw
        _discard(sw)
        _gone()


def release(sw: Any, broken: bool = False) -> None:
    """Give a simulator back: kept for the next env when it is healthy and fewer than
    :data:`MAX_IDLE` are kept, else shut down. ``broken`` (a call of its env was still in
    flight: it passed its deadline) kills it: a simulator is never shared by two calls."""
    if broken or not healthy(sw):
        _discard(sw)
        _gone()
        return
    with _FREE:
        if len(_IDLE) < MAX_IDLE:
            _IDLE.append(sw)
            _OUT["now"] -= 1
            _FREE.notify_all()
            return
    with contextlib.suppress(Exception):
        sw.close()
    _gone()


def idle() -> int:
    """How many started simulators this process keeps idle (tests, benchmarks)."""
    with _LOCK:
        return len(_IDLE)


def out() -> dict[str, int]:
    """Simulators out of the pool now and the most at once (``{"now", "peak"}``)."""
    with _LOCK:
        return dict(_OUT)


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
