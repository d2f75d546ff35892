"""Issue 25 item 5: live progress. The tracker's figures (per-run done/total, running mean,
tokens, cost; episodes in flight with their current step), the heartbeat a long episode
prints in logs, the rich view on a terminal, and the episode loop feeding each step."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

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

    def step(self: Tracker, handle: int, steps: int, *usage: Any) -> None:
        seen.setdefault(handle, []).append(steps)
        real(self, handle, steps, *usage)

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


# -- issue 37: labels that fit, tokens and failures as they happen, the ETA, Ctrl-C -------

SPEC = "openai-compat:http://127.0.0.1:18431/v1#smol?template={}&temperature=0.7&max_tokens=256"
GRID = [f"hanoi | {SPEC.format(t)} | act" for t in ("chatml", "llama3", "none")]


def _render(view: LiveProgress, width: int = 80) -> list[str]:
    from rich.console import Console

    console = Console(record=True, width=width, file=io.StringIO())
    console.print(view.render())
    return console.export_text().splitlines()


def test_runs_sharing_a_long_model_spec_get_three_distinct_short_labels() -> None:
    short, shared = live.distinct_labels(GRID, width=30)
    assert sorted(short.values()) == ["…template=chatml…", "…template=llama3…", "…template=none…"]
    assert shared.startswith("hanoi | openai-compat:http://127.0.0.1:18431/v1#smol?…&temp")
    assert shared.endswith(" | act")
    # a grid whose runs differ in a short part keeps just that part
    short, shared = live.distinct_labels(["hanoi | act | full", "hanoi | act | oracle-summary"])
    assert short == {"hanoi | act | full": "full", "hanoi | act | oracle-summary": "oracle-summary"}
    assert shared == "hanoi | act"
    # one run: nothing to drop; cut in its middle to the width
    (only,), shared = live.distinct_labels([GRID[0]], width=24)[0].values(), ""
    assert len(only) == 24 and only.startswith("hanoi") and only.endswith("tokens=256 | act")


def test_labels_stay_distinct_and_within_the_width() -> None:
    labels = [f"{'x' * 50}{i}{'y' * 50}" for i in range(3)]  # differ in the middle only
    short, _ = live.distinct_labels(labels, width=20)
    assert len(set(short.values())) == 3 and all(len(s) <= 20 for s in short.values())
    subset = ["hanoi | act", "hanoi | act | reflect"]  # one label is all shared parts
    short, _ = live.distinct_labels(subset)
    assert short["hanoi | act | reflect"] == "reflect" and short["hanoi | act"] == "hanoi | act"


def test_the_live_view_at_80_columns_shows_each_run_once_on_one_line() -> None:
    clock = Clock()
    t = Tracker({label: 3 for label in GRID}, model_total=9, clock=clock)
    for label in GRID:
        t.step(t.started(label, 0, 0), 2, 1000, 50)
    out = io.StringIO()
    view = LiveProgress(t, out, width=80)
    summary = "interrupted: 0 of 9 episodes done, 3 in flight lost; a rerun resumes with the 9 left"
    view.say(summary)
    view.close()  # the summary follows the display, in full
    assert out.getvalue().splitlines()[-1] == summary
    lines = _render(view)
    assert all(len(line) <= 80 for line in lines)
    rows = [line for line in lines if "0/3" in line]
    assert len(rows) == 3  # a row per run, none wrapped
    assert [r.split()[0] for r in rows] == ["…template=chatml…", "…template=llama3…",
                                            "…template=none…"]  # fmt: skip
    assert any(line.startswith("all runs: hanoi | openai-compat:") for line in lines)


def test_tokens_rise_with_each_step_before_any_episode_finishes() -> None:
    clock = Clock()
    t = Tracker({"a": 2}, model_total=2, clock=clock)
    h = t.started("a", 0, 0)
    t.step(h, 1, 300, 20, 0.01)
    assert (t.tin, t.tout, t.runs["a"].tokens) == (300, 20, 320) and t.cost == 0.01
    t.step(h, 2, 700, 45, 0.03)  # the episode's totals so far: only what is new is added
    assert (t.tin, t.tout, t.runs["a"].tokens) == (700, 45, 745)
    assert t.cost == pytest.approx(0.03) and t.n == 0
    out = io.StringIO()
    view = PlainProgress(t, out)
    clock.now += 61
    view.tick()
    assert "tokens in=700 out=45 cost=$0.0300" in out.getvalue()  # the heartbeat says so
    ep = EpisodeRecord(run="r", seed=0, status="done", score=1.0, steps=3,
                       agent_in=800, agent_out=50, aux_in=100, aux_out=5, cost=0.05)  # fmt: skip
    t.finished(h, "a", ep, True)  # its record's totals replace what the steps told
    assert (t.tin, t.tout, t.runs["a"].tokens) == (900, 55, 955)
    assert t.cost == pytest.approx(0.05) and t.runs["a"].cost == pytest.approx(0.05)


def test_the_first_failure_and_its_reason_show_when_it_happens() -> None:
    clock = Clock()
    t = Tracker({label: 3 for label in GRID}, model_total=9, clock=clock)
    view = LiveProgress(t, io.StringIO(), width=80)
    h = t.started(GRID[1], 4, 0)
    assert not any("failed" in line for line in _render(view))
    failed = EpisodeRecord(run="r", seed=4, status="failed", steps=2,
                           error="ModelError: HTTP 500")  # fmt: skip
    t.finished(h, GRID[1], failed, True)
    t.finished(None, GRID[2], EpisodeRecord(run="r", seed=5, status="failed", error="later"),
               True)  # fmt: skip
    view.close()
    lines = _render(view)
    (line,) = [x for x in lines if x.startswith("✗")]
    assert line == "✗ 2 failed; first: …template=llama3… seed=4: ModelError: HTTP 500"
    assert any(x.startswith("…template=llama3…") and "✗1" in x for x in lines)
    out = io.StringIO()  # the plain view: the failure's line, and the count in each bracket
    plain = PlainProgress(t, out)
    plain.episode(GRID[1], failed)
    assert out.getvalue().startswith("[2/9, 2 failed] ")
    assert "FAILED after 2 steps: ModelError: HTTP 500 |" in out.getvalue()


def test_the_eta_comes_from_the_steps_played_before_any_episode_finishes() -> None:
    clock = Clock()
    t = Tracker({"a": 4}, model_total=4, clock=clock, budgets={"a": 10})
    assert t.eta() == "?"
    h1, h2 = t.started("a", 0, 0), t.started("a", 1, 0)
    clock.now += 40
    t.step(h1, 4)
    t.step(h2, 4)
    # 8 steps in 40 s: 0.2 steps/s; left: 6 + 6 in flight and 10 + 10 not started = 32 steps
    assert t.eta_s() == pytest.approx(160.0) and t.eta() == "2m40s"
    t.finished(h1, "a", EpisodeRecord(run="r", seed=0, status="done", score=1.0, steps=5), True)
    clock.now += 10
    # 9 steps (5 finished, 4 in flight) in 50 s; episodes of this run play 5 steps:
    # left 1 (in flight) + 5 + 5 = 11 steps at 0.18/s
    assert t.eta_s() == pytest.approx(11 / (9 / 50))
    t.step(h2, 7)  # past the mean: nothing left of it is counted
    assert t.eta_s() == pytest.approx(10 / (12 / 50))


def test_model_free_runs_do_not_slow_the_eta() -> None:
    clock = Clock()
    t = Tracker({"m": 1, "random": 5}, model_total=1, clock=clock, budgets={"m": 10},
                model_runs={"m"})  # fmt: skip
    h = t.started("m", 0, 0)
    t.step(t.started("random", 0, 0), 50)
    clock.now += 10
    t.step(h, 5)
    assert t.eta_s() == pytest.approx(10.0)  # 5 steps in 10 s, 5 left


def _interrupted_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config of 3 Hanoi episodes (a scripted model) whose run gets a Ctrl-C (SIGINT) at
    the second step of its second episode."""
    import signal

    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Action: Move the top disk of rod B to the top of rod A"]))
    cfg = tmp_path / "e.yaml"
    cfg.write_text(
        f"name: e\nmodel: scripted:{script}\nseeds: [0, 1, 2]\nmax_steps: 4\nout: {tmp_path}\n"
        "random: false\nexpert: false\nconcurrency: 1\ncache: null\ngrid: {env: [hanoi]}\n"
    )
    real = live.Tracker.step

    def step(self: Tracker, handle: int, steps: int, *usage: Any) -> None:
        real(self, handle, steps, *usage)
        if handle == 2 and steps == 2:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(live.Tracker, "step", step)
    return cfg


@pytest.mark.parametrize("quiet", [False, True])
def test_ctrl_c_prints_what_was_done_and_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quiet: bool
) -> None:
    from typer.testing import CliRunner

    from statelab.cli import app

    cfg = _interrupted_run(tmp_path, monkeypatch)
    res = CliRunner().invoke(app, ["run", str(cfg), *(["--quiet"] if quiet else [])])
    assert res.exit_code == 130, res.output
    summary = "interrupted: 1 of 3 episodes done, 1 in flight lost; a rerun resumes with the 2 left"
    lines = res.stderr.splitlines()
    assert lines.count(summary) == 1 and lines[-1] == summary
    assert ("[1/3] hanoi | scripted:" in res.stderr) is not quiet
    monkeypatch.undo()
    again = CliRunner().invoke(app, ["run", str(cfg), "--quiet"])
    assert again.exit_code == 0 and "2 episodes done, 0 failed, 1 already done" in again.output


def test_run_sync_raises_interrupted_with_the_partial_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from statelab.run.config import load_experiment
    from statelab.run.runner import Interrupted

    exp = load_experiment(_interrupted_run(tmp_path, monkeypatch), [], None)
    out = io.StringIO()
    with pytest.raises(Interrupted) as stop:
        run_sync(exp, progress=out)
    res = stop.value.result
    assert (res.total, res.done, res.lost) == (3, 1, 1)
    assert out.getvalue().splitlines()[-1] == str(stop.value)


def test_model_runs_drop_what_they_share_beside_random_and_expert() -> None:
    labels = [*GRID, "hanoi | random", "hanoi | expert"]
    short, shared = live.distinct_labels(labels, width=30, group=set(GRID))
    assert short["hanoi | random"] == "random" and short["hanoi | expert"] == "expert"
    assert short[GRID[0]] == "…template=chatml…"
    assert shared.startswith("hanoi | openai-compat:") and shared.endswith(" | act")


def test_a_ctrl_c_an_env_call_swallowed_stops_the_episode_at_its_next_step() -> None:
    import asyncio

    from statelab.run._live import STEP_HOOK, Progress

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        bar = Progress({"a": 1}, 1, None)
        with bar.playing("a", 0, 0):
            hook = STEP_HOOK.get()
            assert hook is not None
            hook(1, EpisodeRecord(run="r", seed=0, status="done", agent_in=10))  # plays on
            task.cancel()  # asked (as asyncio.run does at a Ctrl-C), not delivered
            with pytest.raises(asyncio.CancelledError):
                hook(2, EpisodeRecord(run="r", seed=0, status="done", agent_in=20))
        with pytest.raises(asyncio.CancelledError):  # the request itself, delivered
            await asyncio.sleep(0)
        task.uncancel()
        assert bar.tracker.tin == 20 and bar.in_flight == 1

    asyncio.run(main())
