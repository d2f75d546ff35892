"""benchmarks/gpu_rates.py: the seed-size model shape it builds, its measured rates as the
round's arithmetic takes them, and a random model of the tiny shape answering through hf:."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="needs the train extra")

ROOT = Path(__file__).parents[4] / "benchmarks"


def _load(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, ROOT / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_preset_is_qwen3_4b_by_its_parameter_count() -> None:
    g = _load("gpu_rates")
    # per layer: q 2560x4096, k and v 2560x1024, o 4096x2560, q/k norms 128 each, MLP
    # 3 x 2560 x 9728, two norms of 2560; 36 layers, a final norm, tied 151,936 x 2560
    layer = 2560 * 4096 * 2 + 2560 * 1024 * 2 + 256 + 3 * 2560 * 9728 + 2 * 2560
    assert g.parameters("qwen3-4b") == 36 * layer + 2560 + 151936 * 2560 == 4_022_468_096


def test_measured_rates_replace_the_stated_ones_per_mode() -> None:
    g, b = _load("gpu_rates"), _load("dssr_throughput")
    gen = [{"rows": 1, "passes_per_s": 30.0}, {"rows": 12, "passes_per_s": 28.0},
           {"rows": 192, "passes_per_s": 20.0}, {"rows": 64, "passes_per_s": 1.0}]  # fmt: skip
    rates = g.rates_for_round(gen, {"prefill_tokens_per_s": 40000.0})
    assert rates == {"prefill_tokens_per_s": 40000.0, "passes_per_s_unbatched": 30.0,
                     "passes_per_s_batched": 28.0, "passes_per_s_merged": 20.0}  # fmt: skip
    tok = {"write_prompt": 299.0, "write_reply": 160, "score_prompt": 423.0, "conts": 4.0,
           "cont_tokens": 14.0}  # fmt: skip
    got = b.seed_round(tok, {**b.GPU, **rates})
    one_s, batched_s = 168912 / 40000, 165623 / 40000  # batched: the forks' prompt once
    assert got["unbatched"]["gpu_s_per_point"] == pytest.approx(24624 / 30 + one_s, abs=0.05)
    assert got["batched"]["gpu_s_per_point"] == pytest.approx(1936 / 28 + batched_s, abs=0.05)
    assert got["merged"]["gpu_s_per_point"] == pytest.approx(1992 / 16 / 20 + batched_s,
                                                             abs=0.05)  # fmt: skip


@pytest.mark.model
def test_a_random_tiny_model_generates_and_scores_through_hf(tmp_path: Path) -> None:
    from statelab.llm import make_llm

    g = _load("gpu_rates")
    llm = make_llm(g.random_model("tiny", tmp_path / "tiny"))
    while hasattr(llm, "inner"):
        llm = llm.inner
    assert sum(p.numel() for p in llm.model.parameters()) == g.parameters("tiny")
    prompt = g._prompt(llm, 120)
    assert 100 <= llm.count_tokens(prompt) <= 120
    got = g.generation(llm, 3, prompt, 5)
    assert got["rows"] == 3 and got["passes"] <= 6 and got["passes_per_s"] > 0
    s = g.scoring(llm, 2, prompt)
    assert s["tokens"] > 2 * 100 and s["prefill_tokens_per_s"] > 0
