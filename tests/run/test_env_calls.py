"""Issue 23 item 5, the spine's half: every env call (reset, step, the action oracle, close)
runs off the event loop with a deadline, so a slow or hung env fails its own episode in one
line while the others go on; model-free episodes play in parallel; an env that fails every
episode stops the run (the breaker counts env errors, not only model errors)."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any, ClassVar

import gymnasium as gym
import pytest

from statelab.core import Env, Observation
from statelab.envs import ENVS, register_env
from statelab.envs import _registry as env_registry
from statelab.facts import TextFacts
from statelab.run import _envcall
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync


class _Expert:
    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        return "go"


class Probe(Env):
    """Two steps to win; class attributes script how its calls behave in a test."""

    name = "probe"
    max_steps = 4
    history_len = 4
    facts_type: ClassVar[type] = TextFacts
    default_format = "natural"
    manual = "Say go."
    #: resets in flight wait (at most 2 s) until this many are (0: they do not wait)
    meet: ClassVar[int] = 0
    active: ClassVar[list[int]] = [0, 0]  # now, peak
    cond: ClassVar[threading.Condition] = threading.Condition()
    #: seeds whose step never returns (until ``release`` is set)
    hang: ClassVar[set[int]] = set()
    release: ClassVar[threading.Event] = threading.Event()
    #: seeds whose reset raises
    broken: ClassVar[set[int]] = set()
    closed: ClassVar[list[int]] = []
    #: how many of the next constructions never return (until ``release`` is set)
    hang_builds: ClassVar[int] = 0

    def __init__(self, max_steps: int | None = None) -> None:
        with Probe.cond:
            hang = Probe.hang_builds > 0
            Probe.hang_builds -= hang
        if hang:
            Probe.release.wait(60)
        super().__init__(max_steps)

    def _obs(self) -> Observation:
        return Observation("A room.", TextFacts("A room."), ("go",), "say go")

    def _reset(self, rng_seed: int | None, options: dict[str, Any]) -> tuple[Observation, dict]:
        self.seed_ = int(rng_seed or 0)
        if self.seed_ in Probe.broken:
            raise ValueError("no room here\nsecond line")
        if Probe.meet:
            with Probe.cond:
                Probe.active[0] += 1
                Probe.active[1] = max(Probe.active)
                Probe.cond.notify_all()
                Probe.cond.wait_for(lambda: Probe.active[0] >= Probe.meet, timeout=2)
                Probe.active[0] -= 1
        return self._obs(), {}

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        if self.seed_ in Probe.hang:
            Probe.release.wait(60)
        return self._obs(), 0.5, self.steps >= 2, {}

    def success(self) -> bool:
        return self.steps >= 2

    def close(self) -> None:
        Probe.closed.append(self.seed_)

    def expert(self) -> _Expert:
        return _Expert()


@pytest.fixture
def probe_env(monkeypatch):
    name = f"probe-{uuid.uuid4().hex[:8]}"
    gym_id = f"statelab-test/Probe{uuid.uuid4().hex[:8]}-v0"
    register_env(name, Probe, gym_id)
    monkeypatch.setattr(Probe, "meet", 0)
    monkeypatch.setattr(Probe, "active", [0, 0])
    monkeypatch.setattr(Probe, "hang", set())
    monkeypatch.setattr(Probe, "broken", set())
    monkeypatch.setattr(Probe, "closed", [])
    monkeypatch.setattr(Probe, "hang_builds", 0)
    Probe.release.clear()
    yield name
    Probe.release.set()
    ENVS.unregister(name)
    env_registry.ENV_CLASSES.pop(name, None)
    env_registry.GYM_IDS.pop(name, None)
    gym.registry.pop(gym_id, None)


def _experiment(tmp_path, env: str, seeds: list[int], **over: Any):
    script = tmp_path / "replies.json"
    script.write_text('["Action: go"]')
    data: dict[str, Any] = {
        "name": "calls",
        "model": f"scripted:{script}",
        "seeds": seeds,
        "grid": {"env": [env]},
        "out": str(tmp_path / "results"),
        "cache": None,
        "concurrency": 4,
        "random": False,
    }
    data.update(over)
    return parse_experiment(data)


def _run_bounded(exp: Any, seconds: float) -> Any:
    """``run_sync(exp)`` on a thread, given ``seconds``: a run that hangs fails the test
    instead of hanging it."""
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(run_sync(exp, progress=None)), daemon=True)
    t.start()
    t.join(seconds)
    assert out, f"the run did not finish in {seconds} s"
    return out[0]


def test_model_free_episodes_play_their_env_calls_in_parallel(tmp_path, probe_env, monkeypatch):
    # each reset waits until four are in flight: only resets running at once get there (the
    # scripted model's run plays one episode at a time; the expert's four at once)
    monkeypatch.setattr(Probe, "meet", 4)
    res = _run_bounded(_experiment(tmp_path, probe_env, [0, 1, 2, 3]), 60)
    assert (res.done, res.failed) == (8, 0), res.failures
    assert Probe.active[1] >= 4
    assert sorted(Probe.closed) == [0, 0, 1, 1, 2, 2, 3, 3]  # every env was closed


def test_a_hung_env_call_fails_its_episode_in_one_line_and_the_run_goes_on(
    tmp_path, probe_env, monkeypatch
):
    monkeypatch.setattr(Probe, "hang", {1})
    monkeypatch.setattr(Probe, "call_timeout", 0.5, raising=False)
    started = time.perf_counter()
    res = _run_bounded(_experiment(tmp_path, probe_env, [0, 1, 2], expert=False), 30)
    assert (res.done, res.failed) == (2, 1), res.failures
    (reason,) = res.reasons
    assert reason == "EnvCallError: env step took longer than 0.5 s"
    assert time.perf_counter() - started < 30
    assert 1 in Probe.closed  # the hung episode's env was closed (what stops the call)


def test_an_env_whose_construction_hangs_fails_its_episode_in_one_line(
    tmp_path, probe_env, monkeypatch
):
    """Before: the env was built on the event loop, so a constructor that blocks froze
    every episode of the run (this run did not finish in 30 s)."""
    monkeypatch.setattr(Probe, "hang_builds", 1)
    monkeypatch.setattr(Probe, "build_timeout", 0.5, raising=False)
    res = _run_bounded(_experiment(tmp_path, probe_env, [0, 1, 2], expert=False), 30)
    assert (res.done, res.failed) == (2, 1), res.failures
    (reason,) = res.reasons
    assert reason == "EnvCallError: env construction took longer than 0.5 s"
    assert Probe.hang_builds == 0  # the one hung construction was the first


def test_an_env_error_is_one_line_and_an_env_failing_every_episode_stops_the_run(
    tmp_path, probe_env, monkeypatch
):
    monkeypatch.setattr(Probe, "broken", set(range(8)))
    exp = _experiment(tmp_path, probe_env, list(range(8)), concurrency=1, expert=False)
    res = _run_bounded(exp, 60)
    assert res.done == 0 and res.failed == exp.max_consecutive_failures
    assert res.not_started == 8 - exp.max_consecutive_failures
    (reason,) = res.reasons
    assert reason == "EnvCallError: env reset failed: ValueError: no room here"
    assert "\n" not in reason and "second line" not in reason
    assert res.stopped is not None and f"env {probe_env}" in res.stopped


def test_env_call_deadline_and_blame():
    import asyncio

    def boom() -> None:
        raise KeyError("k")

    async def go() -> list[str]:
        out = []
        for fn, blame in ((boom, True), (boom, False), (lambda: time.sleep(5), True)):
            try:
                await _envcall.env_call("x", fn, 0.2, blame=blame)
            except Exception as e:
                out.append(f"{type(e).__name__}: {e}")
        out.append(str(await _envcall.env_call("x", lambda: 7, 1.0)))
        return out

    assert asyncio.run(go()) == [
        "EnvCallError: env x failed: KeyError: 'k'",
        "KeyError: 'k'",  # not blamed on the env (a stage running components' code)
        "EnvCallError: env x took longer than 0.2 s",
        "7",
    ]
