"""Issue 36 item 10: an episode in flight into a store holds no step records but its last.
Each step, once final (the next one recorded), goes into the store connection's temp tables;
the commit copies them into the real tables and deletes them, storing the same rows a list
of records would; a killed episode leaves nothing behind, a failed one's steps are stored."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.llm.scripted import ScriptedLLM
from statelab.run._live import STEP_HOOK
from statelab.run._texts import TextRef
from statelab.run.episode import attempt_episode
from statelab.run.records import EpisodeRecord, Trajectory
from statelab.run.spec import RunSpec
from statelab.run.store import Store

MOVES = [
    "Action: Move the top disk of rod A to the top of rod B",
    "Action: Move the top disk of rod B to the top of rod A",
]
STEPS = 12


def _staged(store: Store, table: str, seed: int) -> int:
    return store.db.execute(
        f"SELECT count(*) FROM temp.{table} WHERE seed=?", (seed,)
    ).fetchone()[0]


def _play(store: Store, seed: int, seen: list[tuple[int, int, int, int]] | None = None) -> Any:
    spec = RunSpec.make(env="hanoi", model="scripted:x", history="full", max_steps=STEPS)
    store.save_run(spec.key, spec.label, spec.axes(), {})
    sink = store.text_sink(spec.key, seed, 0)

    def hook(n: int, ep: EpisodeRecord) -> None:
        traj = ep.trajectory
        if seen is not None:
            assert isinstance(traj, Trajectory)
            seen.append((n, len(traj.held), traj.n_staged, _staged(store, "staged_steps", seed)))

    async def go() -> tuple[EpisodeRecord, Exception | None]:
        token = STEP_HOOK.set(hook)
        try:
            return await attempt_episode(spec, seed, ScriptedLLM(MOVES, "st"), texts=sink)
        finally:
            STEP_HOOK.reset(token)

    return asyncio.run(go())


def _rows(path: Path) -> dict[str, pd.DataFrame]:
    st = Store(path, readonly=True)
    try:  # timings differ between runs
        return {
            t: st.table(t).drop(columns=["latency", "overhead", "wall_s", "finished"],
                                errors="ignore")
            for t in ("episodes", "steps", "calls")
        }  # fmt: skip
    finally:
        st.close()


def test_an_episode_in_flight_holds_its_last_step_and_stages_the_rest(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite", axes=("env", "history"))
    seen: list[tuple[int, int, int, int]] = []
    ep, error = _play(store, 0, seen)
    assert error is None and ep.steps == STEPS
    # at every step the record held one step record; the others were in the temp tables
    assert seen == [(n, 1, n - 1, n - 1) for n in range(1, STEPS + 1)]
    assert _staged(store, "staged_calls", 0) == STEPS - 1
    # the in-flight record reads its steps back (texts as keys)
    traj = ep.trajectory
    assert len(traj) == STEPS and [s.t for s in traj] == list(range(1, STEPS + 1))
    assert isinstance(traj[0].view, TextRef) and traj[0].calls[0]["messages"]
    store.commit_episode(ep)
    assert _staged(store, "staged_steps", 0) == 0  # copied, then dropped
    assert _staged(store, "staged_calls", 0) == 0
    store.close()
    # once committed it reads from the file, the store closed
    assert [s.action for s in ep.trajectory] == [s.action for s in traj]
    assert ep.trajectory[-1].t == STEPS

    # the same episode recorded as a list of records stores the same rows
    whole = Store(tmp_path / "whole.sqlite", axes=("env", "history"))
    sink = whole.text_sink
    whole.text_sink = lambda *a: _Plain(sink(*a))  # type: ignore[method-assign]
    listed, error = _play(whole, 0)
    assert error is None and isinstance(listed.trajectory, list)
    whole.commit_episode(listed)
    whole.close()
    a, b = _rows(tmp_path / "store.sqlite"), _rows(tmp_path / "whole.sqlite")
    for t in a:
        pd.testing.assert_frame_equal(a[t], b[t], obj=t)
    assert len(a["steps"]) == STEPS and len(a["calls"]) == STEPS


class _Plain:
    """A text sink without staging (the record keeps a list)."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink

    def __call__(self, step: Any) -> None:
        self.sink(step)


def test_a_killed_episode_leaves_nothing_staged_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    store = Store(path, axes=("env", "history"))
    ep, _ = _play(store, 1)
    assert len(ep.trajectory) == STEPS
    store.db.close()  # the process dies before the commit: the temp tables die with it
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM steps").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM episodes").fetchone()[0] == 0
    db.close()


def test_a_record_replaced_by_a_list_discards_its_staged_rows(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite", axes=("env", "history"))
    ep, _ = _play(store, 2)
    assert _staged(store, "staged_steps", 2) == STEPS - 1
    ep.status, ep.trajectory = "failed", []  # the runner's record of a store failure
    store.commit_episode(ep)
    assert _staged(store, "staged_steps", 2) == 0
    assert store.db.execute("SELECT count(*) FROM steps").fetchone()[0] == 0
    store.close()
