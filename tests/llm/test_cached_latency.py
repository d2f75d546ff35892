"""A reply from the response cache records its own latency (none: no model time was spent)
and keeps the first call's apart (issue 32 item 10b): a run replayed from the cache reports
~0 model time, and ``calls.original_latency`` holds what the model took the first time."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from tests.llm._standins import StandIn

from statelab.core import LLM, CompleteRequest, Completion, GenParams, Message
from statelab.llm import CachedLLM, ResponseCache
from statelab.llm import _constrain as constrain
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store


@pytest.fixture(autouse=True)
def _fresh():
    constrain.forget()
    yield
    constrain.forget()


class Slow(LLM):
    model_id = "slow"

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        return Completion(text="ok", latency=1.5)


def test_a_cache_hit_takes_no_model_time_and_keeps_the_first_calls(tmp_path: Path) -> None:
    llm = CachedLLM(Slow(), ResponseCache(tmp_path / "c.sqlite"))
    msgs: list[Message] = [{"role": "user", "content": "hi"}]
    other: list[Message] = [{"role": "user", "content": "ho"}]

    async def go() -> tuple[Completion, Completion, list[Completion]]:
        first = await llm.complete(msgs, GenParams())
        again = await llm.complete(msgs, GenParams())
        batch = await llm.complete_many(
            [CompleteRequest(msgs, GenParams()), CompleteRequest(other, GenParams()),
             CompleteRequest(other, GenParams())]
        )  # fmt: skip
        return first, again, batch

    first, again, batch = asyncio.run(go())
    assert (first.latency, first.original_latency) == (1.5, None)
    assert (again.cached, again.latency, again.original_latency) == (True, 0.0, 1.5)
    got = [(c.cached, c.latency, c.original_latency) for c in batch]
    # a hit, a miss (the model's time), a repeat of the miss in the same batch (a hit)
    assert got == [(True, 0.0, 1.5), (False, 1.5, None), (True, 0.0, 1.5)]
    assert again.to_dict()["latency"] == 1.5  # a row written again keeps the model's time


def test_a_run_replayed_from_the_cache_reports_no_model_time(tmp_path: Path) -> None:
    server = StandIn("grammar", delay=0.2)
    cache = str(tmp_path / "cache.sqlite")

    def run(out: str) -> Path:
        exp = parse_experiment({
            "name": "lat", "seeds": [0], "max_steps": 3, "out": str(tmp_path / out),
            "grid": {"env": ["hanoi"], "history": ["full"],
                     "model": [f"openai-compat:{server.url}#m"]},
            "cache": cache, "expert": False, "random": False, "concurrency": 1,
        })  # fmt: skip
        res = run_sync(exp, progress=None)
        assert res.done == 1 and res.failed == 0
        return exp.out_dir / "store.sqlite"

    try:
        first, replayed = run("a"), run("b")
    finally:
        server.close()
    calls_a, calls_b = Store(first).table("calls"), Store(replayed).table("calls")
    assert len(calls_a) == len(calls_b) == 3
    assert not calls_a["cached"].any() and (calls_a["latency"] >= 0.2).all()
    assert calls_a["original_latency"].isna().all()
    assert calls_b["cached"].all() and (calls_b["latency"] == 0.0).all()
    # the model's time the first run spent, kept apart (before: it was the stored latency)
    assert list(calls_b["original_latency"]) == list(calls_a["latency"])
    assert (Store(replayed).table("steps")["latency"] == 0.0).all()


def test_an_old_store_takes_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE calls (run TEXT NOT NULL, seed INTEGER NOT NULL, rollout INTEGER NOT NULL"
        " DEFAULT 0, t INTEGER NOT NULL, i INTEGER NOT NULL, kind TEXT, messages_ref TEXT,"
        " text TEXT, input_tokens INTEGER, output_tokens INTEGER, latency REAL, cached INTEGER,"
        " PRIMARY KEY (run, seed, rollout, t, i));"
    )
    db.execute("INSERT INTO calls VALUES ('r',0,0,0,0,'act','','x',1,1,0.1,1)")
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()
    store = Store(path)
    store.save_experiment("old", {})
    calls = store.table("calls")
    assert "original_latency" in calls.columns and calls["original_latency"].isna().all()
