"""statelab's own time per step: everything but the model call.

Plays Tower of Hanoi episodes with the ``scripted`` model (which answers at once) and reports
the median over steps of (step wall time - time inside the model), for each history.
Target: under 1 ms per step.

    python benchmarks/overhead.py [--episodes 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from statelab.llm import ScriptedLLM
from statelab.run.config import parse_experiment
from statelab.run.episode import run_episode
from statelab.run.store import Store

REPLIES = [
    "Action: Move the top disk of rod A to the top of rod C",
    "Action: Move the top disk of rod A to the top of rod B",
    "Action: Move the top disk of rod C to the top of rod B",
    "Action: Move the top disk of rod B to the top of rod A",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "r.json"
        script.write_text(json.dumps(REPLIES))
        exp = parse_experiment({
            "name": "bench", "model": f"scripted:{script}", "expert": False,
            "seeds": list(range(args.episodes)),
            "grid": {"env": ["hanoi"], "history": ["full", "summary", "oracle-summary"],
                     "format": ["tagged-list", "natural"]},
        })
        store = Store(Path(tmp) / "store.sqlite")
        rows = []
        for spec in exp.runs():
            overheads: list[float] = []
            commit_s = 0.0
            for seed in exp.seeds:
                llm = ScriptedLLM(REPLIES * 10)
                ep = asyncio.run(run_episode(spec, seed, llm))
                overheads += [s.overhead for s in ep.trajectory]
                t0 = time.perf_counter()
                store.commit_episode(ep)  # the per-episode write, amortised over its steps
                commit_s += time.perf_counter() - t0
            med = statistics.median(overheads) * 1000
            p90 = statistics.quantiles(overheads, n=10)[-1] * 1000
            store_ms = commit_s / len(overheads) * 1000
            rows.append((spec.history, spec.format, len(overheads), med, p90, store_ms))
        store.close()
    print(f"{'history':16} {'format':12} {'steps':>6} {'median ms':>10} {'p90 ms':>8} "
          f"{'+store ms':>9}")
    for h, f, n, med, p90, st in rows:
        print(f"{h:16} {f:12} {n:6d} {med:10.3f} {p90:8.3f} {st:9.3f}")
    worst = max(r[3] + r[5] for r in rows)
    print(f"worst median incl. amortised store write: {worst:.3f} ms per step (target < 1 ms)")


if __name__ == "__main__":
    main()
