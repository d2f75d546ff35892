import gymnasium as gym
import numpy as np
import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import Observation
from statelab.envs import GYM_IDS, make_env
from statelab.envs.checker import check_env
from statelab.envs.traffic import TrafficEnv, parse_command
from statelab.envs.traffic_world import move_cars
from statelab.facts import TrafficFacts
from statelab.facts.traffic import COLOURS
from statelab.state import render
from statelab.tools.plots import png_bytes


def world(agent, cars, size=25, **kw):
    env = TrafficEnv(size=size, n_cars=len(cars), **kw)
    obs, info = env.reset(seed=0, options={"agent": agent, "cars": cars})
    return env, obs, info


def play_expert(env: TrafficEnv, seed: int) -> dict:
    obs, info = env.reset(seed=seed)
    expert = env.expert()
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(expert.act(obs, info))
        done = term or trunc
    return info


def test_parse_command():
    assert parse_command("DRDRD") == "DRDRD"
    assert parse_command(" drdrw. ") == "DRDRW"
    assert parse_command("down right, down right wait") == "DRDRW"
    assert parse_command("D R D R D") == "DRDRD"
    assert parse_command("up up up") is None
    assert parse_command("DRDRDR") is None
    assert parse_command("right") is None
    assert parse_command("go down") is None


def test_reset_defaults_and_no_admissible_list():
    env = TrafficEnv()
    obs, info = env.reset(seed=3)
    assert env.agent == (0, 0) and env.target == (24, 24)
    assert len(env.cars) == 25 and (0, 0) not in env.cars and (24, 24) not in env.cars
    assert obs.admissible is None and env.primitives == ("W", "U", "D", "L", "R")
    assert isinstance(obs.facts, TrafficFacts) and obs.facts.half == 10
    assert info["privileged"]["cars"] == env.cars and info["score"] == 0.0
    again, _ = env.reset(seed=3)
    assert again.text == obs.text


def test_cars_move_up_and_wrap():
    assert move_cars([(3, 4), (0, 2)], 25) == ((2, 4), (24, 2))
    env, *_ = world((12, 0), [(2, 24), (0, 23)])
    env.step("WWWWW")
    assert env.cars == ((22, 24), (20, 23))
    assert env.time == 5


def test_collision_car_enters_agent_cell():
    env, *_ = world((10, 10), [(11, 10)])
    obs, reward, term, trunc, info = env.step("WWWWW")
    assert term and not trunc and reward == 0.0
    assert not info["success"] and info["score"] == 0.0 and env.crashed
    assert "hit you at (10, 10) on action 1" in obs.feedback
    assert "X" in "".join(obs.facts.window_rows())


def test_collision_by_wrapping_car():
    env, *_ = world((24, 3), [(0, 3)])
    _obs, *_r, term, _t, _info = env.step("LWWWW")  # left first: the car wraps onto (24, 3)
    assert not term and env.agent == (24, 2)
    env2, *_ = world((24, 3), [(0, 3)])
    *_o, term, _t, _i = env2.step("WWWWW")
    assert term and env2.crashed


def test_collision_by_swapping_cells():
    env, *_ = world((10, 10), [(11, 10)])
    obs, *_r, term, _t, _i = env.step("DWWWW")  # agent down, car up: they swap
    assert term and env.crashed and "on action 1" in obs.feedback
    env, *_ = world((10, 10), [(12, 10)])
    *_o, term, _t, _i = env.step("RWWWW")  # sidestep: the car passes
    assert not term and env.agent == (10, 11)


def test_walls_absorb_moves():
    env, *_ = world((0, 0), [])
    obs, _reward, term, _trunc, info = env.step("UULLW")
    assert env.agent == (0, 0) and not term and info["valid"]
    assert "4 move(s) into the edge" in obs.feedback
    env, *_ = world((24, 22), [], target=(0, 24))
    env.step("RRRRD")
    assert env.agent == (24, 24)


def test_success_at_any_primitive_step_ends_the_episode():
    env, *_ = world((24, 20), [])
    obs, reward, term, _trunc, info = env.step("RRRRL")
    assert term and reward == 1.0 and info["success"] and info["score"] == 1.0
    assert env.agent == (24, 24) and "on action 4 of 5" in obs.feedback
    with pytest.raises(RuntimeError):
        env.step("WWWWW")


def test_invalid_command_changes_nothing_but_counts():
    env, _obs0, _ = world((5, 5), [(20, 5)])
    obs, reward, term, _trunc, info = env.step("go to the target")
    assert info["valid"] is False and reward == 0.0 and not term
    assert env.agent == (5, 5) and env.cars == ((20, 5),) and env.time == 0
    assert info["steps"] == 1 and "not a valid command" in obs.feedback


def test_budget_of_30_decisions():
    env, *_ = world((5, 5), [])
    for _ in range(30):
        *_o, term, trunc, info = env.step("WWWWW")
    assert trunc and not term and info["steps"] == 30 and not info["success"]


def test_partial_observation_hides_far_cars():
    _env, obs, info = world((0, 0), [(5, 5), (0, 20), (15, 3)])
    assert obs.facts.cars == ((5, 5),)
    rows = obs.facts.window_rows()
    assert len(rows) == 21 and all(len(r) == 21 for r in rows)
    assert rows[10][10] == "A" and rows[15][15] == "C"
    assert "".join(rows).count("C") == 1 and rows[0] == "#" * 21
    assert "(0, 20)" not in render("coordinates", obs.facts)
    assert "(0, 20)" not in render("natural", obs.facts)
    full = info["privileged"]["facts"]
    assert set(full.cars) == {(5, 5), (0, 20), (15, 3)}
    assert "(0, 20)" in render("natural", full)


def test_text_and_formats():
    _env, obs, _ = world((3, 4), [(5, 5)], size=8, half=2)
    assert obs.facts.window_rows() == (".....", ".....", "..A..", ".....", "...C.")
    assert obs.text.endswith(render("symbolic", obs.facts))
    assert render("coordinates", obs.facts) == (
        "agent: (3, 4)\ntarget: (7, 7)\ncars: (5, 5)\nwindow: rows 1 to 5, columns 2 to 6"
    )
    assert render("natural", obs.facts) == (
        "You are at (3, 4). The target is at (7, 7), 4 rows down and 3 columns right. "
        "Visible cars (rows 1 to 5, columns 2 to 6): (5, 5)."
    )
    _env, obs, _ = world((6, 6), [], size=8, half=2)
    assert obs.facts.window_rows()[4] == "#####"
    assert obs.facts.window_rows()[3] == "...T#"
    assert "No cars are visible" in render("natural", obs.facts)


def test_renders_are_uint8_images():
    env, _obs, _ = world((0, 0), [(1, 1), (20, 20)])
    full, window, zoom = env.render_full(scale=4), env.render_window(scale=4), env.render_zoom()
    assert full.dtype == np.uint8 and full.shape == (100, 100, 3)
    assert tuple(full[2, 2]) == COLOURS["agent"] and tuple(full[82, 82]) == COLOURS["car"]
    assert tuple(window[82, 82]) == COLOURS["unseen"]  # the car at (20, 20) is not seen
    assert tuple(window[98, 98]) == COLOURS["unseen"]
    assert zoom.shape == (7 * 32, 7 * 32, 3)
    assert tuple(zoom[3 * 32 + 5, 3 * 32 + 5]) == COLOURS["agent"]
    assert tuple(zoom[5, 5]) == COLOURS["wall"]
    assert png_bytes(zoom).startswith(b"\x89PNG\r\n\x1a\n")
    assert env.render_rgb().shape == env.render_window().shape


def test_conformance_and_gymnasium_registration():
    check_env(TrafficEnv())
    check_env(TrafficEnv(size=8, n_cars=3, half=3))
    assert GYM_IDS["traffic"] == "statelab/Traffic-v0"
    env = gym.make("statelab/Traffic-v0").unwrapped
    assert isinstance(env, TrafficEnv)
    obs, _ = env.reset(seed=0)
    assert isinstance(obs, Observation)
    assert isinstance(make_env("traffic"), TrafficEnv)


def test_expert_wins_95_percent_of_seeds_0_to_99():
    env = TrafficEnv()
    wins = sum(play_expert(env, seed)["success"] for seed in range(100))
    assert wins >= 95


def test_expert_replans_after_a_surprise():
    env, obs, info = world((0, 0), [(12, 12)])
    expert = env.expert()
    assert expert.act(obs, info) == "RRRRR"  # planned from (0, 0), ties to rights first
    obs, _, _, _, info = env.step("DDWWW")  # not its move: the plan is stale
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(expert.act(obs, info))
        done = term or trunc
    assert info["success"] and info["steps"] == 1 + 10


def test_cli_play_expert():
    res = CliRunner().invoke(app, ["play", "traffic", "--expert", "--seed", "0"])
    assert res.exit_code == 0, res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("score=1 success=true steps=")
    assert int(last.rsplit("=", 1)[1]) <= 30
