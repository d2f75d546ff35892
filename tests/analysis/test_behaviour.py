"""Behaviour columns: recomputed from raw episodes (constructed stores with rollouts and a
failed episode) and compared with what the store aggregates and the report prints."""

from __future__ import annotations

import itertools
import math
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from statelab.analysis.behaviour import BEHAVIOUR_FIGURES
from statelab.analysis.reporting import make_report
from statelab.run.records import EpisodeRecord, StepRecord
from statelab.run.store import Store

AXES = {"env": "hanoi", "model": "m", "agent": "act", "history": "full", "format": "tagged-list"}
REJECT = [{"action": "x", "feedback": "no"}, {"action": "y", "feedback": "no"}]

#: (run, seed, rollout, status, score) -> steps as (action, valid, memory, rejections, queries)
EPISODES: dict[tuple[str, int, int, str, float], list[tuple[str, int, str, int, int]]] = {
    ("full", 0, 0, "done", 1 / 3): [
        ("x", 1, "m1", 0, 0),
        ("x", 0, "m1", 0, 0),
        ("y", 0, "m2", 0, 0),
        ("x", 1, "m2", 0, 0),
    ],
    ("full", 0, 1, "done", 0.0): [("y", 0, "", 0, 0)] * 3,
    ("full", 1, 0, "done", 2 / 3): [
        ("x", 1, "a", 0, 3),
        ("y", 1, "b", 2, 0),
        ("z", 1, "c", 0, 0),
        ("z", 1, "d", 0, 0),
        ("z", 1, "e", 0, 0),
    ],
    ("full", 2, 0, "failed", 0.0): [("q", 0, "zz", 0, 0)] * 6,  # excluded everywhere
    ("summary", 0, 0, "done", 0.0): [("w", 1, "s", 0, 0)] * 4,
    ("summary", 1, 0, "done", 1 / 3): [("w", 1, "s", 0, 0), ("v", 0, "t", 0, 0)],
}


def _step(t: int, action: str, valid: int, memory: str, rejections: int, queries: int) -> Any:
    return StepRecord(
        t=t,
        view="the start" if t == 1 else f"view {t}",
        grounding="",
        reply=action,
        action=action,
        parsed=True,
        valid=bool(valid),
        reward=0.0,
        observation="obs",
        memory=memory,
        agent_in=10,
        agent_out=1,
        aux_in=0,
        aux_out=0,
        latency=0.0,
        overhead=0.0,
        queries=[{"query": f"q{i}", "answer": "a"} for i in range(queries)],
        meta={"rejected": REJECT[:rejections]} if rejections else {},
        agent_calls=1,
    )


def build_store(path: Path) -> Path:
    store = Store(path)
    store.save_experiment("Behaviour", {"baseline": {"history": "full"}})
    for run in ("full", "summary"):
        store.save_run(run, run, {**AXES, "history": run}, {})
    for (run, seed, rollout, status, score), steps in EPISODES.items():
        store.commit_episode(
            EpisodeRecord(
                run=run,
                seed=seed,
                rollout=rollout,
                env_seed=seed * 1000 + rollout,
                grp=seed,
                status=status,
                score=score,
                steps=len(steps),
                agent_calls=len(steps),
                agent_in=10 * len(steps),
                agent_out=len(steps),
                trajectory=[_step(t, *s) for t, s in enumerate(steps, start=1)],
            )
        )
    store.close()
    return path


def _longest(actions: list[str]) -> int:
    best = cur = 1
    for a, b in itertools.pairwise(actions):
        cur = cur + 1 if a == b else 1
        best = max(best, cur)
    return best


def recompute(steps: list[tuple[str, int, str, int, int]]) -> dict[str, float]:
    """One episode's behaviour figures, from its raw steps, in plain Python."""
    actions = [s[0] for s in steps]
    memories = [s[2] for s in steps]
    writes = len(steps) - 1
    same = sum(a == b for a, b in itertools.pairwise(memories))
    contents = {" ".join(re.sub(r"\d+", "#", m).split()) for m in memories}
    return {
        "invalid_rate": sum(1 for s in steps if not s[1]) / len(steps),
        "distinct_actions": float(len(set(actions))),
        "one_action": float(len(set(actions)) == 1),
        "longest_repeat": float(_longest(actions)),
        "wm_queries": float(sum(s[4] for s in steps)),
        "rejections": float(sum(s[3] for s in steps)),
        "same_memory": same / writes if any(memories) and writes else math.nan,
        "looped": math.nan,  # these steps carry no env state fingerprints
        "constant_memory": (
            float(len(contents) <= max(1.0, 0.1 * len(steps)))
            if any(memories) and len(steps) >= 2
            else math.nan
        ),
    }


def expected(run: str) -> dict[str, float]:
    """Per episode, averaged over the seed's finished episodes, then over seeds (NaN
    skipped), as the scores are."""
    seeds: dict[int, list[dict[str, float]]] = {}
    for (r, seed, _, status, _), steps in EPISODES.items():
        if r == run and status == "done":
            seeds.setdefault(seed, []).append(recompute(steps))

    def avg(values: list[float]) -> float:
        ok = [v for v in values if not math.isnan(v)]
        return statistics.fmean(ok) if ok else math.nan

    return {
        name: avg([avg([e[name] for e in eps]) for eps in seeds.values()])
        for name in BEHAVIOUR_FIGURES
    }


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return build_store(tmp_path / "store.sqlite")


def test_known_answers_per_episode_from_the_store(store_path: Path) -> None:
    store = Store(store_path)
    try:
        counts, per_run = store.behaviour_frames()
    finally:
        store.close()
    got = counts.set_index(["run", "seed", "rollout"])
    first = got.loc[("full", 0, 0)]
    # x x y x: two refused, two distinct, "x x" the longest repeat, m1 m1 m2 m2: 2 of 3 same
    assert (first.n_steps, first.invalid, first.distinct_actions) == (4, 2, 2)
    assert (first.longest_repeat, first.memory_writes, first.memory_same) == (2, 3, 2)
    third = got.loc[("full", 1, 0)]
    assert (third.longest_repeat, third.rejections, third.wm_queries) == (3, 2, 3)
    assert got.loc[("full", 0, 1)].has_memory == 0  # no memory at all
    runs = per_run.set_index("run")
    # finished episodes only: 3 of "full" (the failed one's 6 steps are not counted)
    assert runs.loc["full", "memory_states"] == 12
    assert runs.loc["full", "distinct_memories"] == 8  # m1 m2 "" a b c d e
    assert runs.loc["full", "env_seeds"] == 3 and runs.loc["full", "first_views"] == 1
    assert runs.loc["summary", "distinct_memories"] == 2


def test_report_json_averages_behaviour_like_the_scores(store_path: Path, tmp_path: Path) -> None:
    rep = make_report(store_path, tmp_path / "report")
    by_run = {r["run"]: r for r in rep.data["runs"]}
    want_full = expected("full")
    # the known answers behind the recomputation: seed 0 (rollouts 0 and 1), then seed 1
    assert want_full["invalid_rate"] == pytest.approx(((0.5 + 1.0) / 2 + 0.0) / 2)
    assert want_full["distinct_actions"] == pytest.approx(((2 + 1) / 2 + 3) / 2)
    assert want_full["same_memory"] == pytest.approx((2 / 3 + 0.0) / 2)  # rollout 1: no memory
    for run in ("full", "summary"):
        for name, value in expected(run).items():
            got = by_run[run][name]
            if math.isnan(value):
                assert got is None, (run, name)
            else:
                assert got == pytest.approx(value), (run, name)
    assert set(BEHAVIOUR_FIGURES) <= set(rep.data["units"])


def test_the_table_prints_the_behaviour_columns(store_path: Path, tmp_path: Path) -> None:
    md = make_report(store_path, tmp_path / "report").markdown
    header = next(line for line in md.splitlines() if line.startswith("| Env"))
    cols = [c.strip() for c in header.strip("|").split("|")]
    for name in ("Invalid", "Distinct", "Max rep.", "WM q.", "Rejected", "Same mem."):
        assert name in cols
    row = next(line for line in md.splitlines() if line.startswith("| hanoi | act | summary"))
    cells = dict(zip(cols, [c.strip() for c in row.strip("|").split("|")], strict=True))
    want = expected("summary")
    assert cells["Invalid"] == f"{want['invalid_rate']:.2f}"  # (0 + 1/2) / 2 = 0.25
    assert cells["Distinct"] == f"{want['distinct_actions']:.1f}"
    assert cells["Max rep."] == f"{want['longest_repeat']:.1f}"
    assert cells["Same mem."] == f"{want['same_memory']:.2f}"
    assert cells["WM q."] == "0.0" and cells["Rejected"] == "0.0"
