"""Seed 003's command fractions (Table 5's "commands" column) read from a store."""

from __future__ import annotations

import pytest


def test_command_fractions_of_a_store(tmp_path):
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync
    from statelab_seed003.analysis.phrases import command_fractions

    replies = tmp_path / "replies.txt"
    replies.write_text("Take carrot. The fridge is north.\n")
    exp = parse_experiment(
        {
            "name": "phrases",
            "model": f"scripted:{replies}",
            "seeds": [0],
            "max_steps": 3,
            "grid": {"env": ["hanoi:3"], "agent": ["act"], "history": ["bounded:summary:64"]},
            "expert": False,
            "random": False,
            "out": str(tmp_path),
        }
    )
    run_sync(exp, progress=None)
    got = command_fractions(tmp_path / "phrases" / "store.sqlite")
    assert len(got) == 1
    (row,) = got.values()
    assert row["history"] == "bounded:summary:64"
    assert row["states"] >= 1
    assert row["command_fraction"] == pytest.approx(0.5)
