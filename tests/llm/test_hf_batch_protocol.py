"""The batch methods of the model contract: ``complete_many`` / ``score_many`` loop by
default, the model wrapper passes a backend's own batch through (guarded like single
replies), and the response cache answers each item it holds, sending only the misses."""

from __future__ import annotations

import asyncio
from pathlib import Path

from statelab.core import LLM, CompleteRequest, Completion, GenParams, Message, ScoreRequest
from statelab.llm import CachedLLM, ResponseCache
from statelab.llm._model import Model, Provider, TimedLLM


def _msgs(text: str) -> list[Message]:
    return [{"role": "user", "content": text}]


class Looping(LLM):
    """No batch methods of its own: the contract's defaults apply."""

    model_id = "looping"

    def __init__(self) -> None:
        self.order: list[str] = []

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        text = str(messages[-1]["content"])
        self.order.append(text)
        return Completion(f"{text}/{params.seed}")

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        return [float(len(c)) for c in continuations]


class Batching(Provider):
    """Answers batches itself and records each batch it was handed."""

    model_id = "batching"
    scores = True

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.score_batches: list[int] = []

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        return (await self.complete_many([CompleteRequest(messages, params)]))[0]

    async def complete_many(self, requests: list[CompleteRequest]) -> list[Completion]:
        self.batches.append([str(m[-1]["content"]) for m, _ in requests])
        return [Completion(f"{m[-1]['content']}/{p.seed}") for m, p in requests]

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        self.score_batches.append(len(requests))
        return [[float(len(c)) + len(m) for c in cs] for m, cs in requests]


def test_the_default_batch_is_one_call_after_another_in_order() -> None:
    llm = Looping()
    reqs = [CompleteRequest(_msgs(t), GenParams(seed=i)) for i, t in enumerate("abc")]
    got = asyncio.run(llm.complete_many(reqs))
    assert [c.text for c in got] == ["a/0", "b/1", "c/2"] and llm.order == ["a", "b", "c"]
    scored = asyncio.run(llm.score_many([ScoreRequest(_msgs("x"), ["ab", "c"])]))
    assert scored == [[2.0, 1.0]]
    # through the wrapper and the timer, a backend without batches is looped the same way
    timed = TimedLLM(Model(Looping()))
    assert [c.text for c in asyncio.run(timed.complete_many(reqs))] == ["a/0", "b/1", "c/2"]


def test_the_wrapper_hands_a_batching_backend_the_whole_batch_and_guards_each_reply() -> None:
    inner = Batching()
    model = Model(inner, max_reply=3)
    reqs = [CompleteRequest(_msgs(t), GenParams(seed=7)) for t in ("a", "bb")]
    got = asyncio.run(model.complete_many(reqs))
    assert inner.batches == [["a", "bb"]]
    assert [c.text for c in got] == ["a/7", "bb/"] and got[1].flags == ("reply-cut",)
    assert asyncio.run(model.complete_many([])) == [] and inner.batches == [["a", "bb"]]


def test_the_cache_sends_only_the_misses_each_distinct_one_once(tmp_path: Path) -> None:
    inner = Batching()
    llm = CachedLLM(Model(inner), ResponseCache(tmp_path / "c.sqlite"))
    p = GenParams(seed=1)
    first = asyncio.run(llm.complete_many([CompleteRequest(_msgs("a"), p)]))
    assert [c.text for c in first] == ["a/1"] and not first[0].cached
    reqs = [CompleteRequest(_msgs(t), p) for t in ("b", "a", "c", "b")]
    got = asyncio.run(llm.complete_many(reqs))
    assert inner.batches == [["a"], ["b", "c"]]  # "a" from the cache, "b" computed once
    assert [c.text for c in got] == ["b/1", "a/1", "c/1", "b/1"]
    assert [c.cached for c in got] == [False, True, False, True]
    assert (llm.hits, llm.misses) == (2, 3)
    # scoring: the same per item
    s1 = asyncio.run(llm.score_many([ScoreRequest(_msgs("q"), ["x", "yy"])]))
    s2 = asyncio.run(
        llm.score_many([ScoreRequest(_msgs("q"), ["x", "yy"]), ScoreRequest(_msgs("r"), ["z"])])
    )
    assert s1 == [[2.0, 3.0]] and s2 == [[2.0, 3.0], [2.0]]
    assert inner.score_batches == [1, 1]
    # a single call afterwards finds what a batch cached
    again = asyncio.run(llm.complete(_msgs("c"), p))
    assert again.cached and again.text == "c/1" and inner.batches == [["a"], ["b", "c"]]
