"""The report reads the big tables (steps, calls, queries, texts) in bounded pieces (issue 38):
aggregated in SQL, or a few whole episodes at a time, never a whole table into memory."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from statelab.run._reading import Reading
from statelab.run.store import Store

BIG = ("steps", "calls", "queries")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    tmp = tmp_path_factory.mktemp("bounded")
    replies = tmp / "replies.json"
    replies.write_text(json.dumps(["Action: Move the top disk of rod A to the top of rod C",
                                   "Action: xyzzy"]))  # fmt: skip
    exp = parse_experiment(
        {
            "name": "bounded",
            "model": f"scripted:{replies}",
            "seeds": [0, 1, 2],
            "rollouts": 2,
            "grid": {"env": ["hanoi", "babyai/goto"], "history": ["full", "summary"]},
            "max_steps": 5,
            "out": str(tmp),
            "cache": None,
            "report": {"reward_within_budget": True},
        }
    )
    assert run_sync(exp, progress=None).failed == 0
    return exp.out_dir / "store.sqlite"


def _one_episode(where: dict | None) -> bool:
    return bool(where) and all(k in where and not isinstance(where[k], tuple)
                               for k in ("run", "seed"))  # fmt: skip


def test_every_report_section_reads_the_big_tables_in_pieces(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole-table reads of steps/calls/queries are refused (one episode's rows may be read);
    episode_frames pieces are counted and must hold no more rows than asked for."""
    from statelab.analysis.reporting import make_report

    table, rows, frames = Reading.table, Reading.rows, Reading.episode_frames
    pieces: list[int] = []

    def guarded_table(self, name, columns=None, where=None, order=None):  # type: ignore[no-untyped-def]
        assert name not in BIG or _one_episode(where), f"the whole {name} table read at once"
        return table(self, name, columns, where, order)

    def guarded_rows(self, name, columns=None, where=None, order=None):  # type: ignore[no-untyped-def]
        assert name not in BIG or _one_episode(where), f"the whole {name} table read at once"
        return rows(self, name, columns, where, order)

    def refused_chunks(self, name, size=5000):  # type: ignore[no-untyped-def]
        raise AssertionError(f"chunks({name!r}) in a report")

    def counted(self, name, columns=None, where=None, *, present=(), size=5000):  # type: ignore[no-untyped-def]
        for f in frames(self, name, columns, where, present=present, size=3):
            pieces.append(len(f))
            yield f

    monkeypatch.setattr(Reading, "table", guarded_table)
    monkeypatch.setattr(Reading, "rows", guarded_rows)
    monkeypatch.setattr(Reading, "chunks", refused_chunks)
    monkeypatch.setattr(Reading, "episode_frames", counted)
    monkeypatch.setattr(
        "statelab.analysis.budget.curve_mode",
        lambda env: "score",  # read the steps' rewards
    )
    rep = make_report(store, tmp_path / "report")
    assert "## Reward within budget" in rep.markdown
    assert pieces and max(pieces) <= 3 + 5  # a piece: 3 rows, or up to one more episode


def test_episode_frames_are_whole_episodes_that_add_up_to_the_table(store: Path):
    st = Store(store, readonly=True)
    try:
        cols = ["run", "seed", "rollout", "t", "reward", "memory"]
        whole = st.table("steps", cols, order="run, seed, rollout, t")
        got = list(st.episode_frames("steps", ["t", "reward", "memory"], size=4))
        assert len(got) > 1
        key = ["run", "seed", "rollout"]
        seen = [tuple(k) for f in got for k in f[key].drop_duplicates().itertuples(index=False)]
        assert len(seen) == len(set(seen))  # no episode split between two frames
        assert all(len(f) < 4 + 6 for f in got)
        pd.testing.assert_frame_equal(pd.concat(got, ignore_index=True)[cols], whole)
        runs = tuple(whole["run"].unique()[:1])
        (one,) = st.episode_frames("steps", ["t"], {"run": runs, "rollout": 0}, present=("memory",))
        want = whole[(whole["run"] == runs[0]) & (whole["rollout"] == 0) & whole["memory"].notna()]
        assert len(one) == len(want)
    finally:
        st.close()


def test_streamed_curves_equal_the_curves_of_the_whole_steps_table(store: Path):
    from statelab.analysis.budget import _curves, episode_curves

    st = Store(store, readonly=True)
    try:
        eps = st.table("episodes", ["run", "seed", "rollout", "success", "steps"])
        eps = eps.assign(budget=5, mode=["score", "success"] * (len(eps) // 2))
        steps = st.table("steps", ["run", "seed", "rollout", "t", "reward"])
        pd.testing.assert_frame_equal(_curves(st, eps, size=3), episode_curves(eps, steps))
    finally:
        st.close()
