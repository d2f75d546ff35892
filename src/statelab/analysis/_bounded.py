"""Independent jobs (audited episodes) run with at most ``n`` in flight, in one event loop:
their model calls then reach the backend together (a served reader batches requests in
flight; ``hf:`` merges concurrent batches), where one after another each waits for the last."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence


def run_bounded(jobs: Sequence[Callable[[], Awaitable[None]]], n: int) -> None:
    """Every job, at most ``n`` at once (``n`` 1: one after another, in order). A job
    handles its own failures and saves its own results as it finishes."""

    async def main() -> None:
        gate = asyncio.Semaphore(max(1, n))

        async def one(job: Callable[[], Awaitable[None]]) -> None:
            async with gate:
                await job()

        await asyncio.gather(*(one(job) for job in jobs))

    asyncio.run(main())
