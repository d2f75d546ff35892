import re

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


# -- the manual and the feedback option (docs/fidelity.md) ---------------------------------
def test_manual_carries_smartplays_information_with_a_worked_example():
    m = HanoiEnv().manual
    # SmartPlay's worked example: from B (top 1) to C (top 2) is legal, to A (top 0) is not
    assert "- A: |bottom, [0], top|\n- B: |bottom, [1], top|\n- C: |bottom, [2], top|" in m
    assert "may move to C" in m and "not to A" in m
    for rule in ("one disk at a time", "top disk", "never be placed on top of a smaller disk"):
        assert rule in m
    start = "- A: |bottom, [2, 1, 0], top|\n- B: |bottom, [], top|\n- C: |bottom, [], top|"
    goal = "- A: |bottom, [], top|\n- B: |bottom, [], top|\n- C: |bottom, [2, 1, 0], top|"
    assert f"starting configuration is:\n{start}" in m and f"goal configuration is:\n{goal}" in m
    assert "bottom on the left, top on the right" in m
    assert make_env("hanoi:feedback=off").manual == m  # the option leaves the manual alone


def test_feedback_option_changes_exactly_the_feedback_line():
    on, off = make_env("hanoi"), make_env("hanoi:feedback=off")
    assert on.feedback is True and off.feedback is False
    assert on.reset(seed=0)[0] == off.reset(seed=0)[0]
    # legal, illegal (bigger on smaller, empty rod) and unrecognised moves, then a win
    actions = [ACTIONS[1], ACTIONS[1], ACTIONS[3], "fly away"]
    actions += [ACTIONS[a] for a in shortest_solution(((2, 1), (), (0,)))]
    seen = set()
    for act in actions:
        (o1, r1, t1, u1, i1), (o2, r2, t2, u2, i2) = on.step(act), off.step(act)
        assert (o1.facts, r1, t1, u1, i1) == (o2.facts, r2, t2, u2, i2)
        assert o2.feedback.startswith("You tried to ") and o2.feedback.endswith(".")
        assert o1.feedback.startswith(o2.feedback + " ")
        extra = o1.feedback.removeprefix(o2.feedback + " ")  # the one sentence "on" adds
        seen.add(extra.split(":")[0])
        assert o1.text.replace(o1.feedback, o2.feedback, 1) == o2.text
    assert seen == {
        "The move succeeded.",
        "That move is illegal",
        "That is not a valid action; nothing changed.",
    }
    assert on.success() and off.success()


def test_feedback_off_text_is_smartplays():
    env = make_env("hanoi:feedback=off")
    env.reset(seed=0)
    obs, *_ = step(env, "A", "C")
    assert obs.text == (
        "You tried to move the top disk of rod a to the top of rod c. Current configuration:\n"
        "- A: |bottom, [2, 1], top|\n- B: |bottom, [], top|\n- C: |bottom, [0], top|"
    )
    obs, reward, *_r, info = env.step("I give up")  # ours: an illegal move (SmartPlay: action 0)
    assert reward == -1.0 and not info["valid"] and obs.feedback == "You tried to I give up."


def test_expert_wins_with_feedback_off():
    env = make_env("hanoi:feedback=off")
    obs, info = env.reset(seed=0)
    expert, done = env.expert(), False
    while not done:
        obs, _, term, trunc, info = env.step(expert.act(obs, info))
        done = term or trunc
    assert info["success"] and info["steps"] == 7


@pytest.mark.parametrize(
    ("spelling", "kwargs"),
    [
        ("hanoi", (3, True)),
        ("hanoi:4", (4, True)),
        ("hanoi:disks=5", (5, True)),
        ("hanoi:feedback=off", (3, False)),
        ("hanoi:4+feedback=off", (4, False)),
        ("hanoi:feedback=on+disks=2", (2, True)),
    ],
)
def test_spellings(spelling, kwargs):
    env = make_env(spelling)
    assert (env.n, env.feedback) == kwargs


@pytest.mark.parametrize(
    ("spelling", "message"),
    [
        ("hanoi:x", "disks: expected a whole number from 1 to 10"),
        ("hanoi:11", "disks: expected a whole number from 1 to 10"),
        ("hanoi:feedback=no", "feedback: expected on or off"),
        ("hanoi:colour=red", "unknown option 'colour=red'"),
        ("hanoi:4+disks=4", "repeated option 'disks=4'"),
        ("hanoi:feedback=off+4", "unknown option '4'"),
    ],
)
def test_bad_spellings_are_one_line_errors(spelling, message):
    from statelab.core import ConfigError

    with pytest.raises(ConfigError, match=re.escape(message)) as e:
        make_env(spelling)
    assert "\n" not in str(e.value)
    if "option" in message:  # an unknown key: the error lists the allowed ones
        assert str(e.value).endswith("allowed: hanoi:[disks=N]+[feedback=on|off]")
