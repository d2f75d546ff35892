"""Issue 23, growth: the scripted backend plays episodes concurrently and keeps no more
prompts as a run grows; a cache that cannot be written never fails an episode."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from statelab.core import GenParams
from statelab.llm import ScriptedLLM, make_llm
from statelab.llm.scripted import SEEN_KEPT
from statelab.run.config import parse_experiment
from statelab.run.runner import gate_size, run_sync
from statelab.run.store import Store

MOVES = [
    "Action: Move the top disk of rod A to the top of rod C",
    "Action: Move the top disk of rod A to the top of rod B",
]


def _exp(tmp: Path, **over: Any):
    script = tmp / "replies.json"
    script.write_text(json.dumps(MOVES))
    data: dict[str, Any] = {
        "name": "s", "model": f"scripted:{script}", "seeds": list(range(12)),
        "grid": {"env": ["hanoi"]}, "out": str(tmp / "out"), "cache": None, "max_steps": 3,
        "expert": False, "random": False, "concurrency": 4,
    }  # fmt: skip
    data.update(over)
    return parse_experiment(data)


def test_the_scripted_backend_plays_as_many_episodes_at_once_as_configured(
    tmp_path: Path, monkeypatch
) -> None:
    exp = _exp(tmp_path)
    llm = make_llm(exp.model)
    assert gate_size(exp, exp.model, llm) == 4
    live, most = set(), [0]
    start, commit = ScriptedLLM.for_episode, Store.commit_episode

    def begin(self: ScriptedLLM, key: str) -> ScriptedLLM:
        live.add(key)
        most[0] = max(most[0], len(live))
        return start(self, key)

    def end(self: Store, ep: Any) -> None:
        commit(self, ep)
        live.discard(f"{ep.run}/{ep.seed}/{ep.rollout}")

    monkeypatch.setattr(ScriptedLLM, "for_episode", begin)
    monkeypatch.setattr(Store, "commit_episode", end)
    res = run_sync(exp, progress=None)
    assert res.done == 12
    assert most[0] > 1  # episodes overlapped (one at a time before)


def test_the_scripted_backend_keeps_the_last_prompts_only() -> None:
    llm = ScriptedLLM(MOVES)

    async def play() -> None:
        for k in range(3 * SEEN_KEPT):
            view = llm.for_episode(str(k))
            await view.complete([{"role": "user", "content": f"prompt {k}"}], GenParams())

    asyncio.run(play())
    assert llm.calls == 3 * SEEN_KEPT and len(llm.seen) == SEEN_KEPT
    assert llm.seen[-1][0]["content"] == f"prompt {3 * SEEN_KEPT - 1}"


class _FullDisk:
    """A connection of the cache whose disk is full: every batch write fails."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def executemany(self, *a: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def test_a_full_cache_disk_turns_the_cache_off_and_fails_no_episode(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    import statelab.llm.cache as cache

    real = cache._connect
    monkeypatch.setattr(cache, "_connect", lambda path: _FullDisk(real(path)))
    exp = _exp(tmp_path, cache=str(tmp_path / "cache.sqlite"))
    res = run_sync(exp, progress=None)
    assert (res.done, res.failed) == (12, 0), res.failures
    warned = [line for line in capsys.readouterr().err.splitlines() if "cache" in line]
    assert len(warned) == 1 and "database or disk is full" in warned[0]
    st = Store(exp.out_dir / "store.sqlite")
    try:
        assert set(st.table("episodes").status) == {"done"}
    finally:
        st.close()
