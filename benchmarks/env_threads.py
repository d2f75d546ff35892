"""Episodes in flight on an env that is not thread-safe (cooking): a lock, or a process each?

An env declaring ``thread_safe = False`` cannot have two calls at once in one process
(TextWorld parses a game's logic with one module-level parser). The runner could make its
calls one at a time (a lock, held on the env-call worker thread) or give each episode's env a
process of its own (calls sent over a pipe). This plays the same episodes of the expert,
``--inflight`` at a time, each way, and prints the wall time of the whole batch:

* ``serial``: one episode at a time (the reference: ``concurrency: 1`` on one run);
* ``threads``: today's path before the declaration, calls on worker threads, no lock (counts
  the episodes that fail);
* ``lock``: the shipped path (``statelab.run._envcall.env_call`` with the env's class);
* ``process``: a pool of ``--inflight`` worker processes (spawned, started before the clock;
  their start-up is printed apart), one env each, every call pickled over a pipe.

Each mode runs in a fresh process of its own (a cold TextWorld parse cache, as a run has).

    python benchmarks/env_threads.py --episodes 8 --inflight 4 --steps 20 \
        --out benchmarks/env_threads.json

Measured 2026-12-03 on the 2-core development machine, shared with other jobs (load 5-7),
8 episodes of 20 expert steps, 4 in flight (``env_threads.json``): serial 20.1 s; threads
without the lock 0.4 s with 8 of 8 failed at reset (TextWorld's parser); lock 22.1 s, 0
failed; a process each 31.4 s, 0 failed, after 16.5 s starting the four processes. The lock
is the faster: the calls are Python under the GIL, so threads gain little from overlapping
them, while a process pays its start, its own cold parse and a pickled round trip per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ENV = "cooking"


def _episode(env: Any, seed: int, steps: int) -> int:
    """The expert's episode of ``seed``, at most ``steps`` actions; the actions taken."""
    obs, info = env.reset(seed=seed)
    policy, n = env.expert(), 0
    for n in range(1, steps + 1):  # noqa: B007 - the count is the result
        obs, _, term, trunc, info = env.step(policy.act(obs, info))
        if term or trunc:
            break
    return n


def _serve(conn: Any) -> None:
    """A worker process: one env, playing the calls sent to it."""
    from statelab.envs import make_env

    env = make_env(ENV)
    conn.send("ready")
    while True:
        msg = conn.recv()
        if msg is None:
            env.close()
            return
        what, arg = msg
        try:
            if what == "reset":
                out: Any = env.reset(seed=arg)
            else:
                out = env.step(arg)
            conn.send(("ok", out))
        except Exception as e:  # the episode fails; the worker goes on
            conn.send(("error", f"{type(e).__name__}: {e}"))


class _Remote:
    """An env in a worker process, as the episode sees it (reset, step, expert)."""

    def __init__(self, conn: Any) -> None:
        from statelab.envs import env_class

        self.conn = conn
        self._expert = env_class(ENV)().expert()

    def _call(self, what: str, arg: Any) -> Any:
        self.conn.send((what, arg))
        status, out = self.conn.recv()
        if status != "ok":
            raise RuntimeError(out)
        return out

    def reset(self, seed: int) -> Any:
        return self._call("reset", seed)

    def step(self, action: str) -> Any:
        return self._call("step", action)

    def expert(self) -> Any:
        return self._expert


async def _lanes(jobs: list[int], inflight: int, play: Any) -> list[str]:
    """Play ``jobs`` (seeds) through ``inflight`` lanes; each lane's ``play(lane, seed)`` is
    awaited; the failures' reasons."""
    queue, failed = list(jobs), []

    async def lane(i: int) -> None:
        while queue:
            seed = queue.pop(0)
            try:
                await play(i, seed)
            except Exception as e:
                failed.append(f"seed {seed}: {type(e).__name__}: {str(e).splitlines()[0]}")

    await asyncio.gather(*(lane(i) for i in range(inflight)))
    return failed


def run_mode(mode: str, episodes: int, inflight: int, steps: int) -> dict[str, Any]:
    """One mode, in this process: its wall time and failures."""
    from statelab.envs import env_class, make_env
    from statelab.envs._cooking_games import ensure_games
    from statelab.run._envcall import env_call

    seeds = [i % 4 for i in range(episodes)]  # the games of seeds 0-3, from the cache
    ensure_games(range(4))
    import textworld  # noqa: F401 - imported before the clock, as a run's set-up has

    cls = env_class(ENV)
    out: dict[str, Any] = {"mode": mode, "episodes": episodes, "inflight": inflight}
    if mode == "process":
        ctx = mp.get_context("spawn")
        t0 = time.perf_counter()
        pipes, procs = [], []
        for _ in range(inflight):
            ours, theirs = ctx.Pipe()
            p = ctx.Process(target=_serve, args=(theirs,), daemon=True)
            p.start()
            pipes.append(ours)
            procs.append(p)
        for c in pipes:
            assert c.recv() == "ready"
        out["startup_s"] = round(time.perf_counter() - t0, 2)
        remotes = [_Remote(c) for c in pipes]

        async def play(i: int, seed: int) -> None:
            r = remotes[i]
            await env_call("episode", lambda: _episode(r, seed, steps), 600)

    else:
        width = 1 if mode == "serial" else inflight

        async def play(i: int, seed: int) -> None:
            env = make_env(ENV)
            held = cls if mode != "threads" else None
            # every call as the runner makes it: one env call each, on a worker thread
            obs, info = await env_call("reset", lambda: env.reset(seed=seed), 600, env=held)
            policy = env.expert()
            for _ in range(steps):
                a = policy.act(obs, info)
                got = await env_call("step", lambda a=a: env.step(a), 600, env=held)
                obs, _, term, trunc, info = got
                if term or trunc:
                    break
            env.close()

        inflight = out["inflight"] = width
    t0 = time.perf_counter()
    failed = asyncio.run(_lanes(seeds, inflight, play))
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    out["failed"] = len(failed)
    out["reasons"] = sorted(set(failed))[:3]
    if mode == "process":
        for c in pipes:
            c.send(None)
        for p in procs:
            p.join(10)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--inflight", type=int, default=4)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--modes", default="serial,threads,lock,process")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # a mode, in this process
    a = ap.parse_args()
    if a.one:
        print(json.dumps(run_mode(a.one, a.episodes, a.inflight, a.steps)))
        return
    rows = []
    for mode in a.modes.split(","):
        cmd = [sys.executable, __file__, "--one", mode, "--episodes", str(a.episodes),
               "--inflight", str(a.inflight), "--steps", str(a.steps)]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(json.dumps(row), flush=True)
        rows.append(row)
    if a.out:
        a.out.write_text(json.dumps({"env": ENV, "steps": a.steps, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
