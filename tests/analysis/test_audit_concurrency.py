"""``statelab audit --concurrency N``: episodes audited N at once store the same points as one
after another, and their model calls are in flight together."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

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
    from statelab.analysis.audit import POINTS_TABLE, audit_sufficiency
    from statelab.llm import make_llm

    script = tmp_path / "script.json"  # one model spec: the same runs, two stores
    script.write_text(json.dumps([MOVE]))
    got = {}
    for n in (1, 4):
        exp = _hanoi(tmp_path / f"c{n}", script)
        model = Tracker(make_llm(exp.model))
        out = audit_sufficiency(exp, llm=model, points=2, samples=2, say=lambda s: None,
                               concurrency=n)  # fmt: skip
        assert out["failed"] == [] and out["episodes"] == 6 and out["points"] == 12
        got[n] = (_rows(exp.out_dir / "store.sqlite", POINTS_TABLE, ("at",)), model.most)
    assert got[1][0] == got[4][0] and len(got[1][0]) == 12
    assert got[1][1] == 1 and got[4][1] > 1  # one call at a time, then several in flight
