"""The embedded model's throughput: the quickstart, prefill reuse and time per call.

Runs an experiment (default ``configs/quickstart.yaml``) with its local llama.cpp model and
no response cache, into a temporary folder, and reports:

* wall time of the run;
* tokens sent (the prompts' lengths, summed over calls) and tokens evaluated (every token
  llama.cpp actually ran a forward pass over: prefill not reused from a context, constrained
  choice and generated tokens), and their ratio, the **reuse ratio** (evaluated / sent; lower
  is better: 0.1 means nine tenths of every prompt came from a context's cache);
* time per call, by kind (acting, summary ...).

Counting wraps ``llama_cpp.Llama.eval`` (through which every forward pass goes), so it
measures any version of the backend alike: ``PYTHONPATH=<other checkout>/src`` compares one.

    python benchmarks/local_throughput.py --set 'seeds=[0]'
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def measure(config: Path, sets: list[str]) -> dict[str, Any]:
    import llama_cpp

    from statelab.llm import make_llm
    from statelab.run.config import load_experiment
    from statelab.run.runner import run_experiment
    from statelab.run.store import Store

    counted = {"evaluated": 0, "evals": 0, "eval_s": 0.0}
    original = llama_cpp.Llama.eval

    def counting_eval(self: Any, tokens: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(self, tokens)
        finally:
            counted["evaluated"] += len(tokens)
            counted["evals"] += 1
            counted["eval_s"] += time.perf_counter() - t0

    llama_cpp.Llama.eval = counting_eval  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            exp = load_experiment(config, [*sets, f"out={tmp}", "cache=null"])
            built: dict[str, Any] = {}

            def factory(spec: str) -> Any:
                if spec not in built:
                    t0 = time.perf_counter()
                    built[spec] = make_llm(spec)
                    counted["load_s"] = time.perf_counter() - t0
                return built[spec]

            t0 = time.perf_counter()
            res = asyncio.run(run_experiment(exp, progress=None, llm_factory=factory))
            wall = time.perf_counter() - t0
            st = Store(Path(tmp) / exp.name / "store.sqlite", readonly=True)
            got = st.rows("calls", ["kind", "input_tokens", "latency"])
            rows = [tuple(r.values()) for r in got]
            st.close()
    finally:
        llama_cpp.Llama.eval = original  # type: ignore[method-assign]
    by_kind: dict[str, list[float]] = defaultdict(list)
    for kind, _, latency in rows:
        by_kind[kind].append(latency)
    sent = sum(n for _, n, _ in rows)
    return {
        "episodes": res.done,
        "failed": res.failed,
        "calls": len(rows),
        "wall_s": wall,
        "load_s": counted.get("load_s", 0.0),
        "sent": sent,
        "evaluated": counted["evaluated"],
        "reuse": counted["evaluated"] / sent if sent else 0.0,
        "eval_s": counted["eval_s"],
        "per_call_s": {k: sum(v) / len(v) for k, v in sorted(by_kind.items())},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "quickstart.yaml")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="key=value (YAML)")
    args = ap.parse_args()
    r = measure(args.config, args.sets)
    print(
        f"episodes {r['episodes']} (failed {r['failed']}), calls {r['calls']}, "
        f"wall {r['wall_s']:.1f} s (model load {r['load_s']:.1f} s)"
    )
    print(
        f"tokens sent {r['sent']:,}, evaluated {r['evaluated']:,}: reuse ratio "
        f"{r['reuse']:.3f} (evaluated / sent); {r['eval_s']:.1f} s in llama.cpp eval"
    )
    print("time per call: " + ", ".join(f"{k} {v:.3f} s" for k, v in r["per_call_s"].items()))


if __name__ == "__main__":
    main()
