"""Issue 23: the ScienceWorld pool caps the simulators (JVMs) alive at once, beyond the
run's concurrency: at the cap an env waits for one to come free, and past the wait its
episode fails in one line. A fake simulator factory stands in for the JVMs (no Java here)."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest

from statelab.envs import _scienceworld_server as server


class FakeSim:
    """A started simulator as far as the pool can tell."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake(monkeypatch) -> list[FakeSim]:
    started: list[FakeSim] = []

    def start() -> FakeSim:
        started.append(FakeSim(len(started)))
        return started[-1]

    monkeypatch.setattr(server, "_start", start)
    monkeypatch.setattr(server, "healthy", lambda sw, timeout=0.0: not sw.closed)
    monkeypatch.setattr(server, "_discard", lambda sw: sw.close())
    monkeypatch.setattr(server, "_IDLE", [])
    monkeypatch.setattr(server, "_OUT", {"now": 0, "peak": 0})
    monkeypatch.setenv("STATELAB_SCIENCEWORLD_JVMS", "2")
    return started


def _acquire_in_thread() -> tuple[threading.Thread, list[Any]]:
    got: list[Any] = []

    def take() -> None:
        try:
            got.append(server.acquire())
        except Exception as e:
            got.append(e)

    t = threading.Thread(target=take, daemon=True)
    t.start()
    return t, got


def test_at_the_cap_an_env_waits_for_a_simulator_to_come_free(fake):
    a, b = server.acquire(), server.acquire()
    t, got = _acquire_in_thread()
    time.sleep(0.3)
    assert got == [] and len(fake) == 2  # waiting: no third JVM started
    server.release(a)  # healthy: kept idle, and handed to the waiter
    t.join(5)
    assert got == [a] and len(fake) == 2
    assert server.out() == {"now": 2, "peak": 2}
    server.release(b)
    server.release(a)
    assert server.out()["now"] == 0 and server.idle() == 2


def test_a_simulator_dropped_at_the_cap_lets_a_new_one_start(fake):
    a, _ = server.acquire(), server.acquire()
    t, got = _acquire_in_thread()
    time.sleep(0.2)
    server.release(a, broken=True)  # killed, not kept: one fewer alive
    t.join(5)
    assert len(got) == 1 and got[0] is fake[2] and a.closed


def test_past_the_wait_the_env_fails_in_one_line(fake, monkeypatch):
    monkeypatch.setattr(server, "CAP_WAIT_S", 0.2)
    server.acquire(), server.acquire()
    with pytest.raises(RuntimeError) as err:
        server.acquire()
    assert "\n" not in str(err.value)
    assert str(err.value).startswith("2 ScienceWorld simulators are in use")
    assert len(fake) == 2 and server.out()["now"] == 2


def test_the_cap_defaults_to_one_jvm_per_gigabyte_of_memory(monkeypatch):
    monkeypatch.delenv("STATELAB_SCIENCEWORLD_JVMS", raising=False)
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert server.max_live() == max(1, memory // (1 << 30))
    monkeypatch.setenv("STATELAB_SCIENCEWORLD_JVMS", "3")
    assert server.max_live() == 3
    monkeypatch.setenv("STATELAB_SCIENCEWORLD_JVMS", "many")
    with pytest.raises(RuntimeError, match="whole number"):
        server.max_live()


def test_a_discarded_jvm_is_never_contacted_when_its_objects_are_collected():
    """Before: py4j objects of a killed JVM, collected later, made py4j connect to the dead
    JVM and log a traceback from inside the garbage collector, at any allocation; inside
    ``ast.parse`` (pytest rewriting a module at session close) CPython 3.11 then raised
    "AST constructor recursion depth mismatch"."""
    import gc
    import logging

    pytest.importorskip("scienceworld")
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append  # type: ignore[method-assign]
    log = logging.getLogger("py4j")
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.DEBUG)
    try:
        sw = server._start()
        held = sw._gateway.jvm.java.util.ArrayList()  # a py4j object of this JVM
        kept = [sw._gateway.jvm.java.util.ArrayList() for _ in range(3)]  # held on
        client = sw._gateway._gateway_client
        # its connection busy with a call that never returns (the stopped JVM's case), so
        # a shutdown has to open a new connection to the dead JVM, which fails
        busy = list(client.deque)
        client.deque.clear()
        server._discard(sw)
        records.clear()
        del held
        gc.collect()
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    # another test's gateway closing its callback server logs at INFO meanwhile: not a try
    tried = [
        r.getMessage()
        for r in records
        if (r.levelno >= logging.INFO or r.exc_info)
        and "Callback Server Shutting Down" not in r.getMessage()
    ]
    assert tried == []
    assert client.is_connected is False
    from py4j.finalizer import ThreadSafeFinalizer

    mine = f"{client.address}{client.port}o"
    assert not [k for k in ThreadSafeFinalizer.finalizers if k.startswith(mine)]
    del busy, kept


def test_the_jvm_heap_cap_is_a_setting(monkeypatch):
    """-Xmx of STATELAB_SCIENCEWORLD_XMX (default 512m; "none": the JVM's own, a quarter of the
    machine's memory), after the constant identity hash; a malformed size fails in one line."""
    monkeypatch.delenv("STATELAB_SCIENCEWORLD_XMX", raising=False)
    assert server.java_opts() == [*server.JAVA_OPTS, "-Xmx512m"]
    monkeypatch.setenv("STATELAB_SCIENCEWORLD_XMX", "768m")
    assert server.java_opts()[-1] == "-Xmx768m"
    monkeypatch.setenv("STATELAB_SCIENCEWORLD_XMX", "none")
    assert server.java_opts() == server.JAVA_OPTS
    for bad in ("1.5g", "-Xmx2g", "lots", "0g"):
        monkeypatch.setenv("STATELAB_SCIENCEWORLD_XMX", bad)
        with pytest.raises(RuntimeError, match="expected a heap size"):
            server.java_opts()


def test_the_simulator_starts_its_jvm_with_the_cap(monkeypatch):
    """The package's launch_gateway receives the options (its own call passes none)."""
    package = pytest.importorskip("scienceworld.scienceworld")
    if server.shutil.which("java") is None:
        pytest.skip("no java")
    seen: list[list[str]] = []

    class Started:  # the package's ScienceWorldEnv launches its JVM through launch_gateway
        def __init__(self, *args: Any, **kw: Any) -> None:
            package.launch_gateway(classpath="scienceworld.jar")

    monkeypatch.setattr(package, "launch_gateway", lambda **kw: seen.append(kw["javaopts"]))
    monkeypatch.setattr(package, "ScienceWorldEnv", Started)
    monkeypatch.setenv("STATELAB_SCIENCEWORLD_XMX", "2g")
    server._start()
    assert seen == [[*server.JAVA_OPTS, "-Xmx2g"]]


def test_a_jvm_that_does_not_start_in_time_fails_in_a_line_of_its_own(fake, monkeypatch):
    """Issue 36 item 4: a JVM's start has a deadline of its own (START_S), apart from the
    reset's; a start past it fails in one line saying so, and its late JVM is shut down."""
    go = threading.Event()
    late: list[FakeSim] = []

    def slow_start() -> FakeSim:  # a fake server that starts only when told to
        go.wait()
        late.append(FakeSim(99))
        return late[-1]

    monkeypatch.setattr(server, "_start", slow_start)
    monkeypatch.setattr(server, "START_S", 0.05)
    with pytest.raises(RuntimeError, match=r"did not start within 0\.05 s \(START_S\)"):
        server.acquire()
    assert server.out()["now"] == 0  # its place at the cap is free again
    go.set()  # the JVM comes up after all: nobody holds it, so it is shut down
    for _ in range(500):
        if late and late[0].closed:
            break
        time.sleep(0.01)
    assert late and late[0].closed and server.idle() == 0


def test_a_started_jvm_within_its_deadline_is_handed_out(fake, monkeypatch):
    monkeypatch.setattr(server, "START_S", 30.0)
    sw = server.acquire()
    assert sw is fake[0] and not sw.closed


def test_the_reset_deadline_holds_the_wait_the_start_and_the_reset_each_in_full():
    """Before, a reset had the run's 300 s for everything: a wait at the cap (up to 240 s)
    and a JVM's start under load left the reset itself a minute or less."""
    from statelab.envs.scienceworld import ScienceWorldEnv
    from statelab.run._envcall import call_timeout

    assert call_timeout(ScienceWorldEnv, "reset") == (
        server.CAP_WAIT_S + server.START_S + server.RESET_S
    )
    assert server.RESET_S >= 300.0  # the reset alone keeps what it had for everything
