"""The read-time oracle hands its eight compressions to the compressor as one batch and their
eight scorings to the reader as another; what it picks is what one call after another
picks (a backend without batch methods)."""

from __future__ import annotations

import asyncio
import math

import pytest

from statelab.core import (
    LLM,
    CompleteRequest,
    Completion,
    GenParams,
    Message,
    Observation,
    ScoreRequest,
)
from statelab.state.readtime import SAMPLES, ReadTimeOracle

ACTIONS = ("go east", "look", "take carrot")
A_STAR = "take carrot"
KEY = "slice the carrot"


class OneByOne(LLM):
    """The seed decides the reply (every third holds KEY); the reader favours a* by 2 nats
    where its prompt holds KEY."""

    model_id = "fake"

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        seed = params.seed or 0
        return Completion(f"Recipe: {KEY}." if seed % 3 == 0 else f"nothing {seed % 7}")

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        s = 2.0 if KEY in messages[-1]["content"] else 0.0
        return [s if c.endswith(A_STAR) else 0.0 for c in continuations]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class Batched(OneByOne):
    def __init__(self) -> None:
        self.batches: list[tuple[str, int]] = []

    async def complete_many(self, requests: list[CompleteRequest]) -> list[Completion]:
        self.batches.append(("complete", len(requests)))
        return [await self.complete(m, p) for m, p in requests]

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        self.batches.append(("score", len(requests)))
        return [await self.score(m, c) for m, c in requests]


def _best(llm: LLM, a_star: str | None = A_STAR):  # type: ignore[no-untyped-def]
    m = ReadTimeOracle(lambda o: o.text, 16, manual="Play.", seed=3)
    o = Observation("Hall.", None, ACTIONS, "cook")
    steps = ("1. > look\nThe cookbook says: slice the carrot.", "2. > go east\nHall.")
    return asyncio.run(m.best("cook", steps, o, a_star, llm, 4))


def test_the_samples_and_their_scorings_go_as_two_batches_with_the_same_pick() -> None:
    one, many = OneByOne(), Batched()
    text_1, nll_1, nlls_1, calls_1 = _best(one)
    text_n, nll_n, nlls_n, calls_n = _best(many)
    assert many.batches == [("complete", SAMPLES), ("score", SAMPLES)]
    assert (text_1, nll_1, nlls_1) == (text_n, nll_n, nlls_n)
    assert [c.completion.text for c in calls_1] == [c.completion.text for c in calls_n]
    # a real choice among different samples: KEY wins where it was sampled
    assert len({c.completion.text for c in calls_n}) > 1 and text_n == f"Recipe: {KEY}."
    assert nll_n == pytest.approx(math.log(1 + 2 * math.exp(-2.0)))
    # a* unknown: no scorings are asked, the first sample is kept
    unknown = Batched()
    text, nll, nlls, calls = _best(unknown, a_star=None)
    assert text == calls[0].completion.text
    assert unknown.batches == [("complete", SAMPLES)] and nll is None and nlls == (None,) * SAMPLES
