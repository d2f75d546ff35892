"""Reward within budget (seed 004): known answers from raw episodes and steps, and the report
section from a real store."""

import json
import math
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from statelab.analysis.budget import (
    FRACTIONS,
    budget_of,
    curve_mode,
    episode_curves,
    line_curves,
)

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


EP = ["run", "seed", "rollout", "budget", "mode", "success", "steps"]
ST = ["run", "seed", "rollout", "t", "reward"]


def test_a_won_or_lost_episode_reads_as_success_within_the_steps_not_its_reward():
    """Household and BabyAI: 1 once won within floor(f * T) steps, else 0; BabyAI's shaped
    reward (1 - 0.9 * 20 / 128 = 0.859 for a win at step 20) is not the value. Budget 64."""
    episodes = pd.DataFrame(
        [
            ("b", 0, 0, 64, "success", True, 20),  # won at step 20
            ("b", 1, 0, 64, "success", False, 10),  # derailed at step 10 (10 no-ops)
            ("b", 2, 0, 64, "success", False, 64),  # ran out of steps
            ("b", 3, 0, 64, "success", True, 64),  # won at the last step
        ],
        columns=EP,
    )
    steps = pd.DataFrame([("b", 0, 0, 20, 1 - 0.9 * 20 / 128)], columns=ST)
    f = (0.0, 0.3, 0.32, 0.5, 1.0)  # limits 0, 19, 20, 32, 64
    got = episode_curves(episodes, steps, f).set_index(["seed", "fraction"])["reward"]
    assert [got[(0, x)] for x in f] == [0.0, 0.0, 1.0, 1.0, 1.0]
    assert [got[(1, x)] for x in f] == [0.0] * 5
    assert [got[(2, x)] for x in f] == [0.0] * 5
    assert [got[(3, x)] for x in f] == [0.0, 0.0, 0.0, 0.0, 1.0]
    old = steps.assign(reward=steps.reward)  # the former reading: the sum of step rewards
    was = episode_curves(episodes[["run", "seed", "rollout", "budget"]], old, f)
    assert was[(was.seed == 0) & (was.fraction == 1.0)].reward.item() == pytest.approx(0.859375)


def test_a_scored_episode_holds_its_best_score_from_the_first_step_on():
    """ScienceWorld: the best score reached within the steps, held after the episode ends; a
    drop keeps the best. Within no step (fraction 0, or 0.05 of 10 steps) the value is 0, as
    the authors' ``anytime_return_at_fraction`` returns (issue 35 item 8: it was the first
    step's score, 0.25)."""
    episodes = pd.DataFrame(
        [("s", 0, 0, 10, "score", False, 6), ("s", 1, 0, 10, "score", False, 3)], columns=EP
    )
    steps = pd.DataFrame(
        [("s", 0, 0, 1, 0.25), ("s", 0, 0, 5, 0.5)]
        + [("s", 0, 0, t, 0.0) for t in (2, 3, 4, 6)]
        + [("s", 1, 0, 1, 0.0), ("s", 1, 0, 2, 0.5), ("s", 1, 0, 3, -0.2)],
        columns=ST,
    )
    got = episode_curves(episodes, steps, F).set_index(["seed", "fraction"])["reward"]
    # limits 0, 2, 3, 7, 10
    assert [got[(0, f)] for f in F] == [0.0, 0.25, 0.25, 0.75, 0.75]
    at = episode_curves(episodes, steps, (0.0, 0.05, 0.1)).set_index(["seed", "fraction"])
    assert [at["reward"][(0, f)] for f in (0.0, 0.05, 0.1)] == [0.0, 0.0, 0.25]
    assert [got[(1, f)] for f in F] == [0.0, 0.5, 0.5, 0.5, 0.5]


def test_three_runs_give_the_mean_and_the_sd_over_runs_from_raw_episodes():
    """Two BabyAI seeds, three rollouts (runs); at f = 0.3 of 10 steps (3 steps): run 0 wins
    seed 0 at step 3 and loses seed 1 (0.5), run 1 wins seed 0 at step 9 (too late) and seed
    1 at step 2 (0.5), run 2 loses both (0): mean 1/3, SD sqrt(1/12); at the full budget
    0.5, 1.0, 0.0: mean 0.5, SD 0.5."""
    episodes = pd.DataFrame(
        [
            ("r", 0, 0, 10, "success", True, 3),
            ("r", 1, 0, 10, "success", False, 10),
            ("r", 0, 1, 10, "success", True, 9),
            ("r", 1, 1, 10, "success", True, 2),
            ("r", 0, 2, 10, "success", False, 4),
            ("r", 1, 2, 10, "success", False, 10),
        ],
        columns=EP,
    )
    curves = episode_curves(episodes, pd.DataFrame(columns=ST), (0.3, 1.0))
    runs = pd.DataFrame([("r", "none")], columns=["run", "line"])
    got = line_curves(curves, runs, ["line"]).set_index("fraction")
    assert got.loc[0.3, "mean"] == pytest.approx(1 / 3)
    assert got.loc[0.3, "sd"] == pytest.approx(math.sqrt(1 / 12))
    assert got.loc[1.0, "mean"] == pytest.approx(0.5) and got.loc[1.0, "sd"] == pytest.approx(0.5)
    assert got.loc[1.0, "n"] == 3


def test_the_curve_mode_follows_whether_the_env_gives_partial_credit():
    assert curve_mode("household") == "success" and curve_mode("babyai/goto") == "success"
    assert curve_mode("scienceworld/boil") == "score"


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
    # the numbers at the full budget: the share of episodes won (both envs give no partial
    # credit), read from the episodes table
    table = pd.DataFrame(json.loads((tmp_path / "report/reward_within_budget.json").read_text()))
    db = sqlite3.connect(store)
    won = pd.read_sql_query(
        "SELECT r.env, r.agent, e.seed, e.rollout, e.success AS total FROM episodes e"
        " JOIN runs r ON r.run = e.run",
        db,
    )
    db.close()
    won["family"] = won["env"].str.split("/").str[0]
    assert set(table.line) == {"none", "expert"}  # the random floor's runs are left out
    for (family, agent), part in won[won.agent != "random"].groupby(["family", "agent"]):
        line = "expert" if agent == "expert" else "none"
        row = table[(table.family == family) & (table.line == line) & (table.fraction == 1.0)]
        # the mean over rollouts of the per-rollout means (equal seeds per rollout)
        assert row["mean"].item() == pytest.approx(part["total"].mean())
        assert row["n"].item() == 2
    expert = table[(table.family == "babyai") & (table.line == "expert")]
    # 2 rollouts x 4 episodes, each rollout on instances of its own: a multiple of 1/8
    assert (expert[expert.fraction == 1.0]["mean"].item() * 8) % 1 == pytest.approx(0.0)
    assert len(table) == 2 * 2 * len(FRACTIONS)  # (env x line) x fractions


def test_the_section_stays_out_without_a_world_model_or_a_layout(tmp_path: Path):
    from statelab.analysis.budget import reward_within_budget
    from statelab.run.store import Store

    store = Store(tmp_path / "s.sqlite", axes=("env", "worldmodel"))
    store.save_experiment("x", {})
    store.save_run("r", "r", {"env": "hanoi", "worldmodel": "none"}, {"max_steps": None})
    store.close()
    assert reward_within_budget(tmp_path / "s.sqlite", tmp_path) == ("", {})
