"""Does a run grow with its work, and only linearly? Scripted Hanoi episodes at three sizes.

Each size runs ``statelab run`` in a child process (the command line, as a user runs it) on
one config: the scripted backend, a full history (so each step's prompt holds every earlier
step: the case that made the store grow with the square of the episode length), 30 steps an
episode (the script moves a disk back and forth and never solves), the response cache off,
``concurrency: 64``, no expert or random-floor runs. Per size it reports:

* wall time of the child, and seconds per episode;
* peak RSS of the child (``ru_maxrss`` of that process alone, from ``wait4``);
* the store's bytes (``store.sqlite`` with its WAL, after the run) per step, and per episode;

and the ratios of each measure between consecutive sizes (10x the episodes: linear time is a
time ratio of ~10, flat memory an RSS ratio of ~1, constant bytes per step a ratio of ~1).

    python benchmarks/scale.py                       # 200, 2,000 and 20,000 episodes
    python benchmarks/scale.py --sizes 200 2000      # what fits
    python benchmarks/scale.py --json scale.json     # also write the table as JSON
    python benchmarks/scale.py --sizes 200 --steps 120   # longer episodes: bytes per step
    python benchmarks/scale.py --sizes 200 2000 --backends scripted stub   # and over HTTP

``--inflight`` measures memory against an episode's *length* instead: 64 episodes, all in
flight at once (``concurrency: 64``), of each of ``--lengths`` steps (default 30, 120, 480),
on the same work (``same``: every episode plays the script above, so their texts deduplicate)
and on varied work (``varied``: a random-move script per episode, seeded by the episode's
key, that never puts a disk on rod C, so it never solves and every episode is distinct).
Both run the experiment in a child process with a scripted model that keeps no prompts (a
scripted model and each episode's cursor keep their last 256 in ``seen`` for tests: 64
episodes of them would measure the test double, not the run). Flat memory is a peak RSS
ratio within 1.2x across the lengths:

    python benchmarks/scale.py --inflight                    # 30/120/480 steps, both policies
    python benchmarks/scale.py --inflight --lengths 30 120 --policies varied
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

STEPS = 30
#: never solves: a disk goes A -> B and back
SCRIPT = [
    "Action: Move the top disk of rod A to the top of rod B",
    "Action: Move the top disk of rod B to the top of rod A",
]


#: the moves of the varied policy: none puts a disk on rod C (never solved); some are illegal
RANDOM_MOVES = [
    "Action: Move the top disk of rod A to the top of rod B",
    "Action: Move the top disk of rod B to the top of rod A",
    "Action: Move the top disk of rod C to the top of rod A",
    "Action: Move the top disk of rod C to the top of rod B",
]
#: in-flight episodes of ``--inflight`` (all of them at once)
INFLIGHT = 64


def config(tmp: Path, episodes: int, steps: int = STEPS, model: str = "") -> Path:
    """The experiment file of one size (its store goes under ``tmp``); ``model`` replaces
    the scripted backend (the HTTP stub's URL)."""
    script = tmp / "replies.json"
    script.write_text(json.dumps(SCRIPT))
    data = {
        "name": f"scale{episodes}",
        "model": model or f"scripted:{script}",
        "seeds": list(range(episodes)),
        "grid": {"env": ["hanoi"], "history": ["full"], "format": ["tagged-list"]},
        "max_steps": steps,
        "out": str(tmp / "out"),
        "cache": None,
        "concurrency": 64,
        "expert": False,
        "random": False,  # no model-free random floor row: the scripted episodes only
    }
    path = tmp / f"scale{episodes}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@contextlib.contextmanager
def _backend(name: str) -> Iterator[str]:
    """The model spec of backend ``name``: ``scripted`` (the script above), or ``stub``: a
    local HTTP server speaking the OpenAI chat-completions API (``benchmarks/concurrency.py
    --serve 0``: it answers at once with "Action: wait", never a legal move, so episodes
    run to ``max_steps`` as the script's do), started here in its own process and stopped
    after the size."""
    if name == "scripted":
        yield ""
        return
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("concurrency.py")), "--serve", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        yield f"openai-compat:http://127.0.0.1:{port}/v1#stub"
    finally:
        server.terminate()
        server.wait(timeout=10)


def random_moves(key: str, steps: int) -> list[str]:
    """The varied policy's script for the episode ``key``: ``steps`` moves drawn from
    :data:`RANDOM_MOVES` by a generator seeded with the key (distinct episodes, replayable)."""
    import random

    rng = random.Random(key)
    return [rng.choice(RANDOM_MOVES) for _ in range(steps)]


def _child(cfg: str, steps: int, policy: str) -> None:
    """Run ``cfg`` here with ``policy``: ``same`` (:data:`SCRIPT` for every episode) or
    ``varied`` (every episode its own random-move script); the cursors keep no prompts."""
    import asyncio
    from collections import deque

    from statelab.llm.scripted import ScriptedLLM
    from statelab.run.config import load_experiment
    from statelab.run.runner import run_experiment

    class RandomMoves(ScriptedLLM):
        def for_episode(self, key: str) -> ScriptedLLM:
            script = random_moves(key, steps) if policy == "varied" else SCRIPT
            cursor = ScriptedLLM(script, f"{policy}/{key}")
            cursor.seen = deque(maxlen=1)
            return cursor

    model = RandomMoves(SCRIPT, policy)
    model.seen = deque(maxlen=1)  # the cursors' prompts are kept on the model too
    asyncio.run(run_experiment(load_experiment(cfg), progress=None, llm_factory=lambda _: model))


def measure(
    episodes: int, steps: int = STEPS, backend: str = "scripted", policy: str = "cli"
) -> dict[str, Any]:
    """Run one size in a child process; its wall time, peak RSS and store bytes: ``policy``
    ``cli`` runs ``statelab run``, ``same`` and ``varied`` the experiment here (:func:`_child`,
    scripted backend)."""
    with tempfile.TemporaryDirectory(prefix="statelab-scale-") as tmp, _backend(backend) as m:
        cfg = config(Path(tmp), episodes, steps, m)
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        argv = [sys.executable, "-m", "statelab", "run", str(cfg), "--quiet"]
        if policy != "cli":
            argv = [sys.executable, __file__, "--child", policy, str(cfg), "--steps", str(steps)]
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak RSS
        wall = time.perf_counter() - t0
        load1 = os.getloadavg()[0]
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"statelab run failed for {episodes} episodes ({status})")
        store = Path(tmp) / "out" / f"scale{episodes}" / "store.sqlite"
        size = sum(p.stat().st_size for p in store.parent.glob("store.sqlite*"))
        steps_cap, steps = steps, _steps(store)
    return {
        "backend": backend,
        "policy": policy,
        "max_steps": steps_cap,
        "episodes": episodes,
        "steps": steps,
        "wall_s": round(wall, 1),
        "s_per_episode": round(wall / episodes, 4),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "store_mb": round(size / 1e6, 1),
        "bytes_per_step": round(size / max(steps, 1)),
        "kb_per_episode": round(size / episodes / 1e3, 1),
        "load_avg_start_end": [round(load0, 1), round(load1, 1)],
    }


def _steps(store: Path) -> int:
    from statelab.run.store import Store

    st = Store(store, readonly=True)
    try:
        return int(st.table("episodes", ["steps"])["steps"].sum())
    finally:
        st.close()


def table(rows: list[dict[str, Any]]) -> str:
    """The measures as a Markdown table, with the ratios to the size before."""
    out = [
        "| backend | episodes | steps | wall | s/episode | peak RSS | store | bytes/step |"
        " time ratio | RSS ratio | bytes/step ratio | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    prev: dict[str, Any] | None = None
    for r in rows:
        ratios = ["–", "–", "–"]
        if prev is not None and prev.get("backend") == r.get("backend"):
            ratios = [
                f"{r['wall_s'] / prev['wall_s']:.2f}",
                f"{r['peak_rss_mb'] / prev['peak_rss_mb']:.2f}",
                f"{r['bytes_per_step'] / prev['bytes_per_step']:.2f}",
            ]
        out.append(
            f"| {r.get('backend', 'scripted')} | {r['episodes']:,} | {r['steps']:,} |"
            f" {r['wall_s']:.1f} s |"
            f" {r['s_per_episode'] * 1000:.1f} ms | {r['peak_rss_mb']:.0f} MB |"
            f" {r['store_mb']:.1f} MB | {r['bytes_per_step']:,} | "
            + " | ".join(ratios)
            + " | "
            + "–".join(f"{x:g}" for x in r.get("load_avg_start_end", []))
            + " |"
        )
        prev = r
    return "\n".join(out)


def inflight_table(rows: list[dict[str, Any]]) -> str:
    """The ``--inflight`` measures as a Markdown table, with each policy's peak RSS against
    its shortest length's."""
    out = [
        "| policy | steps/episode | steps | wall | peak RSS | RSS vs shortest | bytes/step |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    first: dict[str, float] = {}
    for r in rows:
        base = first.setdefault(r["policy"], r["peak_rss_mb"])
        out.append(
            f"| {r['policy']} | {r['max_steps']:,} | {r['steps']:,} | {r['wall_s']:.1f} s |"
            f" {r['peak_rss_mb']:.0f} MB | {r['peak_rss_mb'] / base:.2f} |"
            f" {r['bytes_per_step']:,} |"
        )
    return "\n".join(out)


def main() -> None:
    """Measure each size (smallest first) and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 20000])
    ap.add_argument("--steps", type=int, default=STEPS, help="steps an episode (default 30)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--backends",
        nargs="+",
        default=["scripted"],
        choices=["scripted", "stub"],
        help="scripted (default) and/or stub: a local OpenAI-compatible HTTP server",
    )
    ap.add_argument(
        "--inflight",
        action="store_true",
        help=f"peak RSS of {INFLIGHT} in-flight episodes against their length (--lengths)",
    )
    ap.add_argument("--lengths", type=int, nargs="+", default=[30, 120, 480])
    ap.add_argument("--policies", nargs="+", default=["same", "varied"], choices=["same", "varied"])
    ap.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        _child(args.child[1], args.steps, args.child[0])
        return
    rows = []
    if args.inflight:
        for policy in args.policies:
            for steps in sorted(args.lengths):
                rows.append(measure(INFLIGHT, steps, "scripted", policy))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        print(inflight_table(rows))
        if args.json is not None:
            args.json.write_text(json.dumps(rows, indent=1) + "\n")
        return
    for backend in args.backends:
        for n in sorted(args.sizes):
            rows.append(measure(n, args.steps, backend))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(table(rows))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
