"""statelab against inspect_ai: the same agent loop, the same stub server, side by side.

Both play 64 Tower of Hanoi episodes (statelab's ``hanoi`` env, seeds 0-63) of 30 turns
against the OpenAI-compatible stub of ``benchmarks/concurrency.py`` (answers after 50 ms
±50 %, always ``Action: wait``, never a legal move, so every episode runs all 30 turns),
with the same number of requests in flight (64: every episode at once):

* **statelab**: ``run_experiment`` with history ``full``, the store on and no response
  cache (inspect_ai has none on by default), its own HTTP client for a plain-http server;
  **statelab-httpx** the same with ``STATELAB_HTTP_CLIENT=httpx`` (its client before);
* **inspect_ai**: a ``Task`` of 64 samples whose solver resets the same env, appends each
  observation as a user message, calls ``generate`` and steps the env with the reply, and a
  scorer reading the env's score; the ``openai-api`` provider (the ``openai`` client on
  httpx) against the same stub, ``max_connections`` = ``max_samples`` = 64, its log written.

Each framework runs in a fresh child process, after a warm-up of one short episode in that
process (imports and first-use setup are not per-call costs), and is timed around its run
call alone: wall seconds and user + system CPU seconds of the process (all its threads), per
model call as the stub counted them. Prompts are not identical (statelab renders its own
prompt; the inspect_ai loop sends the growing chat), so the stub's answer time, not prompt
size, sets the pace; both send every turn's request.

    pip install inspect_ai        # benchmark-only: not a statelab dependency
    python benchmarks/vs_inspect_ai.py [--episodes 64 --turns 30 --delay 0.05 --repeat 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _stub(delay: float) -> tuple[subprocess.Popen[str], int]:
    server = subprocess.Popen(
        [sys.executable, str(HERE / "concurrency.py"), "--serve", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    return server, int(server.stdout.readline())


def _get(port: int, path: str) -> dict[str, Any]:
    import httpx

    return dict(httpx.get(f"http://127.0.0.1:{port}{path}", timeout=10).json())


def _timed(run: Any) -> tuple[float, float]:
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    run()
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


# -- statelab ---------------------------------------------------------------------------------


def statelab_run(port: int, episodes: int, turns: int, conc: int, out: str) -> int:
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_experiment

    exp = parse_experiment(
        {
            "name": "vs",
            "model": f"openai-compat:http://127.0.0.1:{port}/v1#stub",
            "expert": False,
            "seeds": list(range(episodes)),
            "grid": {"env": ["hanoi"], "history": ["full"]},
            "max_steps": turns,
            "concurrency": conc,
            "timeout": 60,
            "out": out,
            "cache": None,
        }
    )
    res = asyncio.run(run_experiment(exp, progress=None))
    assert res.done == episodes, res.failures[:3]
    return res.model_calls


# -- inspect_ai -------------------------------------------------------------------------------


def inspect_run(port: int, episodes: int, turns: int, conc: int, out: str) -> int:
    os.environ["STUB_BASE_URL"] = f"http://127.0.0.1:{port}/v1"
    os.environ["STUB_API_KEY"] = "none"
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import Generate, TaskState, solver

    from statelab.envs import make_env

    @solver  # type: ignore[misc]
    def hanoi_agent() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            env = make_env("hanoi", max_steps=turns)
            obs, info = env.reset(seed=int(state.sample_id))
            state.messages = [ChatMessageUser(content=f"{env.manual}\n\n{obs.text}")]
            for _ in range(turns):
                state = await generate(state)
                reply = state.output.completion
                action = reply.partition("Action:")[2].strip() or reply
                obs, _, terminated, truncated, info = env.step(action)
                state.metadata["score"] = info["score"]
                if terminated or truncated:
                    break
                state.messages.append(ChatMessageUser(content=obs.text))
            env.close()
            return state

        return solve

    @scorer(metrics=[mean()])  # type: ignore[misc]
    def env_score() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=float(state.metadata.get("score", 0.0)))

        return score

    task = Task(
        dataset=[Sample(input="play", id=i) for i in range(episodes)],
        solver=hanoi_agent(),
        scorer=env_score(),
    )
    logs = inspect_eval(
        task,
        model="openai-api/stub/stub",
        max_connections=conc,
        max_samples=conc,
        log_dir=out,
        display="none",
        log_level="error",
    )
    assert logs[0].status == "success", logs[0].error
    assert logs[0].results is not None and logs[0].results.completed_samples == episodes
    return episodes * turns


def statelab_httpx_run(port: int, episodes: int, turns: int, conc: int, out: str) -> int:
    """statelab with httpx as its HTTP client (as before issue 13), for reference."""
    os.environ["STATELAB_HTTP_CLIENT"] = "httpx"
    return statelab_run(port, episodes, turns, conc, out)


RUNS = {"statelab": statelab_run, "statelab-httpx": statelab_httpx_run, "inspect_ai": inspect_run}


def one(name: str, port: int, episodes: int, turns: int, conc: int) -> dict[str, float]:
    """In this (child) process: a warm-up, then the timed run of ``name``."""
    run = RUNS[name]
    with tempfile.TemporaryDirectory() as tmp:
        run(port, 1, 2, 1, str(Path(tmp) / "warm"))
        _get(port, "/reset")
        calls = 0

        def go() -> None:
            nonlocal calls
            calls = run(port, episodes, turns, conc, str(Path(tmp) / "run"))

        wall, cpu = _timed(go)
    served = _get(port, "/stats")
    return {"wall_s": wall, "cpu_s": cpu, "calls": calls, "served": served["requests"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=64)
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=1, help="alternating runs of each")
    ap.add_argument("--runs", default=",".join(RUNS), help="which of " + ", ".join(RUNS))
    ap.add_argument("--one", choices=sorted(RUNS), help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        r = one(args.one, args.port, args.episodes, args.turns, args.concurrency)
        print(json.dumps(r), flush=True)
        return
    print(
        f"{args.episodes} Hanoi episodes x {args.turns} turns, {args.concurrency} in flight, "
        f"stub answers {args.delay * 1000:.0f} ms +-50 %; load average at start "
        f"{os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)"
    )
    print(f"{'':>14} {'wall s':>7} {'calls':>6} {'CPU s':>7} {'CPU/call':>9}")
    names = args.runs.split(",")
    rows: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    for _ in range(args.repeat):
        for name in names:
            server, port = _stub(args.delay)
            try:
                argv = [sys.executable, __file__, "--one", name, "--port", str(port)]
                argv += ["--episodes", str(args.episodes), "--turns", str(args.turns)]
                argv += ["--concurrency", str(args.concurrency)]
                out = subprocess.run(
                    argv,
                    capture_output=True,
                    text=True,
                    check=False,
                )
            finally:
                server.terminate()
                server.wait(timeout=10)
            if out.returncode:
                sys.exit(f"{name} failed:\n{out.stderr[-3000:]}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
            assert r["served"] == r["calls"], r
            rows[name].append(r)
            print(
                f"{name:>14} {r['wall_s']:7.2f} {r['served']:6.0f} {r['cpu_s']:7.2f} "
                f"{r['cpu_s'] / r['served'] * 1000:7.2f}ms",
                flush=True,
            )
    if "statelab" not in rows or "inspect_ai" not in rows:
        return
    s, i = rows["statelab"], rows["inspect_ai"]
    wall = sum(r["wall_s"] for r in s) / sum(r["wall_s"] for r in i)
    cpu = (sum(r["cpu_s"] / r["served"] for r in s)) / sum(r["cpu_s"] / r["served"] for r in i)
    ideal = args.turns * args.delay * -(-args.episodes // args.concurrency)
    print(
        f"statelab / inspect_ai: wall {wall:.2f}x, CPU per call {cpu:.2f}x "
        f"(the stub's pace alone: {ideal:.1f} s); load average at end {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
