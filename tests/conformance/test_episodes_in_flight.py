"""Every registered env (read from :data:`statelab.envs.ENVS` at collection time) plays the
same episodes with four in flight as one at a time, through the real runner: each env call on
a worker thread, as ``statelab run`` makes them. An env whose library keeps process-wide
state declares ``thread_safe = False`` and the runner makes its calls one at a time; one that
does not, and breaks, fails here (before that declaration, cooking failed every episode at
reset: TextWorld's module-level grammar parser, used by four loads at once).

The players are the env's expert (model-free), a few steps each, on four seeds. The episodes in
flight play in a fresh ``statelab run`` process, as a user's run does: a library's caches
filled by earlier tests in this process (TextWorld's parse of a game's logic is cached per
document) would hide a hazard that only a cold process meets. That process imports the
modules the env declares it needs first, as a run whose models or components have loaded
them has, and its first four resets start together (a barrier, given up after 2 s: under the
runner's lock they cannot meet), as a loaded machine's may: else the first import's lock and
the episodes' set-up stagger them, and they happen not to meet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conformance._registries import ENV_NAMES, HEAVY_ENVS, needs

from statelab.envs._registry import NEEDS
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

SEEDS = [0, 1, 2, 3]
#: a few steps: enough for every call (construction, reset, step, close) to overlap
STEPS = 3
#: ScienceWorld's tasks start a JVM per episode (3.4 s, 280 MB each): four at once only
#: under ``-m slow``
JVM = {n for n in [*ENV_NAMES, *HEAVY_ENVS] if needs(n) == "scienceworld"}


def _params() -> list[object]:
    names = [*ENV_NAMES, *HEAVY_ENVS]
    return [pytest.param(n, marks=[pytest.mark.slow] if n in JVM else []) for n in names]


def _experiment(env: str, concurrency: int, out: Path) -> dict[str, Any]:
    """The expert's episodes (the grid's model is never asked: a scripted one serves as
    many episodes at once as the experiment's ``concurrency``)."""
    replies = out.parent / "replies.json"
    replies.write_text('["Action: look"]')
    return {
        "name": "flight",
        "model": f"scripted:{replies}",
        "seeds": SEEDS,
        "grid": {"env": [env], "agent": ["expert"]},
        "expert": False,
        "random": False,
        "max_steps": STEPS,
        "concurrency": concurrency,
        "out": str(out),
        "cache": None,
    }


def _episodes(store: Path) -> dict[int, tuple[Any, ...]]:
    """What each seed's episode did: its outcome and every step."""
    s = Store(store)
    try:
        eps, steps = s.table("episodes"), s.table("steps")
    finally:
        s.close()
    out: dict[int, tuple[Any, ...]] = {}
    for ep in eps.itertuples():
        mine = steps[steps.seed == ep.seed].sort_values("t")
        cols = (mine.t, mine.action, mine.observation, mine.reward, mine.memory)
        played = list(zip(*cols, strict=True))
        out[int(ep.seed)] = (ep.status, ep.error, ep.env_seed, ep.score, ep.steps, played)
    return out


#: ``statelab run <config>`` after importing the modules named after ``n``, its first ``n``
#: resets together
IN_FLIGHT = """
import importlib, sys, threading
from statelab.cli import app
from statelab.core import Env
for module in sys.argv[3:]:
    importlib.import_module(module)
meet, reset = threading.Barrier(int(sys.argv[2])), Env.reset
def together(self, **kw):
    try:
        meet.wait(2)
    except threading.BrokenBarrierError:
        pass
    return reset(self, **kw)
Env.reset = together
app(["run", sys.argv[1]])
"""


def _in_flight(tmp_path: Path, env: str) -> Path:
    """``statelab run`` of the expert's episodes, four in flight, in a fresh process."""
    cfg = tmp_path / "flight.yaml"
    cfg.write_text(json.dumps(_experiment(env, len(SEEDS), tmp_path / "flight")))
    path = os.pathsep.join(p for p in sys.path if p)
    needs = NEEDS.get(env.split(":")[0])
    modules = list(needs.modules) if needs else []
    done = subprocess.run(
        [sys.executable, "-c", IN_FLIGHT, str(cfg), str(len(SEEDS)), *modules],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return tmp_path / "flight" / "flight" / "store.sqlite"


@pytest.mark.parametrize("name", _params())
def test_four_episodes_in_flight_play_as_one_at_a_time(name, tmp_path):
    pkg = needs(name)
    if pkg:
        pytest.importorskip(pkg)
    together = _episodes(_in_flight(tmp_path, name))
    alone = parse_experiment(_experiment(name, 1, tmp_path / "alone"))
    res = run_sync(alone, progress=None)
    assert (res.done, res.failed) == (len(SEEDS), 0), res.failures
    assert together == _episodes(alone.out_dir / "store.sqlite")


@pytest.mark.parametrize("safe", [True, False])
def test_calls_of_an_env_that_is_not_thread_safe_never_overlap(safe):
    """The runner's env calls (``env_call`` with the env called) of a class declaring
    ``thread_safe = False`` run one at a time, those of other classes at once."""
    import asyncio
    import threading
    import time

    from statelab.envs import env_class
    from statelab.run._envcall import env_call

    cls = type("Declared", (env_class("hanoi"),), {"thread_safe": safe})
    active, peak, lock = [0], [0], threading.Lock()

    def call() -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.2)  # long enough for the others to start, were they let
        with lock:
            active[0] -= 1

    async def go() -> None:
        await asyncio.gather(*(env_call("step", call, 30, env=cls) for _ in range(4)))

    asyncio.run(go())
    assert peak[0] > 1 if safe else peak[0] == 1
