"""The merged column of ``dssr_throughput.py``: write points (and audit points) in flight
together on ``hf:``, their batches merged into one by the backend (``statelab.llm._coalesce``).

*batched* scores one point after another, each point's work in batches of its own (K forks,
each roll-forward step, its scorings); *merged* runs ``--in-flight-points`` points at once
(``score_write_points(..., concurrency=P)``, as a writer job's ``concurrency`` does), so each
step of theirs is one batch of P x K rows. Audit points likewise: one after another vs all
``--audit-points`` decisions at once. The forward passes are counted by a hook on the model
(every call of its ``forward``), so the counts are exact and do not depend on the machine's
load; the seconds do.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def forward_passes(hf: Any) -> Iterator[list[int]]:
    """A one-item list counting the ``hf:`` backend's forward passes while the block runs."""
    n = [0]

    def count(*_: Any) -> None:
        n[0] += 1

    handle = hf.model.register_forward_pre_hook(count)
    try:
        yield n
    finally:
        handle.remove()


async def merged_points(traj: Any, llm: Any, args: Any, chosen: list[Any]) -> list[Any]:
    """The chosen write points, ``args.in_flight_points`` of them in flight at once."""
    from statelab.state.bounded import BoundedWriter
    from statelab_seed003.train.dssr import score_write_point, score_write_points

    writer = BoundedWriter(traj.render_obs, "summary", args.budget, seed=7)

    def job(at: Any) -> Any:
        return lambda: score_write_point(traj, at.j, writer, llm, llm, candidates=args.candidates,
                                         k=args.k, phase=at.phase, batched=True)  # fmt: skip

    return await score_write_points([job(at) for at in chosen], args.in_flight_points)


async def merged_audit(one: Any, decisions: list[int]) -> list[Any]:
    """``one(k)`` (an audit point's work) for every decision at once."""
    return list(await asyncio.gather(*(one(k) for k in decisions)))
