"""Issue 36 item 1: an episode in flight holds its texts' keys, not the texts. Each step's
views, memories and messages go into the store's ``texts`` as the step is recorded, so an
episode's memory does not grow with its length; what is stored reads back the same, a failed
(killed) episode's steps included, and a rerun replaces it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.core import LLM, Completion, GenParams, Message, ModelError, Usage
from statelab.run._texts import TextRef
from statelab.run.config import parse_experiment
from statelab.run.records import EpisodeRecord
from statelab.run.runner import run_sync
from statelab.run.store import Store

MOVES = [
    "Action: Move the top disk of rod A to the top of rod B",
    "Action: Move the top disk of rod B to the top of rod A",
]


def _exp(tmp: Path, out: str, **over: Any) -> Any:
    script = tmp / "replies.json"
    script.write_text(json.dumps(MOVES))
    data: dict[str, Any] = {
        "name": "s", "model": f"scripted:{script}", "seeds": [0, 1],
        "grid": {"env": ["hanoi"], "history": ["full"]}, "out": str(tmp / out),
        "cache": None, "max_steps": 8, "random": False, "expert": False, "concurrency": 2,
    }  # fmt: skip
    data.update(over)
    return parse_experiment(data)


def _frames(exp: Any) -> dict[str, pd.DataFrame]:
    st = Store(exp.out_dir / "store.sqlite", readonly=True)
    try:  # timings differ between runs
        return {t: st.table(t).drop(columns=["latency", "overhead"], errors="ignore")
                for t in ("steps", "calls")}  # fmt: skip
    finally:
        st.close()


def test_an_episode_in_flight_holds_keys_and_stores_the_same(tmp_path: Path, monkeypatch) -> None:
    committed: list[EpisodeRecord] = []
    real = Store.commit_episode

    def spy(self: Store, ep: EpisodeRecord) -> None:
        committed.append(ep)
        real(self, ep)

    monkeypatch.setattr(Store, "commit_episode", spy)
    streamed = _exp(tmp_path, "streamed")
    assert run_sync(streamed, progress=None).done == 2
    steps = [s for ep in committed for s in ep.trajectory]
    assert len(steps) == 16
    # before: every step record held its view, memory and prompts whole until the commit
    assert all(isinstance(s.view, TextRef) and isinstance(s.memory, TextRef) for s in steps)
    assert all(isinstance(c["messages"], TextRef) for s in steps for c in s.calls)
    # the same run with the texts held whole stores the same rows
    monkeypatch.setattr(Store, "text_sink", lambda self, *a: None)
    whole = _exp(tmp_path, "whole")
    assert run_sync(whole, progress=None).done == 2
    a, b = _frames(streamed), _frames(whole)
    for t in ("steps", "calls"):
        pd.testing.assert_frame_equal(a[t], b[t], obj=t)
    assert a["steps"]["view"].str.len().iloc[-1] > 200  # full history: texts, not keys


class FailsAfter(LLM):
    """Replies with the script ``ok`` times, then every call fails (a killed episode)."""

    model_id = "fails-after"

    def __init__(self, ok: int) -> None:
        self.ok, self.n = ok, 0

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        if self.n >= self.ok:
            raise ModelError("killed")
        self.n += 1
        return Completion(MOVES[(self.n - 1) % 2], Usage(10, 5))


def test_a_failed_episode_keeps_readable_steps_and_a_rerun_replaces_them(
    tmp_path: Path,
) -> None:
    exp = _exp(tmp_path, "r", seeds=[0], concurrency=1)
    res = run_sync(exp, progress=None, llm_factory=lambda spec: FailsAfter(3))
    assert res.failed == 1
    failed = _frames(exp)["steps"]
    assert list(failed["t"]) == [1, 2, 3]  # the texts of its steps read back (no DamagedText)
    assert failed["memory"].iloc[-1].count("rod A to the top of rod B") == 2
    again = run_sync(exp, progress=None)
    assert (again.done, again.failed) == (1, 0)
    steps = _frames(exp)["steps"]
    assert list(steps["t"]) == list(range(1, 9))
    assert steps["memory"].iloc[-1].count("Step 8:") == 1  # every text reads back whole
