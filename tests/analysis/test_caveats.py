"""The report's warnings, each with a known answer: collapse, the random floor, one start
state, near-constant memory; each names the run (or env) and the figure."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from statelab.analysis.behaviour import CONSTANT_MEMORY
from statelab.analysis.caveats import (
    at_floor,
    caveats,
    collapsed,
    constant_memory,
    shared_start,
)
from statelab.analysis.reporting import make_report
from statelab.run.records import EpisodeRecord, StepRecord
from statelab.run.store import Store


def test_collapse_by_one_action_or_by_invalid_rate() -> None:
    c = collapsed({"run": "summary", "one_action": 0.8, "invalid_rate": 0.2})
    assert c is not None and c.subject == "summary"
    assert c.figure == "one distinct action in 80% of episodes"
    c = collapsed({"run": "full", "one_action": 0.4, "invalid_rate": 0.93})
    assert c is not None and c.figure == "invalid-action rate 0.93"
    assert collapsed({"run": "ok", "one_action": 0.5, "invalid_rate": 0.5}) is None  # at level
    assert collapsed({"run": "none", "one_action": None, "invalid_rate": float("nan")}) is None


def test_floor_by_mean_or_by_an_interval_that_includes_zero() -> None:
    below = at_floor({"run": "a", "mean": 0.2, "floor_diff": -0.1}, 0.3)
    assert below is not None and "mean 0.20 vs random floor 0.30" in below.figure
    near = {"run": "b", "mean": 0.4, "floor_diff": 0.1, "floor_ci_low": -0.05, "floor_ci_high": 0.2}
    got = at_floor(near, 0.3)
    assert got is not None and got.figure.endswith("Δ +0.10 [-0.05, +0.20]")
    clear = {**near, "floor_ci_low": 0.05}
    assert at_floor(clear, 0.3) is None
    assert at_floor(near, None) is None  # no floor row for this env


def test_constant_memory_needs_enough_states_and_a_memory() -> None:
    rec = {"run": "summary", "memory_states": 150, "distinct_memories": 3, "has_memory": 1}
    c = constant_memory(rec)
    assert c is not None and c.figure == "150 memory states, 3 distinct texts"
    assert constant_memory({**rec, "distinct_memories": 16}) is None  # 16/150 > 10%
    assert constant_memory({**rec, "distinct_memories": 15}) is not None  # exactly 10%
    assert pytest.approx(0.1) == CONSTANT_MEMORY
    assert constant_memory({**rec, "memory_states": 10, "distinct_memories": 1}) is None
    assert constant_memory({**rec, "has_memory": 0}) is None  # history none: no memory


def test_shared_start_is_per_env_over_every_run() -> None:
    summary = pd.DataFrame(
        {
            "run": ["h1", "h2", "m1"],
            "env": ["hanoi", "hanoi", "messenger"],
            "env_seeds": [5, 5, 5],
            "first_views": [1, 1, 4],
        }
    )
    found = shared_start(summary)
    assert [c.subject for c in found] == ["hanoi"]
    assert found[0].figure == (
        "5 env seeds, 1 distinct first observation in each of 2 runs (no state fingerprints in"
        " this store)"
    )
    one_seed = summary.assign(env_seeds=1)
    assert shared_start(one_seed) == []


def test_reference_rows_are_never_warned_about() -> None:
    summary = pd.DataFrame(
        {
            "run": ["act", "random"],
            "env": ["hanoi", "hanoi"],
            "agent": ["act", "random"],
            "role": ["none", "floor"],
            "mean": [0.1, 0.1],
            "one_action": [1.0, 1.0],
            "invalid_rate": [0.0, 0.9],
            "floor_run": ["random", None],
            "floor_diff": [0.0, float("nan")],
        }
    )
    kinds = [(c.kind, c.subject) for c in caveats(summary)]
    assert kinds == [("collapsed", "act"), ("floor", "act")]


def _step(t: int, action: str, memory: str, view: str) -> StepRecord:
    return StepRecord(t, view, "", action, action, True, False, -1.0, "o", memory,
                      10, 1, 0, 0, 0.0, 0.0, agent_calls=1)  # fmt: skip


def test_the_report_prints_each_warning_with_its_run_and_figure(tmp_path: Path) -> None:
    """A quickstart in miniature: 'summary' plays one illegal move 30 times in all 5
    seeds, with 1 memory text; every seed shows the same first view; the floor scores as
    much; 'full' plays two moves and changes its memory every step."""
    path = tmp_path / "store.sqlite"
    store = Store(path)
    store.save_experiment("Mini", {"baseline": {"history": "full"}})
    axes = {"env": "hanoi", "model": "m", "agent": "act", "format": "tagged-list"}
    store.save_run("full", "full", {**axes, "history": "full"}, {})
    store.save_run("summary", "summary", {**axes, "history": "summary"}, {})
    store.save_run(
        "random", "random", {"env": "hanoi", "agent": "random"}, {},
        {"agent": {"spelling": "random", "label": "random", "tags": ["floor"]}},
    )  # fmt: skip
    for seed in range(5):
        plays = {
            "full": [_step(t, "AB" if t % 2 else "AC", f"h{chr(96 + t % 26)}", "start")
                     for t in range(1, 31)],
            "summary": [_step(t, "CA", "goal: C", "start") for t in range(1, 31)],
            "random": [_step(t, f"m{(t * seed) % 6}", "", "start") for t in range(1, 31)],
        }
        for run, steps in plays.items():
            ep = EpisodeRecord(run, seed, "done", grp=seed, score=1 / 3, steps=30, trajectory=steps)
            store.commit_episode(ep)
    store.close()
    rep = make_report(path, tmp_path / "report")
    md = rep.markdown
    warn = md.split("## Warnings", 1)[1].split("##", 1)[0]
    assert "hanoi: all seeds share one start state (5 env seeds" in warn
    assert "summary: the policy collapsed (one distinct action in 100% of episodes" in warn
    assert "full: the policy collapsed (invalid-action rate 1.00" in warn
    assert "summary: indistinguishable from the random floor (mean 0.33 vs random floor 0.33" in (
        warn
    )
    assert (
        "summary: the memory is near-constant (one content within 100% of episodes, 1 distinct"
        " content over 5 episodes, digits aside;" in warn
    )
    assert "full: the memory is near-constant" not in warn
    assert "random:" not in warn  # the floor itself is not warned about
    kinds = {(w["kind"], w["subject"]) for w in rep.data["warnings"]}
    assert ("constant-memory", "summary") in kinds and ("shared-start", "hanoi") in kinds
    assert "| random floor |" in md


def test_the_table_links_each_run_to_its_episodes_in_the_viewer(tmp_path: Path) -> None:
    """Issue 22: the report's table links into the viewer's page (``statelab view`` writes
    it beside the report), at the run's own id."""
    path = tmp_path / "store.sqlite"
    store = Store(path)
    store.save_experiment("Links", {"baseline": {"history": "full"}})
    axes = {"env": "hanoi", "model": "m", "agent": "act", "format": "tagged-list"}
    store.save_run("r-full", "full", {**axes, "history": "full"}, {})
    store.save_run("r-evil", "summary", {**axes, "history": "summary"}, {})
    for run in ("r-full", "r-evil"):
        for seed in range(2):
            steps = [_step(t, "AB", f"m{t}", "start") for t in range(1, 4)]
            store.commit_episode(EpisodeRecord(run, seed, "done", grp=seed, score=0.5, steps=3,
                                               trajectory=steps))  # fmt: skip
    store.close()
    md = make_report(path, tmp_path / "report").markdown
    table = md.split("**Table: mean normalised score per run**", 1)[1].split("\n\n", 2)[1]
    rows = [r for r in table.splitlines() if r.startswith("| ") and "Viewer" not in r]
    assert len(rows) == 2
    links = sorted(r.rsplit("|", 2)[1].strip() for r in rows)
    assert links == [
        "[episodes](../view/index.html#run=r-evil)",
        "[episodes](../view/index.html#run=r-full)",
    ]
