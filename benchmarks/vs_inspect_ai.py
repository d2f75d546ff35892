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
  Its chat grows by one message a turn (up to 61: the user turns and the replies);
* **inspect_ai-2msg**: the same, but each turn sends exactly the messages statelab sent for
  that episode and turn (its system and user message, recorded from an untimed statelab run
  against the same stub in the same process before the warm-up): the same requests to the
  same server, so the difference is the frameworks' own cost per call.

Each framework runs in a fresh child process, after a warm-up of one short episode in that
process (imports and first-use setup are not per-call costs), and is timed around its run
call alone: wall seconds and user + system CPU seconds of the process (all its threads), per
model call as the stub counted them, with the messages and prompt characters each request
carried. One run prints every row and the ratios side by side (statelab / each inspect_ai
mode) and writes them to ``--json`` (default ``benchmarks/vs_inspect_ai.json``).

inspect_ai is benchmark-only, not a statelab dependency (the ``bench`` extra names it). Where
it cannot go into the venv as is (0.3.285 pins ``fsspec<=2026.6.0``), install it beside it
and name the folder: ``pip install --target DIR inspect-ai`` and ``--inspect-site DIR`` (put
on the inspect_ai children's ``PYTHONPATH`` only).

    pip install inspect-ai        # benchmark-only: not a statelab dependency
    python benchmarks/vs_inspect_ai.py [--episodes 64 --turns 30 --delay 0.05 --repeat 1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: model calls made, and a function giving the requests' sizes (called after the timing)
Run = tuple[int, Callable[[], dict[str, float]]]


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

#: the messages of each (episode seed, turn) statelab sent, for the inspect_ai-2msg solver
Prompts = dict[int, list[list[dict[str, str]]]]


def _stats(sizes: list[tuple[int, int]]) -> dict[str, float]:
    """Messages and prompt characters per request, from (messages, characters) pairs."""
    n = max(len(sizes), 1)
    return {
        "messages_mean": sum(m for m, _ in sizes) / n,
        "messages_max": max((m for m, _ in sizes), default=0),
        "prompt_chars_mean": sum(c for _, c in sizes) / n,
    }


def _sizes(messages: list[dict[str, Any]]) -> tuple[int, int]:
    return len(messages), sum(len(str(m.get("content", ""))) for m in messages)


def _statelab_prompts(out: str) -> Prompts:
    from statelab.run.store import Store

    st = Store(Path(out) / "vs" / "store.sqlite", readonly=True)
    try:
        rows = st.rows("calls", ["seed", "t", "i", "messages"], order="seed, t, i")
    finally:
        st.close()
    prompts: Prompts = {}
    for r in rows:
        prompts.setdefault(int(r["seed"]), []).append(json.loads(r["messages"]))
    return prompts


def statelab_run(port: int, episodes: int, turns: int, conc: int, out: str) -> Run:
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_experiment

    exp = parse_experiment(
        {
            "name": "vs",
            "model": f"openai-compat:http://127.0.0.1:{port}/v1#stub",
            "expert": False,
            "random": False,
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

    def stats() -> dict[str, float]:
        prompts = _statelab_prompts(out)
        return _stats([_sizes(m) for turns_ in prompts.values() for m in turns_])

    return res.model_calls, stats


def statelab_httpx_run(port: int, episodes: int, turns: int, conc: int, out: str) -> Run:
    """statelab with httpx as its HTTP client (as before issue 13), for reference."""
    os.environ["STATELAB_HTTP_CLIENT"] = "httpx"
    return statelab_run(port, episodes, turns, conc, out)


# -- inspect_ai -------------------------------------------------------------------------------


def _inspect_messages(messages: list[dict[str, str]]) -> list[Any]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser,
             "assistant": ChatMessageAssistant}  # fmt: skip
    return [kinds[m["role"]](content=m["content"]) for m in messages]


def _inspect(
    port: int, episodes: int, turns: int, conc: int, out: str, prompts: Prompts | None
) -> Run:
    """inspect_ai's loop; with ``prompts``, each turn sends statelab's messages for it."""
    os.environ["STUB_BASE_URL"] = f"http://127.0.0.1:{port}/v1"
    os.environ["STUB_API_KEY"] = "none"
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import Generate, TaskState, solver

    from statelab.envs import make_env

    sizes: list[tuple[int, int]] = []

    @solver  # type: ignore[misc]
    def hanoi_agent() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            env = make_env("hanoi", max_steps=turns)
            seed = int(state.sample_id)
            obs, info = env.reset(seed=seed)
            state.messages = [ChatMessageUser(content=f"{env.manual}\n\n{obs.text}")]
            for turn in range(turns):
                if prompts is not None:
                    state.messages = _inspect_messages(prompts[seed][turn])
                sizes.append((len(state.messages), sum(len(m.text) for m in state.messages)))
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
    return episodes * turns, lambda: _stats(sizes)


def inspect_run(port: int, episodes: int, turns: int, conc: int, out: str) -> Run:
    return _inspect(port, episodes, turns, conc, out, None)


def inspect_2msg_run(port: int, episodes: int, turns: int, conc: int, out: str) -> Run:
    return _inspect(port, episodes, turns, conc, out, _PROMPTS)


_PROMPTS: Prompts = {}
RUNS = {
    "statelab": statelab_run,
    "statelab-httpx": statelab_httpx_run,
    "inspect_ai": inspect_run,
    "inspect_ai-2msg": inspect_2msg_run,
}
INSPECT = ("inspect_ai", "inspect_ai-2msg")


def one(name: str, port: int, episodes: int, turns: int, conc: int) -> dict[str, Any]:
    """In this (child) process: a warm-up, then the timed run of ``name``."""
    run = RUNS[name]
    with tempfile.TemporaryDirectory() as tmp:
        if name == "inspect_ai-2msg":  # statelab's requests, recorded untimed
            rec = str(Path(tmp) / "record")
            statelab_run(port, episodes, turns, conc, rec)
            _PROMPTS.update(_statelab_prompts(rec))
            assert sorted(_PROMPTS) == list(range(episodes))
            assert {len(v) for v in _PROMPTS.values()} == {turns}
        run(port, 1, 2, 1, str(Path(tmp) / "warm"))
        _get(port, "/reset")
        got: list[Run] = []

        def go() -> None:
            got.append(run(port, episodes, turns, conc, str(Path(tmp) / "run")))

        wall, cpu = _timed(go)
        calls, stats = got[0]
        sizes = stats()
    served = _get(port, "/stats")
    return {"wall_s": wall, "cpu_s": cpu, "calls": calls, "served": served["requests"], **sizes}


def _child(name: str, args: argparse.Namespace) -> dict[str, Any]:
    server, port = _stub(args.delay)
    env = dict(os.environ)
    if name in INSPECT and args.inspect_site:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (env.get("PYTHONPATH"), str(args.inspect_site)) if p
        )
    try:
        argv = [sys.executable, __file__, "--one", name, "--port", str(port)]
        argv += ["--episodes", str(args.episodes), "--turns", str(args.turns)]
        argv += ["--concurrency", str(args.concurrency)]
        out = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    finally:
        server.terminate()
        server.wait(timeout=10)
    if out.returncode:
        sys.exit(f"{name} failed:\n{out.stderr[-3000:]}")
    r: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["served"] == r["calls"], r
    return r


def ratios(rows: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """statelab / each inspect_ai mode: summed wall time, and mean CPU per call."""

    def per_call(rs: list[dict[str, Any]]) -> float:
        return sum(r["cpu_s"] / r["served"] for r in rs) / len(rs)

    out = {}
    s = rows.get("statelab")
    for mode in INSPECT:
        if s and rows.get(mode):
            i = rows[mode]
            out[mode] = {
                "wall": sum(r["wall_s"] for r in s) / sum(r["wall_s"] for r in i),
                "cpu_per_call": per_call(s) / per_call(i),
            }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=64)
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=1, help="alternating runs of each")
    ap.add_argument("--runs", default=",".join(RUNS), help="which of " + ", ".join(RUNS))
    ap.add_argument("--inspect-site", type=Path, help="a folder holding inspect_ai (pip --target)")
    ap.add_argument("--json", type=Path, default=HERE / "vs_inspect_ai.json")
    ap.add_argument("--one", choices=sorted(RUNS), help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        r = one(args.one, args.port, args.episodes, args.turns, args.concurrency)
        print(json.dumps(r), flush=True)
        return
    load0 = os.getloadavg()[0]
    print(
        f"{args.episodes} Hanoi episodes x {args.turns} turns, {args.concurrency} in flight, "
        f"stub answers {args.delay * 1000:.0f} ms +-50 %; load average at start "
        f"{load0:.2f} ({os.cpu_count()} cores)"
    )
    print(f"{'':>15} {'wall s':>7} {'calls':>6} {'CPU s':>7} {'CPU/call':>9} {'msgs':>5} "
          f"{'max':>4} {'chars':>6}")  # fmt: skip
    names = args.runs.split(",")
    rows: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for _ in range(args.repeat):
        for name in names:
            r = _child(name, args)
            rows[name].append(r)
            print(
                f"{name:>15} {r['wall_s']:7.2f} {r['served']:6.0f} {r['cpu_s']:7.2f} "
                f"{r['cpu_s'] / r['served'] * 1000:7.2f}ms {r['messages_mean']:5.1f} "
                f"{r['messages_max']:4.0f} {r['prompt_chars_mean']:6.0f}",
                flush=True,
            )
    rat = ratios(rows)
    ideal = args.turns * args.delay * -(-args.episodes // args.concurrency)
    for mode, q in rat.items():
        print(f"statelab / {mode}: wall {q['wall']:.3f}x, CPU per call {q['cpu_per_call']:.3f}x")
    load1 = os.getloadavg()[0]
    print(f"(the stub's pace alone: {ideal:.1f} s); load average at end {load1:.2f}")
    versions = {}
    with contextlib.suppress(Exception):
        from importlib.metadata import version

        versions["statelab"] = version("statelab")
    record = {
        "setup": {"episodes": args.episodes, "turns": args.turns, "delay_s": args.delay,
                  "concurrency": args.concurrency, "repeat": args.repeat,
                  "cores": os.cpu_count(), "load_average": [round(load0, 2), round(load1, 2)],
                  "stub_pace_s": ideal, **versions},
        "rows": rows,
        "ratios": rat,
    }  # fmt: skip
    args.json.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
