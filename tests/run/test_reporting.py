"""make_report from a real store: rollouts, failed and unscored episodes, tokens per env step."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from statelab.analysis.reporting import make_report
from statelab.run.records import EpisodeRecord
from statelab.run.store import Store

AXES = {"env": "hanoi", "model": "m", "agent": "react", "history": "full", "format": "tagged-list"}
SUCCESS = {"none": [[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 1]], "vot": [[1, 1, 1]] * 4}
FAILED, NO_SCORE = ("vot", 1, 2), ("vot", 2, 0)  # (run, config seed, rollout)


def _episodes() -> list[dict[str, Any]]:
    out = []
    for grounding, seeds in SUCCESS.items():
        calls = 2 if grounding == "vot" else 1  # VoT: the drawn map, then the action
        for g, rollouts in enumerate(seeds):
            for r, s in enumerate(rollouts):
                steps = 8 + 3 * r + 2 * g
                ep: dict[str, Any] = {
                    "run": grounding,
                    "seed": 1000 * g + r,
                    "grp": g,
                    "status": "done",
                    "score": 1.0 if s else 1 / 3,
                    "success": bool(s),
                    "steps": steps,
                    "agent_calls": calls * steps,
                    "agent_in": steps * (900 * calls + 37 * g + 11 * r),
                    "agent_out": steps * 30 * calls,
                }
                if (grounding, g, r) == FAILED:
                    ep.update(status="failed", error="ModelError: timeout", score=0.0)
                if (grounding, g, r) == NO_SCORE:
                    ep.update(score=math.nan)
                out.append(ep)
    return out


@pytest.fixture
def report(tmp_path: Path) -> Any:
    path = tmp_path / "store.sqlite"
    store = Store(path)
    store.save_experiment("Rollouts", {"baseline": {"grounding": "none"}})
    for grounding in SUCCESS:
        store.save_run(grounding, grounding, {**AXES, "grounding": grounding}, {})
    for ep in _episodes():
        store.commit_episode(EpisodeRecord(**ep))
    store.close()
    return make_report(path, tmp_path / "report")


def _expected(run: str) -> dict[str, float]:
    seeds: dict[int, list[dict[str, Any]]] = {}
    for ep in _episodes():
        if ep["run"] == run and ep["status"] == "done" and not math.isnan(ep["score"]):
            seeds.setdefault(ep["grp"], []).append(ep)

    def avg(f: Any) -> float:  # per episode, then per seed, then over seeds
        return statistics.fmean(statistics.fmean(f(e) for e in eps) for eps in seeds.values())

    means = [statistics.fmean(e["score"] for e in eps) for eps in seeds.values()]
    return {
        "n": len(seeds),
        "mean": statistics.fmean(means),
        "sd": statistics.stdev(means),
        "success_rate": avg(lambda e: float(e["success"])),
        "in_per_step": avg(lambda e: e["agent_in"] / e["steps"]),
        "in_per_call": avg(lambda e: e["agent_in"] / e["agent_calls"]),
        "score_per_1k_in": avg(lambda e: 1000 * e["score"] * e["steps"] / e["agent_in"]),
    }


def test_report_numbers_from_the_store(report: Any) -> None:
    runs = {r["run"]: r for r in report.data["runs"]}
    for run in SUCCESS:
        for key, value in _expected(run).items():
            assert runs[run][key] == pytest.approx(value), (run, key)
    assert runs["none"]["success_rate"] == pytest.approx(7 / 12)  # not 1.0 (any success)
    vot = runs["vot"]
    assert (vot["n"], vot["failed"], vot["unscored"]) == (4, 0, 0)  # every seed kept a score
    assert (vot["episodes"], vot["episodes_failed"], vot["episodes_unscored"]) == (10, 1, 1)
    assert vot["in_per_step"] == pytest.approx(2 * vot["in_per_call"])
    assert vot["paired"] and vot["n_test"] == 4 and vot["test"] == "sign-flip (exact)"
    md = report.markdown
    assert "| 10 (+1 failed, +1 no score) |" in md  # the Episodes column
    assert "4 pairs; n too small for p<0.05" in md
    assert "In tok/call" in md and "sample SD" in md
