"""What a DSSR round and seed 003's audit cost at the seed's scale on one GPU, from the tokens
a call takes (measured by ``dssr_throughput.py``) and a stated or measured throughput
(``gpu_rates.py``); docs/seed003.md, "Cost of a round", spells the arithmetic out and
seeds/seed003/tests/train/test_dssr_batch_cost.py recomputes it by hand."""

from __future__ import annotations

from typing import Any

#: the seed's round (docs/seed003.md, "Cost of a round"): write points, candidates, the
#: largest look-ahead K, the budget B, and the reader/writer size
SEED = {"points": 2529, "candidates": 12, "k": 12, "budget": 128, "params": "about 4B"}
#: stated, not measured (no GPU here): a 4B decoder in bfloat16 through transformers on one
#: H200 runs ``passes_per_s`` small forward passes a second whatever the batch, up to ``rows``
#: rows (latency-bound: Python and kernel launches; the doc's "a few tens of tokens a second" at
#: batch 1), and prefills ``prefill_tokens_per_s`` prompt tokens a second (compute-bound); a
#: scoring group carries at most ``group_tokens`` padded tokens (STATELAB_HF_BATCH_TOKENS), a
#: generation batch at most ``rows`` sequences (STATELAB_HF_BATCH: 256 by default on a GPU,
#: so 16 points x 12 forks are one batch); merged, ``in_flight_points`` write points are in
#: flight and their batches one
GPU = {
    "passes_per_s": 25.0,
    "prefill_tokens_per_s": 20000.0,
    "group_tokens": 262144,
    "rows": 256,
    "in_flight_points": 16,
}

#: what bounds a tuned server on one H200 (stated: the card's data sheet and the model's shape,
#: not measured): a pass must read the weights (4.02 B parameters, bfloat16) and the KV cache of
#: the rows in flight (192 rows x ~460 tokens x 36 layers x 2 x 8 KV heads x 128 x 2 bytes) at
#: 4.8 TB/s; a prompt token costs 2 FLOPs a parameter at 989 TFLOP/s of dense bfloat16, of
#: which a tuned server reaches ``mfu`` (our assumption, 40%)
H200 = {"bandwidth": 4.8e12, "flops": 989e12, "mfu": 0.40, "parameters": 4_022_468_096,
        "rows": 192, "row_tokens": 460, "kv_bytes_per_token": 36 * 2 * 8 * 128 * 2}  # fmt: skip


def tuned_rates(h: dict[str, float] = H200) -> dict[str, float]:
    """:data:`GPU` with the pass and prefill rates at a tuned server's floors (:data:`H200`):
    a pass in the time its bytes take to read, a prompt token in its FLOPs at ``mfu``."""
    weights = 2 * h["parameters"]
    kv = h["rows"] * h["row_tokens"] * h["kv_bytes_per_token"]
    return {**GPU, "passes_per_s": h["bandwidth"] / (weights + kv),
            "prefill_tokens_per_s": h["mfu"] * h["flops"] / (2 * h["parameters"])}  # fmt: skip


def per_call(n: dict[str, int], toy_budget: int) -> dict[str, float]:
    """Mean tokens of one write and one scoring, the states grown from the toy's B to the
    seed's (the previous state in a write's prompt, the state in a reader's)."""
    grow = SEED["budget"] - toy_budget  # type: ignore[operator]
    return {
        "write_prompt": n["write_in"] / max(1, n["writes"]) + grow,
        "write_reply": SEED["budget"] + 32,  # type: ignore[operator]
        "score_prompt": n["score_prompt"] / max(1, n["scorings"]) + grow,
        "conts": n["score_conts"] / max(1, n["scorings"]),
        "cont_tokens": n["score_cont_tokens"] / max(1, n["scorings"]),
    }


def seed_round(tok: dict[str, float], gpu: dict[str, float] = GPU) -> dict[str, Any]:
    """GPU-hours of one round at :data:`SEED` with every point alike (a Phase-B point with K
    decisions after it: C forks and C x (K - 1) roll-forward writes, C x K x 2 scorings, each
    call of ``tok``'s tokens): :func:`round_cost` of that work."""
    c, k = SEED["candidates"], SEED["k"]
    writes, scorings = c * k, c * k * 2  # type: ignore[operator]
    work = {"writes": writes, "write_steps": k, "fork_prompt": tok["write_prompt"],
            "write_prompt": writes * tok["write_prompt"], "reply": tok["write_reply"],
            "scorings": scorings, "score_prompt": scorings * tok["score_prompt"],
            "option_rows": scorings * tok["conts"], "option_tokens": scorings * tok["cont_tokens"],
            "shared": tok.get("score_shared", 0.0)}  # fmt: skip
    return round_cost(work, SEED["points"], gpu)  # type: ignore[arg-type]


def round_cost(
    work: dict[str, float], points: float, gpu: dict[str, float] = GPU
) -> dict[str, Any]:
    """GPU-hours of ``points`` write points of the mean work ``work`` (a point's C candidates
    together: ``writes`` and their ``write_prompt`` tokens, the fork's own prompt
    ``fork_prompt``, ``write_steps`` writes one after another (the fork and the roll-forward),
    ``reply`` tokens a write; ``scorings`` with their ``score_prompt`` tokens, ``option_rows``
    options of ``option_tokens`` tokens in all, ``shared`` tokens a scoring group's prompts
    share) one call at a time vs batched (the C forks, then each roll-forward step, as one
    batch; all scorings of a point in groups) vs merged (P points in flight, each step of
    theirs one batch; a point's share of its passes is 1/P), with the arithmetic spelled out.
    Prefill is the same work every way, but for what a batch runs once."""
    c = SEED["candidates"]
    prefill = work["write_prompt"] + work["score_prompt"] + work["option_tokens"]
    # batched, the C forks share one prompt, and a prompt asked several times is run once
    prefill_batched = prefill - (c - 1) * work["fork_prompt"]  # type: ignore[operator]
    reply = work["reply"]
    one_passes = work["writes"] * (1 + reply) + work["scorings"] + work["option_rows"]
    rows = work["option_rows"]
    width = work["score_prompt"] / max(1.0, work["scorings"]) + work["option_tokens"] / max(
        1.0, rows
    )  # a row's tokens: a scoring's prompt and one option
    groups = max(1.0, -(-rows * width // gpu["group_tokens"]))
    shared = work["shared"]  # a group's prompts share it: run once, one pass more
    batch_passes = work["write_steps"] * (1 + reply) + (2 + bool(shared)) * groups
    p = gpu["in_flight_points"]
    gen_batches = -(-p * c // gpu["rows"])  # P points' forks in batches of at most `rows`
    merged_groups = max(1.0, -(-p * rows * width // gpu["group_tokens"]))
    merged_passes = (gen_batches * work["write_steps"] * (1 + reply)
                     + (2 + bool(shared)) * merged_groups) / p  # fmt: skip
    prefill_merged = prefill_batched - (work["scorings"] - merged_groups / p) * shared
    prefill_batched -= (work["scorings"] - groups) * shared
    out: dict[str, Any] = {"writes_per_point": round(work["writes"], 1),
                           "scorings_per_point": round(work["scorings"], 1),
                           "prefill_tokens_per_point": round(prefill),
                           "prefill_tokens_per_point_batched": round(prefill_batched),
                           "points": round(points)}  # fmt: skip
    for name, passes, tokens in (("unbatched", one_passes, prefill),
                                 ("batched", batch_passes, prefill_batched),
                                 ("merged", merged_passes, prefill_merged)):  # fmt: skip
        point_s = passes / _rate(gpu, name) + tokens / gpu["prefill_tokens_per_s"]
        out[name] = {
            "passes_per_point": round(passes),
            "gpu_s_per_point": round(point_s, 1),
            "gpu_hours_per_round": round(point_s * points / 3600, 1),
        }
    return out


def _rate(gpu: dict[str, float], mode: str) -> float:
    """Forward passes a second for ``mode`` (a measured rate per mode where there is one)."""
    return gpu.get(f"passes_per_s_{mode}", gpu["passes_per_s"])


#: the seed's audit of the diagnostic grid (Table 5: "200-270 audited decision points per
#: cell"; 16 histories x 4 lags; the read-time oracle for every budgeted history, 15 of 16;
#: the relevance lag on 532 points, Table 7's count) and its episodes' length (50 Phase-B
#: actions at most, F' up to 40 filler steps: a sampled decision sees about 48 chunks)
AUDIT = {"cells": 64, "points_per_cell": 235, "oracle_share": 15 / 16, "relevance_points": 532,
         "samples": 8, "history_chunks": 48}  # fmt: skip


def seed_audit(tok: dict[str, float], gpu: dict[str, float] = GPU) -> dict[str, Any]:
    """GPU-hours of seed 003's audit of the diagnostic grid (:data:`AUDIT`), one call at a
    time vs batched vs merged (P = ``in_flight_points`` episodes at once), from the tokens a
    call takes (``tok``: :func:`per_call`'s, and ``chunk_tokens`` / ``history_overhead``, a
    history chunk's tokens and the reader prompt's tokens around the history, measured on the
    benchmark's episode). Per point: the reader's NLL under the full history (one scoring),
    and, for a budgeted history, the oracle's 8 compressions (one prompt: the full history and
    the instructions, ``write_reply`` tokens each) and their 8 scorings; per relevance point,
    one scoring of the full history without each chunk."""
    n, s = AUDIT["history_chunks"], AUDIT["samples"]
    history = tok["history_overhead"] + n * tok["chunk_tokens"]
    full = history + tok["cont_tokens"]  # the full-history scoring's prompt and options
    scoring = tok["score_prompt"] + tok["cont_tokens"]
    points = AUDIT["cells"] * AUDIT["points_per_cell"]
    oracle = points * AUDIT["oracle_share"]
    relevance = AUDIT["relevance_points"] * n * full  # prefill; 2 passes a point's group
    p = gpu["in_flight_points"]
    out: dict[str, Any] = {"points": round(points), "oracle_points": round(oracle),
                           "full_history_tokens": round(full)}  # fmt: skip
    for mode in ("unbatched", "batched", "merged"):
        if mode == "unbatched":  # each scoring 1 + options passes, each sample 1 + reply
            passes = (1 + tok["conts"]) + (oracle / points) * (
                s * (1 + tok["write_reply"]) + s * (1 + tok["conts"])
            )
            prefill = full + (oracle / points) * s * (history + scoring)
        else:  # two score groups of two passes, one generation batch; the prompt once;
            # the 8 scorings' shared prefix once (a pass more)
            shared = tok.get("score_shared", 0.0)
            passes = 2 + (oracle / points) * (1 + tok["write_reply"] + 2 + bool(shared))
            prefill = full + (oracle / points) * (history + s * scoring - (s - 1) * shared)
            if mode == "merged":
                passes /= p
        rate = _rate(gpu, mode)
        secs = points * (passes / rate + prefill / gpu["prefill_tokens_per_s"])
        secs += relevance / gpu["prefill_tokens_per_s"] + AUDIT["relevance_points"] * 2 / rate
        out[mode] = {"passes_per_point": round(passes, 1),
                     "prefill_tokens_per_point": round(prefill),
                     "gpu_hours": round(secs / 3600, 1)}  # fmt: skip
    return out
