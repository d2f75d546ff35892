"""Issue 25 item 5: live progress. The tracker's figures (per-run done/total, running mean,
tokens, cost; episodes in flight with their current step), the heartbeat a long episode
prints in logs, the rich view on a terminal, and the episode loop feeding each step."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

import statelab.run._live as live
from statelab.run._live import LiveProgress, PlainProgress, Tracker, wants_live
from statelab.run.config import parse_experiment
from statelab.run.records import EpisodeRecord
from statelab.run.runner import run_sync


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _ep(seed: int, score: float, status: str = "done", cost: float | None = None) -> EpisodeRecord:
    return EpisodeRecord(run="r", seed=seed, status=status, score=score, steps=3,
                         agent_in=100, agent_out=10, cost=cost)  # fmt: skip


def test_tracker_figures_and_the_heartbeat_name_the_slowest_step() -> None:
    clock = Clock()
    t = Tracker({"a": 4, "b": 2}, model_total=6, clock=clock)
    h1 = t.started("a", 0, 0)
    clock.now += 5
    h2 = t.started("b", 3, 1)
    t.step(h1, 17)
    t.step(h2, 2)
    t.finished(h2, "b", _ep(3, 0.5, cost=0.25), True)
    t.finished(None, "b", _ep(4, 0.0, status="failed"), True)
    assert t.runs["b"].done == 2 and t.runs["b"].failed == 1 and t.runs["b"].mean == 0.5
    assert t.runs["b"].tokens == 220 and t.runs["b"].cost == 0.25 and t.cost == 0.25
    assert math.isnan(t.runs["a"].mean) and t.runs["a"].cost is None
    out = io.StringIO()
    view = PlainProgress(t, out)
    clock.now += 125
    view.tick()  # silent for 125 s > 60 s: one heartbeat
    (line,) = out.getvalue().splitlines()
    assert "still playing: 1 episodes in flight" in line
    assert "slowest: a seed=0 at step 17 (2m10s)" in line
    view.tick()  # just said something: no second heartbeat
    assert len(out.getvalue().splitlines()) == 1


def test_plain_lines_carry_cost_only_when_known() -> None:
    t = Tracker({"a": 2}, model_total=2, clock=Clock())
    out = io.StringIO()
    view = PlainProgress(t, out)
    t.finished(None, "a", _ep(0, 1.0), True)
    view.episode("a", _ep(0, 1.0))
    t.finished(None, "a", _ep(1, 1.0, cost=0.5), True)
    view.episode("a", _ep(1, 1.0, cost=0.5))
    first, second = out.getvalue().splitlines()
    assert "cost=" not in first and "cost=$0.5000" in second and second.startswith("[2/2] a seed=1")


def test_the_live_view_draws_each_run_and_the_slowest_episode() -> None:
    from rich.console import Console

    clock = Clock()
    t = Tracker({"hanoi | act": 4}, model_total=4, clock=clock)
    t.step(t.started("hanoi | act", 2, 0), 9)
    t.finished(None, "hanoi | act", _ep(0, 0.25, cost=0.125), True)
    t.finished(None, "hanoi | act", _ep(1, 0.75), True)
    clock.now += 61
    view = LiveProgress(t, io.StringIO())
    view.close()
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(view.render())
    text = console.export_text()
    assert "hanoi | act" in text and "2/4" in text and "0.50" in text
    assert "220" in text and "0.1250" in text
    assert "slowest: hanoi | act seed=2 step 9 (1m01s)" in text


def test_live_only_on_a_terminal_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert wants_live(Tty()) and not wants_live(io.StringIO()) and not wants_live(None)
    monkeypatch.setenv("CI", "1")
    assert not wants_live(Tty())


def test_the_episode_loop_reports_every_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Action: Move the top disk of rod B to the top of rod A"]))
    seen: dict[int, list[int]] = {}
    real = live.Tracker.step

    def step(self: Tracker, handle: int, steps: int) -> None:
        seen.setdefault(handle, []).append(steps)
        real(self, handle, steps)

    monkeypatch.setattr(live.Tracker, "step", step)
    exp = parse_experiment({
        "name": "beat", "random": False, "expert": False, "model": f"scripted:{script}",
        "seeds": [0, 1], "grid": {"env": ["hanoi"]}, "out": str(tmp_path / "r"),
        "cache": None, "max_steps": 4,
    })  # fmt: skip
    out = io.StringIO()
    assert run_sync(exp, progress=out).done == 2
    assert sorted(seen.values()) == [[1, 2, 3, 4], [1, 2, 3, 4]]
    lines = out.getvalue().splitlines()
    assert [x.split("]")[0] for x in lines if "score=" in x] == ["[1/2", "[2/2"]
