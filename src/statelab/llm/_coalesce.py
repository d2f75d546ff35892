"""Batches from concurrent callers run as one: how the ``hf:`` backend merges the batches of
write points (or audit points) that are in flight at the same time.

A caller hands :meth:`Coalescer.submit` its items (one write point's K forks, one roll-forward
step, one point's scorings) and awaits their results. The first submission starts a drain
task; it lets the event loop run every caller that is ready (each submits before it next
waits), then hands *everything* submitted so far to ``run`` in one worker thread. Whatever is
submitted while that batch runs waits for the next one. So with P points in flight, each
step of theirs becomes one batch of P × K rows instead of P batches of K, one after another:
the forward passes a round needs fall by up to P (docs/seed003.md, "Cost of a round").

The results are each caller's own: ``run`` must answer item by item (the ``hf:`` backend's
batched generation seeds each row by its request and masks padding, so a row's reply does
not depend on the rows beside it; its scores depend on them only through the float rounding
of padded sums, about 1e-5 nats). A batch that fails is retried caller by caller, so one
caller's bad request fails only that caller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: event-loop turns the drain waits before it takes the submissions: a caller resumed by the
#: last batch's results runs up to its next submission within one turn (the model wrapper,
#: the cache and DSSR's bookkeeping do not wait in between), a few turns cover chains of them
SETTLE_TURNS = 4


class Coalescer(Generic[T, R]):
    """Submissions from concurrent callers, run together by ``run`` (see the module).

    ``run`` takes a list of items and returns one result per item, in order; it runs in a
    worker thread (``asyncio.to_thread``), one call at a time. ``sizes`` holds the number of
    items of every call it made (tests and the benchmark read it)."""

    def __init__(self, run: Callable[[list[T]], list[R]]) -> None:
        self.run = run
        self.sizes: list[int] = []
        self._pending: list[tuple[list[T], asyncio.Future[list[R]]]] = []
        self._drain: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def submit(self, items: list[T]) -> list[R]:
        """``run``'s results for ``items``, computed in one batch with every other caller's
        items submitted meanwhile."""
        if not items:
            return []
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a backend outlives an event loop (asyncio.run per call)
            self._loop, self._pending, self._drain = loop, [], None
        fut: asyncio.Future[list[R]] = loop.create_future()
        self._pending.append((list(items), fut))
        if self._drain is None or self._drain.done():
            self._drain = loop.create_task(self._run_pending())
        return await fut

    async def _run_pending(self) -> None:
        while self._pending:
            for _ in range(SETTLE_TURNS):
                await asyncio.sleep(0)
            batch, self._pending = self._pending, []
            batch = [(items, fut) for items, fut in batch if not fut.done()]  # cancelled
            if not batch:
                continue
            flat = [x for items, _ in batch for x in items]
            try:
                out = await self._call(flat)
            except Exception as e:  # attributed to the callers below
                await self._one_by_one(batch, e)
                continue
            at = 0
            for items, fut in batch:
                if not fut.done():
                    fut.set_result(out[at : at + len(items)])
                at += len(items)

    async def _call(self, flat: list[T]) -> list[R]:
        self.sizes.append(len(flat))
        out = await asyncio.to_thread(self.run, flat)
        if len(out) != len(flat):
            raise RuntimeError(f"a batch of {len(flat)} items gave {len(out)} results")
        return out

    async def _one_by_one(
        self, batch: list[tuple[list[T], asyncio.Future[list[R]]]], error: Exception
    ) -> None:
        """A merged batch failed: each caller's items on their own, so the error reaches only
        the callers whose items raise it (a lone caller gets it at once)."""
        if len(batch) == 1:
            if not batch[0][1].done():
                batch[0][1].set_exception(error)
            return
        for items, fut in batch:
            try:
                got = await self._call(items)
            except Exception as e:  # this caller's own failure
                if not fut.done():
                    fut.set_exception(e)
            else:
                if not fut.done():
                    fut.set_result(got)
