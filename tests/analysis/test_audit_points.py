"""Where the audit scores: a* replayed from the stored actions, off-path points skipped and
counted for an expert that cannot answer off its own path, and the sampled points."""

from __future__ import annotations

from typing import ClassVar

from statelab.analysis.audit import answers_anywhere, expert_targets, sample_points
from statelab.analysis.audit.points import OFF_PATH, skipped
from statelab.envs.hanoi import ACTIONS, HanoiEnv


class GoldPathHanoi(HanoiEnv):
    """Hanoi whose expert is declared to answer only on its own path."""

    expert_any_state: ClassVar[bool] = False


def _expert_moves(env: HanoiEnv, n: int) -> list[str]:
    obs, info = env.reset(seed=0)
    ex, out = env.expert(), []
    for _ in range(n):
        out.append(ex.act(obs, info))
        obs, *_, info = env.step(out[-1])
    return out


def test_sample_points_first_and_spread():
    assert sample_points(range(10), 3, "first") == [0, 1, 2]
    assert sample_points(range(10), 3) == [0, 4, 9]  # 0, 4.5 -> 4 (round half to even), 9
    assert sample_points([2, 5, 7], 8) == [2, 5, 7]
    assert sample_points([], 3) == [] and sample_points(range(4), 0) == []


def test_the_declared_capability_is_read_from_the_class():
    assert answers_anywhere(HanoiEnv) and answers_anywhere(HanoiEnv())
    assert not answers_anywhere(GoldPathHanoi)
    assert not answers_anywhere(object)  # an env that does not say: no


def test_off_path_steps_are_skipped_and_counted_never_guessed():
    moves = _expert_moves(HanoiEnv(), 2)
    wrong = next(a for a in ACTIONS if a != moves[1])
    actions = [moves[0], wrong, ACTIONS[0], ACTIONS[1]]
    gold = expert_targets(GoldPathHanoi(), 0, actions)
    # step 0 and 1: still on the expert's path (the wrong move is step 1's own action)
    assert [t.a_star for t in gold[:2]] == moves[:2]
    assert [t.reason for t in gold[2:]] == [OFF_PATH, OFF_PATH]
    assert skipped(gold) == {OFF_PATH: 2}
    # the same episode on the real Hanoi, whose expert replans: a* everywhere
    anywhere = expert_targets(HanoiEnv(), 0, actions)
    assert all(t.a_star is not None for t in anywhere) and skipped(anywhere) == {}
    assert [t.a_star for t in anywhere[:2]] == moves[:2]
