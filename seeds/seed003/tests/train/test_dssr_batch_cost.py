"""The GPU-hours of a DSSR round at the seed's scale (benchmarks/dssr_throughput.py and
docs/seed003.md, "Cost of a round"), recomputed by hand from its per-call token counts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[4] / "benchmarks" / "dssr_throughput.py"


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("dssr_throughput", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_round_arithmetic_matches_the_hand_computation() -> None:
    b = _bench()
    tok = {"write_prompt": 299.0, "write_reply": 160, "score_prompt": 423.0, "conts": 4.0,
           "cont_tokens": 14.0}  # fmt: skip
    got = b.seed_round(tok)
    # 12 candidates x (1 fork + 11 roll-forward writes); 12 x 12 decisions x 2 forms
    assert (got["writes_per_point"], got["scorings_per_point"]) == (144, 288)
    assert got["prefill_tokens_per_point"] == 144 * 299 + 288 * (423 + 14) == 168912
    # one at a time: a prompt pass and 160 reply passes per write, 1 + 4 passes per scoring
    assert got["unbatched"]["passes_per_point"] == 144 * 161 + 288 * 5
    assert got["unbatched"]["gpu_s_per_point"] == pytest.approx(
        24624 / 25 + 168912 / 20000, abs=0.05
    )
    assert got["unbatched"]["gpu_hours_per_round"] == pytest.approx(993.4 * 2529 / 3600, abs=0.1)
    # batched: 12 write batches of 161 passes; 1152 rows x 426.5 tokens in 2 groups of 262144;
    # the 12 forks' one prompt is run once: 11 write prompts fewer
    assert got["batched"]["passes_per_point"] == 12 * 161 + 2 * 2
    assert got["prefill_tokens_per_point_batched"] == 168912 - 11 * 299 == 165623
    assert got["batched"]["gpu_hours_per_round"] == pytest.approx(
        (1936 / 25 + 165623 / 20000) * 2529 / 3600, abs=0.1
    )


def test_per_call_tokens_grow_the_states_to_the_seeds_budget() -> None:
    b = _bench()
    n = {"writes": 4, "write_in": 1000, "write_out": 90, "scorings": 10, "score_prompt": 4000,
         "score_conts": 40, "score_cont_tokens": 150, "passes": 0}  # fmt: skip
    per = b.per_call(n, toy_budget=32)
    assert per == {"write_prompt": 250 + 96, "write_reply": 160, "score_prompt": 400 + 96,
                   "conts": 4.0, "cont_tokens": 15.0}  # fmt: skip


def test_merged_points_share_their_passes() -> None:
    b = _bench()
    tok = {"write_prompt": 299.0, "write_reply": 160, "score_prompt": 423.0, "conts": 4.0,
           "cont_tokens": 14.0}  # fmt: skip
    got = b.seed_round(tok)
    # 16 points x 12 forks = 192 rows: one generation batch a step (12 steps of 161 passes);
    # scorings: 16 x 1152 rows x 426.5 tokens = 7,861,248 tokens in groups of 262,144: 30
    # groups, 2 passes each; shared by 16 points
    assert got["merged"]["passes_per_point"] == round((12 * 161 + 2 * 30) / 16) == 124  # 124.5
    assert got["merged"]["gpu_hours_per_round"] == pytest.approx(
        ((12 * 161 + 60) / 16 / 25 + 165623 / 20000) * 2529 / 3600, abs=0.1
    )
    # more points than a batch holds: 32 x 12 = 384 rows are two generation batches a step
    wide = b.seed_round(tok, {**b.GPU, "in_flight_points": 32})
    assert wide["merged"]["passes_per_point"] == round((2 * 12 * 161 + 2 * 60) / 32)


def test_the_audit_arithmetic_matches_the_hand_computation() -> None:
    b = _bench()
    tok = {"write_reply": 160, "score_prompt": 423.0, "conts": 4.0, "cont_tokens": 14.0,
           "chunk_tokens": 50.0, "history_overhead": 300.0}  # fmt: skip
    got = b.seed_audit(tok)
    # 64 cells x 235 points; the oracle on 15 of 16 histories; 48 chunks of 50 tokens
    assert (got["points"], got["oracle_points"], got["full_history_tokens"]) == (
        15040, 14100, 300 + 48 * 50 + 14)
    share = 15 / 16
    one = got["unbatched"]  # a scoring 1 + 4 passes; 8 samples of 161 passes, 8 scorings of 5
    assert one["passes_per_point"] == pytest.approx(5 + share * (8 * 161 + 8 * 5), abs=0.05)
    assert one["prefill_tokens_per_point"] == round(2714 + share * 8 * (2700 + 437))
    many = got["batched"]  # two score groups; one generation batch; the samples' prompt once
    assert many["passes_per_point"] == pytest.approx(2 + share * 163, abs=0.05)
    assert many["prefill_tokens_per_point"] == round(2714 + share * (2700 + 8 * 437))
    assert got["merged"]["passes_per_point"] == pytest.approx((2 + share * 163) / 16, abs=0.05)
    relevance_s = 532 * 48 * 2714 / 20000 + 532 * 2 / 25
    merged_s = 15040 * ((2 + share * 163) / 16 / 25 + (2714 + share * 6196) / 20000)
    assert got["merged"]["gpu_hours"] == pytest.approx((merged_s + relevance_s) / 3600, abs=0.05)


def test_a_shared_reader_prefix_is_prefilled_once_a_group() -> None:
    b = _bench()
    tok = {"write_prompt": 299.0, "write_reply": 160, "score_prompt": 423.0, "conts": 4.0,
           "cont_tokens": 14.0}  # fmt: skip
    plain, shared = b.seed_round(tok), b.seed_round({**tok, "score_shared": 192.0})
    # batched: 2 groups a point, each runs the 192 tokens once (288 - 2 times fewer), a pass
    # more each; merged: 30 groups for 16 points
    assert shared["batched"]["passes_per_point"] == plain["batched"]["passes_per_point"] + 2
    want = (1938 / 25 + (165623 - 286 * 192) / 20000) * 2529 / 3600
    assert shared["batched"]["gpu_hours_per_round"] == pytest.approx(want, abs=0.1)
    merged = ((12 * 161 + 3 * 30) / 16 / 25 + (165623 - (288 - 30 / 16) * 192) / 20000)
    assert shared["merged"]["gpu_hours_per_round"] == pytest.approx(merged * 2529 / 3600, abs=0.1)
    audit = b.seed_audit({**tok, "chunk_tokens": 50.0, "history_overhead": 300.0,
                          "score_shared": 192.0})  # fmt: skip
    share = 15 / 16  # the oracle's 8 scorings: 7 prefixes fewer, a pass more
    assert audit["batched"]["prefill_tokens_per_point"] == round(
        2714 + share * (2700 + 8 * 437 - 7 * 192))
    assert audit["batched"]["passes_per_point"] == pytest.approx(2 + share * 164, abs=0.06)
