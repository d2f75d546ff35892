"""Seed 001's Table 1 from hand-made store data."""

from __future__ import annotations

import json
import math

import pytest

from statelab.run.records import EpisodeRecord, StepRecord
from statelab.run.store import Store
from statelab.tools.library import clear_memo
from statelab_seed001.table1 import read_tables, table1, table1_markdown, write_table1

PNG = b"\x89PNG\r\n\x1a\n"


def _step(t: int, action: str, latency: float, out: int, model_call: bool | None) -> StepRecord:
    meta = {}
    if model_call is not None:
        meta = {"model_call": model_call, "thinking": False, "generated": out}
    return StepRecord(
        t=t, view="", grounding="", reply="", action=action, parsed=True, valid=True,
        reward=0.0, observation="", memory="", agent_in=0 if not out else 50, agent_out=out,
        aux_in=0, aux_out=0, latency=latency, overhead=0.5, meta=meta,
    )  # fmt: skip


def _runs(store: Store) -> None:
    for run, agent, grounding, model in [
        ("r-cc", "tools:cc", "zoom", "m"),
        ("r-plan", "plan:5", "none", "m"),
        ("r-plan-zoom", "plan:5", "zoom", "m"),
        ("r-think", "tools:think", "zoom", "m"),
        ("r-act", "act", "none", "m"),
        ("r-expert", "expert", "-", "-"),
    ]:
        axes = dict(
            env="traffic", model=model, agent=agent, history="full", format="symbolic",
            grounding=grounding,
        )  # fmt: skip
        store.save_run(run, f"{agent}/{grounding}", axes, {})


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    monkeypatch.setenv("STATELAB_CACHE", str(tmp_path / "cache"))
    clear_memo()
    path = tmp_path / "store.sqlite"
    store = Store(path)
    store.save_experiment("t1", {})
    _runs(store)
    # tools:cc: 2 episodes, one success; 4 decisions, 3 without a model call (one by tokens)
    ep = EpisodeRecord("r-cc", 0, "done", success=True, steps=2)
    ep.trajectory = [_step(1, "RRRRR", 0.0, 0, False), _step(2, "DDDDD", 3.0, 20, True)]
    store.commit_episode(ep)
    ep = EpisodeRecord("r-cc", 1, "done", success=False, steps=2)
    ep.trajectory = [_step(1, "WWWWW", 0.0, 0, False), _step(2, "WWWWW", 0.0, 0, None)]
    store.commit_episode(ep)
    # plan:5 without zoom: 1 episode, failure, 2 decisions with a model call
    ep = EpisodeRecord("r-plan", 0, "done", steps=2)
    ep.trajectory = [_step(1, "DDDDD", 1.5, 10, True), _step(2, "RRRRR", 2.5, 30, True)]
    store.commit_episode(ep)
    ep = EpisodeRecord("r-plan-zoom", 0, "done", steps=1)
    ep.trajectory = [_step(1, "DDDDD", 120.0, 100, True)]
    store.commit_episode(ep)
    store.commit_episode(EpisodeRecord("r-think", 0, "failed", error="boom"))
    store.commit_episode(EpisodeRecord("r-act", 0, "done"))
    ep = EpisodeRecord("r-expert", 0, "done", success=True, steps=1)
    ep.trajectory = [_step(1, "DDDDD", 0, 0, None)]
    store.commit_episode(ep)
    store.close()
    yield path
    clear_memo()


def test_rows_and_columns(store_path):
    df = table1(read_tables(store_path))
    assert list(df["agent"]) == ["plan:5", "plan:5", "tools:think", "tools:cc", "expert"]
    assert list(df["grounding"]) == ["zoom", "none", "zoom", "zoom", "-"]  # close-up first
    cc = df[df["agent"] == "tools:cc"].iloc[0]
    assert (cc["thinking"], cc["geodesic"], cc["collision_check"], cc["closeup"]) == (
        False, True, True, True
    )  # fmt: skip
    assert (cc["n"], cc["successes"], cc["success_pct"], cc["decisions"]) == (2, 1, 50.0, 4)
    assert cc["time_s"] == pytest.approx((0 + 3 + 0 + 0) / 4 + 0.5)
    assert cc["tokens"] == pytest.approx(20 / 4)
    assert cc["no_model_share"] == pytest.approx(3 / 4)
    plan = df[(df["agent"] == "plan:5") & (df["grounding"] == "none")].iloc[0]
    assert not plan["geodesic"] and not plan["closeup"] and plan["no_model_share"] == 0
    assert plan["tokens"] == 20 and plan["time_s"] == pytest.approx(2.5)
    think = df[df["agent"] == "tools:think"].iloc[0]
    assert think["n"] == 0 and math.isnan(think["success_pct"])


def test_markdown_layout(store_path):
    md = table1_markdown(table1(read_tables(store_path)))
    lines = md.splitlines()
    assert lines[0].startswith("| Run | Thinking | Geodesic tools | Collision check | Zoom")
    assert "Success % (N)" in lines[0] and "Decisions without a model call" in lines[0]
    cc = next(ln for ln in lines if ln.startswith("| tools:cc / zoom"))
    assert cc == "| tools:cc / zoom | × | ✓ | ✓ | ✓ | 1.25 s | 5 | 75% | 50% (2) |"
    assert "| 2.0 min |" in next(ln for ln in lines if ln.startswith("| plan:5 / zoom"))
    assert lines[-1].startswith("| expert (ceiling) | - | - | - | - |")


def test_write_table1_files(store_path, tmp_path):
    section, files = write_table1(store_path, tmp_path / "report")
    assert section.startswith("## Seed 001, Table 1")
    for key in ("table1_success", "fig4_geodesics", "fig4_clusters", "fig5_episode"):
        assert files[key].read_bytes()[:8] == PNG, key
    rows = json.loads(files["table1_json"].read_text())
    assert [r["agent"] for r in rows][-1] == "expert"
    assert files["table1"].read_text().startswith("# Seed 001, Table 1")
