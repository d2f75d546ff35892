"""Writes off the event loop: the response cache's writer thread, the store's commits on a
worker thread, the per-model concurrency gate, and honest overhead (cache time is statelab's).

The SIGKILL test kills a run while episodes are being committed and cache batches written,
resumes it, and compares every stored episode with an uninterrupted run of the same config.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from statelab.core import LLM, Completion, GenParams, Message, Usage
from statelab.llm import CachedLLM, ResponseCache, TimedLLM, make_llm, spec_concurrency
from statelab.llm.openai_compat import OpenAICompatLLM
from statelab.run.config import parse_experiment
from statelab.run.runner import gate_size, run_sync
from statelab.run.store import Store

ACTION = "Action: Move the top disk of rod A to the top of rod C"


# -- the response cache's writer --------------------------------------------------------------


def test_a_put_is_read_back_at_once_and_committed_by_flush(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    for i in range(200):
        cache.put(f"k{i}", "m", "complete", "{}", {"text": str(i)})
    assert cache.get("k199") == {"text": "199"}  # visible before (or after) its commit
    cache.flush()
    other = ResponseCache(tmp_path / "c.sqlite")  # another reader sees every row committed
    assert [other.get(f"k{i}") for i in (0, 99, 199)] == [
        {"text": "0"},
        {"text": "99"},
        {"text": "199"},
    ]
    db = sqlite3.connect(tmp_path / "c.sqlite")
    assert db.execute("SELECT count(*) FROM completions").fetchone() == (200,)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    db.close()
    cache.close()
    other.close()


def test_close_commits_what_is_queued_and_a_later_put_is_refused(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", "m", "complete", "{}", {"text": "x"})
    cache.close()
    assert ResponseCache(tmp_path / "c.sqlite").get("k") == {"text": "x"}
    with pytest.raises(RuntimeError, match="closed"):
        cache.put("k2", "m", "complete", "{}", {"text": "y"})


def test_a_failed_write_turns_the_cache_off_with_one_warning(tmp_path: Path, capsys) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k0", "m", "complete", "{}", {"text": "x"})
    cache.flush()
    db = sqlite3.connect(tmp_path / "c.sqlite")
    db.execute("DROP TABLE completions")  # every later batch fails
    db.commit()
    db.close()
    cache.put("k1", "m", "complete", "{}", {"text": "y"})
    cache.flush()  # the failure is not raised: the cache is off
    cache.put("k2", "m", "complete", "{}", {"text": "z"})
    cache.flush()
    cache.close()
    assert cache.off and cache.get("k0") is None
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "cannot write (no such table: completions)" in lines[0]


# -- overhead: cache time is statelab's, not the model's ---------------------------------------


class Instant(LLM):
    model_id = "instant"

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        return Completion(ACTION, Usage(1, 1))


class SlowLookups(ResponseCache):
    def get(self, key: str) -> dict | None:
        time.sleep(0.05)  # a cache on a slow disk
        return super().get(key)


def test_time_in_the_cache_is_not_counted_as_model_time(tmp_path: Path) -> None:
    timed = TimedLLM(CachedLLM(Instant(), SlowLookups(tmp_path / "c.sqlite")))
    msgs = [{"role": "user", "content": "hi"}]

    async def go() -> float:
        t0 = time.perf_counter()
        await timed.complete(msgs, GenParams())  # a miss
        await timed.complete(msgs, GenParams())  # a hit
        return time.perf_counter() - t0

    wall = asyncio.run(go())
    assert wall >= 0.1  # two slow lookups
    assert timed.seconds < 0.02  # the model itself answered at once


# -- concurrency per model ---------------------------------------------------------------------


def test_concurrency_comes_from_the_config_and_the_spec_wins() -> None:
    url = "openai-compat:http://127.0.0.1:1/v1#m"
    assert make_llm(url, concurrency=32).max_concurrency == 32
    assert make_llm(url + "?concurrency=3", concurrency=32).max_concurrency == 3
    assert spec_concurrency(url) is None and spec_concurrency(url + "?concurrency=64") == 64
    assert spec_concurrency("scripted:x.json") is None
    exp = parse_experiment(
        {"name": "c", "model": "scripted:x", "concurrency": 4, "grid": {"env": ["hanoi"]}}
    )
    built = make_llm(url, concurrency=4)
    assert gate_size(exp, url, built) == 4
    assert gate_size(exp, url + "?concurrency=64", make_llm(url + "?concurrency=64")) == 64


def test_a_server_sees_as_many_requests_in_flight_as_configured(tmp_path: Path) -> None:
    """32 configured: 32 requests in flight (the old hard cap of 8 is gone)."""
    state = {"now": 0, "peak": 0}

    async def handler(request: httpx.Request) -> httpx.Response:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        # hold each reply until 32 have been in flight once (2 s at most), so the peak does
        # not depend on how fast a loaded machine starts the episodes; a gate below 32 still
        # shows as a lower peak
        for _ in range(200):
            if state["peak"] >= 32:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.02)
        state["now"] -= 1
        body = {
            "choices": [{"message": {"content": ACTION}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
        }
        return httpx.Response(200, json=body)

    exp = parse_experiment(
        {
            "name": "c",
            "model": "openai-compat:http://127.0.0.1:1/v1#m?constrain=off",
            "expert": False,
            "random": False,
            "seeds": list(range(40)),
            "grid": {"env": ["hanoi"], "history": ["full"]},
            "max_steps": 3,
            "out": str(tmp_path),
            "cache": None,
            "concurrency": 32,
        }
    )

    def factory(spec: str) -> LLM:
        return OpenAICompatLLM(
            "http://127.0.0.1:1/v1",
            "m",
            max_concurrency=exp.concurrency,
            transport=httpx.MockTransport(handler),
        )

    res = run_sync(exp, progress=None, llm_factory=factory)
    assert res.done == 40 and state["peak"] == 32
    assert res.store_seconds > 0


# -- SIGKILL during asynchronous writes --------------------------------------------------------

RUN = textwrap.dedent("""
    import asyncio, hashlib, json, sys
    from statelab.core import LLM, Completion, Usage
    from statelab.llm import CachedLLM, ResponseCache
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    REPLIES = [
        "Action: Move the top disk of rod A to the top of rod C",
        "Action: Move the top disk of rod A to the top of rod B",
        "Action: Move the top disk of rod C to the top of rod B",
        "no idea",
    ]

    class ByPrompt(LLM):
        model_id = "by-prompt"
        max_concurrency = 8
        async def complete(self, messages, params):
            await asyncio.sleep(float(sys.argv[2]))
            h = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).digest()
            return Completion(REPLIES[h[0] % 4], Usage(3, 2))

    exp = parse_experiment(json.loads(sys.argv[1]))
    res = run_sync(exp, progress=None,
                   llm_factory=lambda s: CachedLLM(ByPrompt(), ResponseCache(exp.cache)))
    print(json.dumps({"done": res.done, "skipped": res.skipped, "failed": res.failed}))
""")


def _config(out: Path) -> dict:
    return {
        "name": "k",
        "model": "scripted:x",
        "seeds": list(range(24)),
        "expert": False,
        "random": False,
        "grid": {"env": ["hanoi"], "history": ["full", "summary"]},
        "max_steps": 5,
        "out": str(out),
        "cache": str(out / "cache.sqlite"),
        "concurrency": 8,
    }


def _run(data: dict, delay: float) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(data), str(delay)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return dict(json.loads(out.stdout))


def _stored(path: Path) -> tuple[list, list, list]:
    st = Store(path, readonly=True)
    try:
        cols = ["run", "seed", "rollout", "status", "score", "steps", "reward", "agent_in"]
        eps = st.rows("episodes", [*cols, "agent_out"], order="run, seed, rollout")
        steps = st.rows(
            "steps",
            ["run", "seed", "t", "view", "reply", "action", "reward", "memory"],
            order="run, seed, t",
        )
        calls = st.rows(
            "calls", ["run", "seed", "t", "i", "kind", "messages", "text"], order="run, seed, t, i"
        )
    finally:
        st.close()
    def plain(rows: list[dict]) -> list[tuple]:
        return [tuple(r.values()) for r in rows]

    return plain(eps), plain(steps), plain(calls)


def test_sigkill_during_asynchronous_writes_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    data = _config(killed)
    store_path = killed / "k" / "store.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, json.dumps(data), "0.01"],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline, n_done = time.monotonic() + 120, 0
    while time.monotonic() < deadline and n_done < 10:
        time.sleep(0.02)
        if store_path.exists():
            try:
                db = sqlite3.connect(store_path)
                n_done = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
                db.close()
            except sqlite3.Error:
                n_done = 0
    assert n_done >= 10, "the run did not commit episodes in time"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    eps, steps, _ = _stored(store_path)
    assert 10 <= len(eps) < 48
    # only whole episodes: each stored episode has all its steps and none other is there
    per_episode = {(r, s): n for r, s, _, _, _, n, *_ in eps}
    counted: dict[tuple, int] = {}
    for r, s, *_ in steps:
        counted[(r, s)] = counted.get((r, s), 0) + 1
    assert counted == per_episode
    # and their answers are in the response cache (flushed before each episode's commit)
    db = sqlite3.connect(killed / "cache.sqlite")
    cached = {
        json.dumps(json.loads(r[0])["messages"], sort_keys=True)
        for r in db.execute("SELECT request FROM completions")
    }
    db.close()
    asked = {json.dumps(json.loads(m), sort_keys=True) for *_, m, _ in _stored(store_path)[2]}
    assert asked and asked <= cached

    res = _run(data, 0.0)
    assert res == {"done": 48 - len(eps), "skipped": len(eps), "failed": 0}
    assert _run(_config(whole), 0.0) == {"done": 48, "skipped": 0, "failed": 0}
    resumed, reference = _stored(store_path), _stored(whole / "k" / "store.sqlite")
    assert len(resumed[0]) == 48 and len({e[:3] for e in resumed[0]}) == 48  # none twice
    assert resumed == reference  # the same episodes, steps and calls as an unbroken run
