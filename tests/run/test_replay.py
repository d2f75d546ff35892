"""Replay: a stored episode re-simulates from its actions, with the run's own memory states."""

from __future__ import annotations

import json

import pytest

from statelab import replay
from statelab.run.config import parse_experiment
from statelab.run.replay import ReplayMismatch
from statelab.run.runner import run_sync
from statelab.run.store import Store

REPLIES = [
    "Action: Move the top disk of rod A to the top of rod C",
    "Action: Move the top disk of rod A to the top of rod B",
    "Action: Move the top disk of rod C to the top of rod B",
    "nonsense",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    script = tmp / "replies.json"
    script.write_text(json.dumps(REPLIES))
    exp = parse_experiment(
        {
            "name": "r",
            "random": False,
            "model": f"scripted:{script}",
            "seeds": [0, 1],
            "rollouts": 2,
            "grid": {"env": ["hanoi"], "history": ["full", "summary", "oracle-summary"]},
            "out": str(tmp / "results"),
            "cache": None,
            "max_steps": 5,
        }
    )
    res = run_sync(exp, progress=None)
    assert res.failed == 0
    return exp.out_dir / "store.sqlite"


def _episodes(path):
    s = Store(path)
    try:
        eps = s.table("episodes")
        steps = s.table("steps")
        runs = s.runs_frame()
    finally:
        s.close()
    return eps, steps, runs


def test_replay_reproduces_every_stored_episode_with_its_memory_states(store):
    eps, steps, _runs = _episodes(store)
    assert len(eps) == 3 * 2 * 2 + 2 * 2  # 3 histories x 2 seeds x 2 rollouts + expert
    for ep in eps.itertuples():
        stored = steps[
            (steps.run == ep.run) & (steps.seed == ep.seed) & (steps.rollout == ep.rollout)
        ]
        stored = stored.sort_values("t")
        got = list(replay(store, ep.run, ep.seed, ep.rollout))
        assert [s.action for s in got] == list(stored.action)
        assert [s.next_observation.text for s in got] == list(stored.observation)
        # the memory before step t is the memory the run stored after step t-1
        assert [s.memory for s in got[1:]] == list(stored.memory)[:-1]
        assert all(s.privileged.facts is not None for s in got)
        assert all(s.admissible == s.observation.admissible for s in got)


def test_replay_of_a_summary_run_gets_the_stored_summaries_back(store):
    _eps, _steps, runs = _episodes(store)
    run = runs[runs.history == "summary"].run.iloc[0]
    got = list(replay(store, run, 0, 1))
    assert got[1].memory.startswith("Summary of past actions:")
    assert got[1].state.summary and got[1].state.t == 1


def test_replay_says_where_a_changed_env_parts_from_the_store(store, tmp_path):
    import shutil
    import sqlite3

    copy = tmp_path / "store.sqlite"
    shutil.copy(store, copy)
    _eps, _steps, runs = _episodes(copy)
    run = runs[runs.history == "full"].run.iloc[0]
    db = sqlite3.connect(copy)
    db.execute("UPDATE steps SET observation='tampered' WHERE run=? AND seed=0 AND t=2", (run,))
    db.commit()
    db.close()
    with pytest.raises(ReplayMismatch, match="step 2"):
        list(replay(copy, run, 0))
