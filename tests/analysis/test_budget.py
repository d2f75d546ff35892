"""Reward within budget (seed 004): known answers from raw episodes and steps, and the report
section from a real store."""

import json
import math
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from statelab.analysis.budget import FRACTIONS, budget_of, episode_curves, line_curves

F = (0.0, 0.2, 0.3, 0.7, 1.0)


def test_an_episode_reaches_the_sum_of_its_rewards_within_each_fraction():
    # budget 10: A earns 0.5 at steps 3 and 7; B wins at step 2 and stops; C earns nothing
    episodes = pd.DataFrame(
        [("r", 0, 0, 10), ("r", 1, 0, 10), ("r", 2, 0, 10)],
        columns=["run", "seed", "rollout", "budget"],
    )
    steps = pd.DataFrame(
        [("r", 0, 0, t, 0.5 if t in (3, 7) else 0.0) for t in range(1, 11)]
        + [("r", 1, 0, 1, 0.0), ("r", 1, 0, 2, 1.0)]
        + [("r", 2, 0, t, 0.0) for t in range(1, 11)],
        columns=["run", "seed", "rollout", "t", "reward"],
    )
    got = episode_curves(episodes, steps, F).set_index(["seed", "fraction"])["reward"]
    # fraction f reads the first floor(f * 10) steps: 0, 2, 3, 7, 10
    assert [got[(0, f)] for f in F] == [0.0, 0.0, 0.5, 1.0, 1.0]
    assert [got[(1, f)] for f in F] == [0.0, 1.0, 1.0, 1.0, 1.0]  # kept after it ended
    assert [got[(2, f)] for f in F] == [0.0] * 5


def test_floor_of_the_fraction_of_an_odd_budget():
    episodes = pd.DataFrame([("r", 0, 0, 15)], columns=["run", "seed", "rollout", "budget"])
    steps = pd.DataFrame([("r", 0, 0, 7, 1.0)], columns=["run", "seed", "rollout", "t", "reward"])
    got = episode_curves(episodes, steps, (0.45, 0.5)).set_index("fraction")["reward"]
    assert got[0.45] == 0.0 and got[0.5] == 1.0  # floor(6.75) = 6 < 7 <= floor(7.5) = 7


def test_a_line_is_the_mean_over_repetitions_of_all_its_episodes_with_their_sd():
    # "belief" spans two runs (two tasks of one family) and three rollouts (repetitions)
    curves = pd.DataFrame(
        [
            # run, seed, rollout, fraction, reward
            ("b1", 0, 0, 1.0, 1.0),
            ("b2", 0, 0, 1.0, 0.0),  # repetition 0: 0.5
            ("b1", 0, 1, 1.0, 1.0),
            ("b2", 0, 1, 1.0, 1.0),  # repetition 1: 1.0
            ("b1", 0, 2, 1.0, 0.0),
            ("b2", 0, 2, 1.0, 0.0),  # repetition 2: 0.0
            ("n", 0, 0, 1.0, 0.25),
            ("n", 1, 0, 1.0, 0.75),  # one repetition: 0.5
        ],
        columns=["run", "seed", "rollout", "fraction", "reward"],
    )
    runs = pd.DataFrame(
        [("b1", "belief"), ("b2", "belief"), ("n", "none")], columns=["run", "line"]
    )
    got = line_curves(curves, runs, ["line"]).set_index("line")
    assert got.loc["belief", "mean"] == pytest.approx(0.5)
    assert got.loc["belief", "sd"] == pytest.approx(0.5)  # sd of (0.5, 1.0, 0.0), ddof 1
    assert got.loc["belief", "n"] == 3
    assert got.loc["none", "mean"] == pytest.approx(0.5)
    assert math.isnan(got.loc["none", "sd"]) and got.loc["none", "n"] == 1


def test_the_budget_is_the_runs_own_else_the_envs():
    assert budget_of({"max_steps": 7}, "hanoi") == 7
    from statelab.envs import env_class

    assert budget_of({"max_steps": None}, "hanoi") == env_class("hanoi").max_steps


def test_the_report_section_draws_one_png_per_env_from_the_stored_steps(tmp_path: Path):
    from statelab.analysis.reporting import make_report
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["Action: xyzzy"]))
    exp = parse_experiment(
        {
            "name": "rwb",
            "model": f"scripted:{replies}",
            "seeds": [0, 1],
            "rollouts": 2,
            "grid": {"env": ["hanoi", "babyai/goto", "babyai/pickup"], "history": ["full"]},
            "max_steps": {"hanoi": 6, "babyai/goto": 5, "babyai/pickup": 4},
            "out": str(tmp_path),
            "cache": None,
            "report": {"reward_within_budget": True},
        }
    )
    assert run_sync(exp, progress=None).failed == 0
    store = exp.out_dir / "store.sqlite"
    report = make_report(store, tmp_path / "report")
    assert "## Reward within budget" in report.markdown
    for env in ("hanoi", "babyai"):  # the two BabyAI tasks make one family, one plot
        png = tmp_path / "report" / f"reward_within_budget_{env}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({png.name})" in report.markdown
    # the numbers at the full budget: the mean over episodes of their summed step rewards
    table = pd.DataFrame(json.loads((tmp_path / "report/reward_within_budget.json").read_text()))
    db = sqlite3.connect(store)
    sums = pd.read_sql_query(
        "SELECT r.env, r.agent, s.seed, s.rollout, SUM(s.reward) AS total FROM steps s"
        " JOIN runs r ON r.run = s.run GROUP BY s.run, s.seed, s.rollout",
        db,
    )
    db.close()
    sums["family"] = sums["env"].str.split("/").str[0]
    assert set(table.line) == {"none", "expert"}  # the random floor's runs are left out
    for (family, agent), part in sums[sums.agent != "random"].groupby(["family", "agent"]):
        line = "expert" if agent == "expert" else "none"
        row = table[(table.family == family) & (table.line == line) & (table.fraction == 1.0)]
        # the mean over rollouts of the per-rollout means (equal seeds per rollout)
        assert row["mean"].item() == pytest.approx(part["total"].mean())
        assert row["n"].item() == 2
    assert len(table) == 2 * 2 * len(FRACTIONS)  # (env x line) x fractions


def test_the_section_stays_out_without_a_world_model_or_a_layout(tmp_path: Path):
    from statelab.analysis.budget import reward_within_budget
    from statelab.run.store import Store

    store = Store(tmp_path / "s.sqlite", axes=("env", "worldmodel"))
    store.save_experiment("x", {})
    store.save_run("r", "r", {"env": "hanoi", "worldmodel": "none"}, {"max_steps": None})
    store.close()
    assert reward_within_budget(tmp_path / "s.sqlite", tmp_path) == ("", {})
