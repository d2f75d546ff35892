"""benchmarks/seed_workload.py: the work of a DSSR round measured from the cooking games (issue
35 item 4): counts by hand on a constructed trajectory, and on the expert's real games the
options a decision, the window prompts' growth, Phase-A roll-forwards and the shipped config's
points, each checked against what the test reads off the env itself."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("textworld")

ROOT = Path(__file__).parents[4]


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _words() -> Any:
    """A counter whose token is a whitespace-separated word, the chat its contents joined."""
    return (lambda msgs: "\n".join(m["content"] for m in msgs)), (lambda t: len(t.split()))


def _hand_trajectory() -> Any:
    """Two prelude steps, then four Phase-B steps of 3, 5, 2 and 4 commands, a* at each."""
    from statelab.core import Observation, Transition
    from statelab.state.bounded import BoundedWriter, WrittenState
    from statelab_seed003.train.data import Decision, Trajectory

    def obs(text: str, n: int) -> Observation:
        return Observation(text=text, facts=None, admissible=tuple(f"do {i}" for i in range(n)),
                           goal="cook")  # fmt: skip

    w = BoundedWriter(lambda o: o.text, "summary", 8, seed=7)
    state = WrittenState(goal="cook", text="a b c d")
    prelude = [Transition(0, "look", "look", 0.0, obs("room one", 0), False, False),
               Transition(0, "read", "read", 0.0, obs("the recipe", 0), False, False)]  # fmt: skip
    traj = Trajectory(run="r", seed=0, history="bounded:summary:8", manual="manual",
                      render_obs=lambda o: o.text, memory=w, prelude=prelude,
                      prelude_states=[state, state], reveal=1)  # fmt: skip
    for t, n in enumerate((3, 5, 2, 4)):
        o = obs(f"step {t} here", n)
        tr = Transition(t, "do 0", "do 0", 0.0, obs(f"after {t}", n), False, False)
        traj.steps.append(Decision(t, o, state, w.render(state), o.admissible, "do 0", "do 0", tr))
    return traj


def test_a_phase_b_points_calls_counted_by_hand() -> None:
    from statelab_seed003.train.dssr import At

    wl = _load("seed_workload")
    traj = _hand_trajectory()
    # point b0, K = 2: decisions 1 and 2 after it; one roll-forward write (step 1's) between
    got = wl.point_work(traj, At("b", 0), _words(), candidates=3, k=2, reply=10)
    assert got["decisions"] == 2 and got["write_steps"] == 2
    assert got["writes"] == 3 * 2
    assert got["scorings"] == 3 * 2 * 2  # recursive and window at each decision
    assert got["option_rows"] == 3 * 2 * (5 + 2)  # each scoring lists its decision's commands
    assert got["option_tokens"] == 3 * 2 * (5 + 2) * 3  # "1. do 0": three words an option


def test_a_phase_a_points_roll_forward_holds_the_rest_of_the_prelude() -> None:
    from statelab_seed003.train.dssr import At

    wl = _load("seed_workload")
    traj = _hand_trajectory()
    # point a0, K = 2: decisions 0 and 1; the rest of the prelude (1 write), then step 0's
    got = wl.point_work(traj, At("a", 0), _words(), candidates=2, k=2, reply=10)
    assert got["decisions"] == 2 and got["write_steps"] == 1 + 1 + 1
    assert got["option_rows"] == 2 * 2 * (3 + 5)
    b = wl.point_work(traj, At("b", 0), _words(), candidates=2, k=2, reply=10)
    # a window prompt holds the raw steps since the write: "Steps since:" (2 words), then a
    # Phase-A point's prelude rest "> read / the recipe" (4) and at decision 1 step 0's
    # "> do 0 / after 0" (5); a Phase-B point's at decision 1 nothing (no step since: the
    # candidate alone), at decision 2 step 1's (2 + 5); each for 2 candidates
    assert got["window_extra"] == 2 * ((2 + 4) + (2 + 4 + 5))
    assert b["window_extra"] == 2 * (0 + (2 + 5))
    assert got["phase_a"] and not b["phase_a"]


def test_window_prompts_grow_with_the_look_ahead() -> None:
    from statelab_seed003.train.dssr import At

    wl = _load("seed_workload")
    traj = _hand_trajectory()
    w = [wl.point_work(traj, At("b", 0), _words(), candidates=1, k=k, reply=10) for k in (1, 3)]
    # K = 1: decision 1 only (window = recursive: no step since); K = 3: decisions 1, 2, 3
    assert (w[0]["decisions"], w[1]["decisions"]) == (1, 3)
    # the window adds nothing at decision 1, then "Steps since:" and one step more each decision
    # (2 + 5 words at decision 2, 2 + 5 + 5 at decision 3); the recursive prompt stays one state
    assert (w[0]["window_extra"], w[1]["window_extra"]) == (0, (2 + 5) + (2 + 5 + 5))


def test_the_round_cost_of_measured_work_is_the_formula_on_its_own_numbers() -> None:
    cost = _load("_seed_cost")
    work = {"writes": 24, "write_steps": 2, "fork_prompt": 100, "write_prompt": 2400,
            "reply": 160, "scorings": 48, "score_prompt": 48 * 500, "option_rows": 48 * 30,
            "option_tokens": 48 * 30 * 5, "shared": 0}  # fmt: skip
    got = cost.round_cost(work, 1000)
    prefill = 2400 + 48 * 500 + 48 * 30 * 5
    assert got["prefill_tokens_per_point"] == prefill
    # one at a time: 24 writes of 1 + 160 passes, 48 prompt passes and one per option row
    assert got["unbatched"]["passes_per_point"] == 24 * 161 + 48 + 48 * 30
    # batched: 2 write steps of 161 passes; 1,440 rows x (500 + 5) tokens in 3 groups of 262,144
    assert got["batched"]["passes_per_point"] == 2 * 161 + 2 * 3
    secs = (2 * 161 + 6) / 25 + (prefill - 11 * 100) / 20000
    assert got["batched"]["gpu_hours_per_round"] == pytest.approx(secs * 1000 / 3600, abs=0.1)


def test_the_tuned_rates_are_the_h200_floors() -> None:
    cost = _load("_seed_cost")
    r = cost.tuned_rates()
    weights = 2 * 4_022_468_096
    kv = 192 * 460 * 36 * 2 * 8 * 128 * 2
    assert r["passes_per_s"] == pytest.approx(4.8e12 / (weights + kv))
    assert 8.5 < r["passes_per_s"] / cost.GPU["passes_per_s"] < 9.5  # about 9x the stated
    assert r["prefill_tokens_per_s"] / cost.GPU["prefill_tokens_per_s"] == pytest.approx(
        2.46, abs=0.01
    )


def test_on_the_experts_games_the_inputs_are_what_the_env_shows() -> None:
    from statelab.envs import make_env

    wl = _load("seed_workload")
    games, lags = [0, 1], [0, 10]
    got = wl.workload(games, lags, _words(), budget=16, candidates=2, k=12, points=4)
    # the options a decision, read off the env by playing its expert here
    seen: list[int] = []
    prelude = 0
    for lag in lags:
        env = make_env(f"cooking:lag={lag}")
        for g in games:
            obs, info = env.reset(seed=g)
            prelude += len(info["prelude"])
            policy, done = env.expert(), False
            while not done:
                seen.append(len(obs.admissible or ()))
                obs, _, term, trunc, info = env.step(policy.act(obs, info))
                done = term or trunc
        env.close()
    o = got["options"]
    assert o["decisions"] == len(seen)  # every expert step is a decision (a* is its action)
    assert (o["min"], o["max"]) == (min(seen), max(seen))
    assert o["mean"] == pytest.approx(sum(seen) / len(seen), abs=0.05)
    assert o["mean"] > 4  # not the 4 options the formula assumed
    assert got["prelude_steps"] == pytest.approx(prelude / 4)
    assert got["episodes"] == 4 and got["points"] == 4 * 4
    # both phases are drawn, as the writer job draws them (a seeded draw from the same pool)
    assert 0 < got["phase_a_points"] < got["points"]
    a, b = got["mean_phase_a"], got["mean_phase_b"]
    assert a["write_steps"] > b["write_steps"]  # Phase A rolls the rest of the prelude forward
    assert b["option_rows"] / b["scorings"] > 4 and b["window_extra"] > 0


def test_the_shipped_configs_round_draws_its_episodes_times_its_points() -> None:
    wl = _load("seed_workload")
    collect = yaml.safe_load((ROOT / "configs/seed003/train_collect_gpu.yaml").read_text())
    writer = yaml.safe_load((ROOT / "configs/seed003/train_writer_a4_gpu.yaml").read_text())
    # 240 train games x F' {0, 10, 20, 40}, one history of nine read (bounded:summary:128), 4 each
    assert wl.shipped_points(collect, writer, 240) == 240 * 4 * 1 * 4 == 3840
