"""The successive-halving schedule: paired seeds, promotion counts, the budget, the final test."""

from __future__ import annotations

import numpy as np
import pytest

from statelab.core import ConfigError
from statelab.tune.schedule import cost, halve, plan, rank, spending, survivors


def test_survivors_keep_the_top_third_then_half():
    assert survivors(24, 3) == [24, 8, 3]
    assert survivors(12, 2) == [12, 6, 3, 2]
    assert survivors(3, 3) == [3]
    assert survivors(1, 3) == [1]


def test_plan_splits_the_budget_evenly_over_rounds_and_never_exceeds_it():
    rounds = plan(24, 300, eta=3, max_seeds=50)
    assert [(r.candidates, r.prev_seeds, r.seeds, r.keep) for r in rounds] == [
        (24, 0, 4, 8),
        (8, 4, 16, 3),
        (3, 16, 50, 3),  # 16 + 33 + the rounding's 9 // 3 = 52, capped at the 50 seeds there are
    ]
    assert cost(rounds) == 24 * 4 + 8 * 12 + 3 * 34 == 294
    for n in range(1, 40):
        for budget in range(n * 3, 400, 7):
            for per_seed in (1, 2):
                for eta in (2, 3, 4):
                    try:
                        rs = plan(n, budget, eta=eta, max_seeds=20, per_seed=per_seed)
                    except ConfigError:
                        continue
                    assert cost(rs, per_seed) <= budget
                    assert all(r.seeds >= r.prev_seeds for r in rs) and rs[0].seeds >= 1
                    assert all(r.seeds <= 20 for r in rs)


def test_plan_refuses_a_budget_below_one_seed_each_in_one_line():
    with pytest.raises(
        ConfigError, match=r"budget: 50 episodes .* 24 candidates .* \(needs at least 72\)"
    ):
        plan(24, 50, eta=3, max_seeds=10)


def test_halving_plays_every_candidate_of_a_round_on_the_same_seeds_and_promotes_the_top():
    rounds = plan(9, 9 * 2 * 2, eta=3, max_seeds=10)  # 9x2, 3x(2+6)
    truth = {c: c / 10 for c in range(9)}  # candidate 8 is the best
    asked: list[tuple[list[int], int]] = []

    def evaluate(cands: list[int], seeds: int) -> dict[int, list[float]]:
        asked.append((sorted(cands), seeds))
        return {c: [truth[c]] * seeds for c in cands}

    res = halve(list(range(9)), rounds, evaluate)
    assert asked == [(list(range(9)), 2), ([6, 7, 8], rounds[1].seeds)]
    assert res.winner == 8
    assert [f.candidate for f in res.finalists] == [8, 7, 6]
    assert res.cut_after(0) == 0 and res.cut_after(7) == 1


def test_final_round_paired_test_finds_the_indistinguishable_set():
    # 10 seeds: the best is 1 everywhere; "b" differs on one seed only (p = 1 > 0.05),
    # "c" is 0 everywhere (p = 2/1024): told apart
    vals = {"a": [1.0] * 10, "b": [1.0] * 9 + [0.0], "c": [0.0] * 10}
    rounds = plan(3, 30, eta=3, max_seeds=10)
    assert len(rounds) == 1 and rounds[0].seeds == 10
    res = halve(["c", "b", "a"], rounds, lambda cs, s: {c: vals[c][:s] for c in cs})
    assert res.winner == "a" and res.indistinguishable == ["a", "b"]
    c = res.finalists[2]
    assert c.p_value == pytest.approx(2 / 2**10) and not c.indistinguishable


def test_ties_go_to_the_earlier_candidate():
    rounds = plan(4, 8, eta=2, max_seeds=1)
    res = halve(["x", "y", "z", "w"], rounds, lambda cs, s: {c: [0.5] * s for c in cs}, test=False)
    assert res.winner == "x"
    assert list(res.values[-1]) == ["x", "y"]


def test_paired_pick_beats_an_even_spread_on_a_landscape_with_a_known_best():
    # a seed's difficulty is shared; the best (index 0) is 0.1 ahead of the rest
    rng = np.random.default_rng(0)
    p = np.array([0.7] + [0.6] * 11)
    wins = 0
    for _ in range(40):
        u = rng.random(40)
        y = (u[None, :] < p[:, None]).astype(float)
        res = halve(
            list(range(12)),
            plan(12, 120, max_seeds=40),
            lambda cs, s, y=y: {c: y[c, :s] for c in cs},
        )
        wins += res.winner == 0
    # with perfectly shared seeds the best never loses a seed: the halving always finds it
    assert wins == 40


def test_the_plan_says_what_it_spends_of_the_budget_and_why():
    """Issue 33: 60 candidates on a pool of 30 seeds with 450 episodes spend 296; the line
    printed before the tune plays says so, and why (the last round has every seed)."""
    rounds = plan(60, 450, eta=3, max_seeds=30)
    assert cost(rounds) == 296
    line = spending(rounds, 450, max_seeds=30)
    assert line == (
        "plan: 4 rounds, 60 -> 20 -> 7 -> 3 candidates on 1, 6, 22, 30 seeds: 296 of the"
        " 450-episode budget; 154 unspent: round 4 plays all 30 seeds of the pool (more seeds"
        " would let it spend more)"
    )
    rounded = plan(24, 302, eta=3, max_seeds=500)
    assert cost(rounded) == 300
    assert spending(rounded, 302, max_seeds=500).endswith(
        "2 unspent: each round gets an equal share of the budget in whole seeds per candidate;"
        " what is left (2) buys no further seed for all 3 finalists"
    )
    full = plan(3, 30, eta=3, max_seeds=10)
    assert spending(full, 30, max_seeds=10).endswith(": 30 of the 30-episode budget")


def test_a_nan_mean_never_ranks():
    vals = {"a": np.array([0.2, np.nan]), "b": np.array([0.1, 0.1]), "c": np.array([0.3, 0.3])}
    assert rank(vals, ["a", "b", "c"]) == ["c", "b", "a"]
    assert rank({"a": np.array([np.nan]), "b": np.array([0.0])}, ["a", "b"]) == ["b", "a"]
