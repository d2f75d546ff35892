"""Issue 23 item 5: ScienceWorld's JVMs under faults. A killed JVM is never handed to another
episode (the pool checks a simulator before reuse and replaces a dead one); a stopped JVM
(SIGSTOP) fails only its own episode, at the env-call deadline, and is killed; the other
episodes of the run play on, and py4j prints no tracebacks. Each test starts at most a few
JVMs (about 7 s and 280 MB each) and bounds its run."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any

import pytest

pytest.importorskip("scienceworld")

from statelab.envs import _scienceworld_server as server
from statelab.envs import make_env
from statelab.envs.scienceworld import env_class

TASK = "find-non-living-thing"


def _pid(sw: Any) -> int:
    return int(sw._gateway.java_process.pid)


def test_a_killed_jvm_fails_its_episode_and_is_never_reused(capfd):
    env = make_env(f"scienceworld/{TASK}")
    env.reset(seed=0)
    assert env._sim is not None
    dead = env._sim.sw
    os.kill(_pid(dead), signal.SIGKILL)
    dead._gateway.java_process.wait(10)
    # py4j words a dead JVM's call one of three ways, by how far the call got
    dead_jvm = r"Java server|Answer from Java side is empty|An error occurred while calling"
    with pytest.raises(Exception, match=dead_jvm):
        env.step("look around")
    env.close()
    # a JVM killed while it waits in the pool is dropped when taken
    idle = server.acquire()
    server.release(idle)
    assert server.idle() >= 1
    os.kill(_pid(idle), signal.SIGKILL)
    idle._gateway.java_process.wait(10)
    again = make_env(f"scienceworld/{TASK}")
    obs, _ = again.reset(seed=1)  # plays: a live simulator, not the dead one
    assert again._sim is not None and again._sim.sw not in (dead, idle)
    assert obs.text.startswith("This room is called")
    again.close()
    assert dead not in server._IDLE and idle not in server._IDLE
    err = capfd.readouterr().err
    assert "Traceback" not in err and "py4j" not in err


@pytest.mark.slow  # two JVMs and two expert plans verified: a minute or more on two cores
def test_a_stopped_jvm_fails_only_its_episode_and_the_others_play_on(monkeypatch, capfd):
    import asyncio

    from statelab.run.runner import play_episode
    from statelab.run.spec import RunSpec

    cls = env_class(TASK)
    monkeypatch.setattr(cls, "step_timeout", 10.0)
    stopped: list[Any] = []
    step = cls._step

    def stop_then_step(self: Any, action: str) -> Any:
        if self.variation == 225 and len(self._taken) == 2 and not stopped:  # seed 0, 3rd step
            assert self._sim is not None
            stopped.append(self._sim.sw)
            os.kill(_pid(self._sim.sw), signal.SIGSTOP)
        return step(self, action)

    monkeypatch.setattr(cls, "_step", stop_then_step)
    spec = RunSpec.make(
        env=f"scienceworld/{TASK}", model="-", agent="expert", format="natural",
        max_steps=cls.max_steps,
    )  # fmt: skip

    async def three() -> list[Any]:
        return await asyncio.gather(*(play_episode(spec, s, 0, None, None) for s in (0, 1)))

    done: list[Any] = []
    t = threading.Thread(target=lambda: done.append(asyncio.run(three())), daemon=True)
    try:
        t.start()
        t.join(400)
        assert done, "the episodes froze"
    finally:
        for sw in stopped:  # never leave a stopped JVM behind, whatever happened
            with contextlib.suppress(OSError):
                os.kill(_pid(sw), signal.SIGKILL)
    eps = [ep for ep, _ in done[0]]
    assert [ep.status for ep in eps] == ["failed", "done"], [e.error for e in eps]
    assert eps[0].error == "EnvCallError: env step took longer than 10 s"
    assert eps[1].success
    assert server.out()["peak"] >= 2  # the two episodes held a JVM each, at the same time
    (sw,) = stopped
    assert sw._gateway.java_process.poll() is not None  # killed by its env's close
    assert sw not in server._IDLE
    err = capfd.readouterr().err
    assert "Traceback" not in err and "py4j" not in err
