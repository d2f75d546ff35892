import gymnasium as gym
import pytest

from statelab.core import Observation
from statelab.envs import GYM_IDS, make_env
from statelab.envs.checker import check_env
from statelab.envs.hanoi import ACTIONS, HanoiEnv, shortest_solution
from statelab.facts import PegFacts


def step(env: HanoiEnv, src: str, dst: str):
    return env.step(f"Move the top disk of rod {src} to the top of rod {dst}")


def test_six_actions_in_smartplay_order():
    assert ACTIONS == (
        "Move the top disk of rod A to the top of rod B",
        "Move the top disk of rod A to the top of rod C",
        "Move the top disk of rod B to the top of rod A",
        "Move the top disk of rod B to the top of rod C",
        "Move the top disk of rod C to the top of rod A",
        "Move the top disk of rod C to the top of rod B",
    )


def test_reset_state_and_text():
    env = HanoiEnv()
    obs, info = env.reset(seed=0)
    assert obs.facts == PegFacts(((2, 1, 0), (), ()))
    assert obs.text == (
        "Current configuration:\n- A: |bottom, [2, 1, 0], top|\n"
        "- B: |bottom, [], top|\n- C: |bottom, [], top|"
    )
    assert obs.admissible == ACTIONS
    assert info["score"] == 0.0 and info["success"] is False and info["steps"] == 0


def test_legal_move_changes_state():
    env = HanoiEnv()
    env.reset(seed=0)
    obs, reward, term, trunc, info = step(env, "A", "C")
    assert obs.facts.pegs == ((2, 1), (), (0,))
    assert reward == 0.0 and not term and not trunc and info["valid"]
    assert info["score"] == pytest.approx(1 / 3)  # one of three disks on C


def test_bigger_on_smaller_is_rejected_with_feedback():
    env = HanoiEnv()
    env.reset(seed=0)
    step(env, "A", "C")
    obs, reward, *_rest, info = step(env, "A", "C")  # disk 1 onto disk 0
    assert reward == -1.0 and info["valid"] is False
    assert obs.facts.pegs == ((2, 1), (), (0,))
    assert "illegal" in obs.feedback and "smaller disk 0" in obs.feedback


def test_empty_rod_and_garbage_are_invalid():
    env = HanoiEnv()
    env.reset(seed=0)
    obs, reward, *_r, info = step(env, "B", "C")
    assert reward == -1.0 and "rod B is empty" in obs.feedback and not info["valid"]
    obs, reward, *_r, info = env.step("please solve it")
    assert reward == -1.0 and "not a valid action" in obs.feedback
    assert obs.facts.pegs == ((2, 1, 0), (), ())


def test_goal_rewards_100_and_terminates():
    env = HanoiEnv()
    obs, info = env.reset(seed=0)
    for a in shortest_solution(obs.facts.pegs):
        obs, reward, term, trunc, info = env.step(ACTIONS[a])
    assert term and not trunc and reward == 100.0
    assert info["success"] and info["score"] == 1.0 and info["steps"] == 7
    with pytest.raises(RuntimeError):
        env.step(ACTIONS[0])


def test_budget_truncates_at_30():
    env = HanoiEnv()
    env.reset(seed=0)
    for i in range(30):
        *_x, term, trunc, _info = env.step(ACTIONS[0] if i % 2 == 0 else ACTIONS[2])
    assert trunc and not term and env.steps == 30


def test_optimal_lengths():
    for n in range(1, 6):
        start = (tuple(range(n - 1, -1, -1)), (), ())
        assert len(shortest_solution(start)) == 2**n - 1


def test_expert_from_midgame_is_optimal():
    env = HanoiEnv()
    obs, info = env.reset(seed=0, options={"pegs": ((2,), (1,), (0,))})
    expert = env.expert()
    steps = 0
    while not env.success():
        obs, _, _, _, info = env.step(expert.act(obs, info))
        steps += 1
    assert steps == len(shortest_solution(((2,), (1,), (0,))))


def test_conformance_and_gymnasium_registration():
    check_env(HanoiEnv())
    check_env(HanoiEnv(n_disks=4))
    assert GYM_IDS["hanoi"] == "statelab/Hanoi-v0"
    env = gym.make("statelab/Hanoi-v0").unwrapped
    assert isinstance(env, HanoiEnv)
    obs, _ = env.reset(seed=0)
    assert isinstance(obs, Observation)
    assert make_env("hanoi:4").n == 4
