"""The report's cost: each run's dollars over all its episodes (failed and unscored ones were
paid for too; rollouts summed), NaN when no episode has a price, and the "Cost $" column only
when some run has one."""

from __future__ import annotations

import math

import pandas as pd

from statelab.analysis import summarise
from statelab.analysis._table import to_markdown


def _ep(run: str, seed: int, rollout: int, cost: float | None, status: str = "done",
        score: float | None = 0.5) -> dict:  # fmt: skip
    return {
        "run": run, "env": "hanoi", "agent": "act", "history": run, "seed": seed,
        "grp": seed, "rollout": rollout, "status": status, "score": score, "success": False,
        "steps": 2, "agent_calls": 2, "agent_in": 100, "agent_out": 10, "aux_in": 0,
        "aux_out": 0, "cost": cost,
    }  # fmt: skip


def test_cost_sums_every_episode_failed_ones_included() -> None:
    rows = [
        _ep("full", 0, 0, 0.25), _ep("full", 0, 1, 0.5), _ep("full", 1, 0, 1.0),
        _ep("full", 2, 0, 0.125, status="failed", score=0.0),  # a failed seed: paid for
        _ep("full", 3, 0, 2.0, score=None),  # unscored: paid for
        _ep("summary", 0, 0, None), _ep("summary", 1, 0, None),  # no price known
    ]  # fmt: skip
    s = summarise(pd.DataFrame(rows), {"history": "full"}).set_index("history")
    assert s.loc["full", "cost"] == 0.25 + 0.5 + 1.0 + 0.125 + 2.0
    assert s.loc["full", "n"] == 2 and s.loc["full", "failed"] == 1  # figures skip them
    assert math.isnan(s.loc["summary", "cost"])
    md = to_markdown(s.reset_index(), "t")
    assert "Cost $" in md and "| 3.8750 |" in md and "| – |" in md


def test_no_cost_column_without_a_price() -> None:
    rows = [_ep("full", 0, 0, None), _ep("summary", 0, 0, None)]
    s = summarise(pd.DataFrame(rows), {"history": "full"})
    assert "Cost $" not in to_markdown(s, "t")
