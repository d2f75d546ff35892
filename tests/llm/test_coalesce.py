"""Batches from concurrent callers merged into one (``statelab.llm._coalesce``), and through the
model wrapper a merging backend gets every caller's batch at once although it serves one
request at a time (``max_concurrency = 1``)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from statelab.core import LLM, Completion, GenParams, Message, ModelError, ScoreRequest
from statelab.llm._coalesce import Coalescer
from statelab.llm._model import Model, RetryPolicy


class Doubler:
    """``run`` for a coalescer: doubles each item, records every batch it was given; raises
    on a negative item; runs one batch at a time (asserted)."""

    def __init__(self) -> None:
        self.seen: list[list[int]] = []
        self._busy = threading.Lock()

    def __call__(self, items: list[int]) -> list[int]:
        assert self._busy.acquire(blocking=False), "two batches at once"
        try:
            self.seen.append(list(items))
            if any(x < 0 for x in items):
                raise ValueError(f"negative in {items}")
            return [2 * x for x in items]
        finally:
            self._busy.release()


def test_concurrent_callers_are_one_batch_each_getting_its_own_results() -> None:
    run = Doubler()
    co: Coalescer[int, int] = Coalescer(run)

    async def main() -> list[list[int]]:
        return list(await asyncio.gather(co.submit([1, 2]), co.submit([3]), co.submit([4, 5, 6])))

    assert asyncio.run(main()) == [[2, 4], [6], [8, 10, 12]]
    assert run.seen == [[1, 2, 3, 4, 5, 6]] and co.sizes == [6]


def test_what_arrives_while_a_batch_runs_waits_for_the_next_and_is_merged_there() -> None:
    run = Doubler()
    co: Coalescer[int, int] = Coalescer(run)

    async def caller(first: int) -> list[int]:  # two steps, like a write point's fork + roll
        a = await co.submit([first])
        b = await co.submit([a[0] + 1])
        return [*a, *b]

    async def main() -> list[list[int]]:
        return list(await asyncio.gather(*(caller(x) for x in (1, 10, 100))))

    assert asyncio.run(main()) == [[2, 6], [20, 42], [200, 402]]
    # each step of the three callers is one batch (not six batches of one)
    assert run.seen == [[1, 10, 100], [3, 21, 201]]


def test_a_failing_batch_fails_only_the_callers_whose_items_fail() -> None:
    run = Doubler()
    co: Coalescer[int, int] = Coalescer(run)

    async def main() -> list[object]:
        return list(await asyncio.gather(co.submit([1]), co.submit([-1]), co.submit([2]),
                                         return_exceptions=True))  # fmt: skip

    got = asyncio.run(main())
    assert got[0] == [2] and got[2] == [4]
    assert isinstance(got[1], ValueError) and "-1" in str(got[1])
    # the merged batch, then each caller alone
    assert run.seen == [[1, -1, 2], [1], [-1], [2]]


def test_a_cancelled_caller_is_left_out_and_a_new_event_loop_starts_clean() -> None:
    run = Doubler()
    co: Coalescer[int, int] = Coalescer(run)

    async def main() -> list[int]:
        gone = asyncio.ensure_future(co.submit([7]))
        kept = asyncio.ensure_future(co.submit([8]))
        await asyncio.sleep(0)
        gone.cancel()
        return await kept

    assert asyncio.run(main()) == [16]
    assert run.seen == [[8]]
    assert asyncio.run(co.submit([3])) == [6]  # another loop: no stale state
    assert asyncio.run(co.submit([])) == []


class Merging(LLM):
    """A backend that serves one request at a time but merges batches (as ``hf:``): every
    batch it receives goes through one coalescer; a reply is the prompt's length."""

    model_id = "fake:merging"
    max_concurrency = 1

    def __init__(self, merges: bool) -> None:
        self.merges_batches = merges
        self.batches: list[int] = []
        self.co: Coalescer[ScoreRequest, list[float]] = Coalescer(self._run)

    def _run(self, reqs: list[ScoreRequest]) -> list[list[float]]:
        self.batches.append(len(reqs))
        return [[float(len(m[0]["content"]) + len(c)) for c in cs] for m, cs in reqs]

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        raise AssertionError("not used")

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        if self.merges_batches:
            return await self.co.submit(list(requests))
        return await asyncio.to_thread(self._run, list(requests))


def _req(text: str) -> ScoreRequest:
    return ScoreRequest([{"role": "user", "content": text}], ["a", "bb"])


@pytest.mark.parametrize("merges", [True, False])
def test_the_wrapper_lets_a_merging_backends_batches_through_together(merges: bool) -> None:
    inner = Merging(merges)
    model = Model(inner, RetryPolicy(retries=0))

    async def main() -> list[list[list[float]]]:
        return list(await asyncio.gather(*(model.score_many([_req("x" * n), _req("y")])
                                           for n in (1, 2, 3))))  # fmt: skip

    got = asyncio.run(main())
    assert got == [[[n + 1.0, n + 2.0], [2.0, 3.0]] for n in (1, 2, 3)]
    # merging: three callers' 2 requests as one batch of 6; otherwise one slot, three batches
    assert inner.batches == ([6] if merges else [2, 2, 2])


def test_a_merged_batch_that_fails_with_a_model_error_reaches_only_its_caller() -> None:
    class Picky(Merging):
        def _run(self, reqs: list[ScoreRequest]) -> list[list[float]]:
            if any(m[0]["content"] == "bad" for m, _ in reqs):
                raise ModelError("an empty continuation cannot be scored")
            return super()._run(reqs)

    inner = Picky(True)
    model = Model(inner, RetryPolicy(retries=0))

    async def main() -> list[object]:
        return list(await asyncio.gather(model.score_many([_req("ok")]),
                                         model.score_many([_req("bad")]),
                                         return_exceptions=True))  # fmt: skip

    ok, bad = asyncio.run(main())
    assert ok == [[3.0, 4.0]]
    assert isinstance(bad, ModelError) and "empty continuation" in str(bad)
