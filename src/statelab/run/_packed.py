"""A recorded step's largest texts, compressed while its episode plays.

With a long history each step's view, memory and call messages repeat the steps before it:
a 120-step Hanoi episode with the ``full`` history holds about 2.9 MB of them. An episode in
flight keeps them as one zlib-compressed pickle a step (:func:`pack`), and puts them back
into its record when it ends (:func:`unpack`), so what a run holds grows with the episodes
in flight, not with the texts of each of their steps.
"""

from __future__ import annotations

import pickle
import zlib
from typing import Any

from statelab.run.records import StepRecord

__all__ = ["pack", "unpack"]


def pack(view: str, memory: str, rows: list[dict[str, Any]]) -> bytes:
    """A step's largest texts (its view, memory and each call's messages: with a long
    history each repeats the steps before it) compressed while the episode plays, so an
    episode in flight holds about a tenth of them; the rows' messages are emptied."""
    messages = [row["messages"] for row in rows]
    for row in rows:
        row["messages"] = []
    return zlib.compress(pickle.dumps((view, memory, messages), pickle.HIGHEST_PROTOCOL), 1)


def unpack(trajectory: list[StepRecord], packed: list[bytes]) -> None:
    """Put each step's packed texts back (calls a stopped step added later kept theirs)."""
    for rec, blob in zip(trajectory, packed, strict=True):
        rec.view, rec.memory, messages = pickle.loads(zlib.decompress(blob))
        for row, m in zip(rec.calls, messages, strict=False):
            row["messages"] = m
