"""Power of the report's own test (``analysis/power.py``): the vectorised sign-flip p values
are the report's, the simulated power has known answers (the floor under Holm, the one
pattern that counts at the floor, the t-test sample size at large n), and the analytic
approximation agrees with the simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from statelab.analysis.power import (
    Noise,
    analytic_power,
    attainable_level,
    seeds_needed,
    signflip_p,
    simulated_power,
)
from statelab.analysis.stats import adjust_p, permutation_mean_diff


@pytest.mark.parametrize("n", [2, 5, 9, 13])
def test_the_p_values_are_the_report_tests_own(n: int) -> None:
    rng = np.random.default_rng(n)
    smooth = rng.normal(0.1, 0.3, size=(30, n))
    thirds = np.round(rng.normal(0.1, 0.4, size=(30, n)) * 3) / 3  # Hanoi's ties and zeros
    for d in (smooth, thirds):
        want = np.array([permutation_mean_diff(r, np.zeros(n), paired=True).p_value for r in d])
        got = signflip_p(d)
        # at a mean of exactly 0 scipy's tolerance (relative to the mean) lets rounding
        # count ties, so its p may fall a little under 1 there: not a p that counts anywhere
        moved = np.abs(d.mean(axis=1)) > 1e-9
        assert got[moved] == pytest.approx(want[moved], abs=1e-12)
        assert np.all(got[~moved] == 1.0) and np.all(want[~moved] > 0.5)


def test_beyond_13_pairs_the_p_values_are_monte_carlo_like_the_reports() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.05, 0.3, size=(20, 16))
    want = np.array([permutation_mean_diff(r, np.zeros(16), paired=True).p_value for r in d])
    got = signflip_p(d)
    assert np.all(got >= 2 / 10_001)  # the observed pattern counts, as scipy's does
    assert np.max(np.abs(got - want)) < 0.03  # two draws of 10,000 patterns


def test_the_floor_under_holm_and_the_one_pattern_that_counts_there() -> None:
    """Holm over 3 at alpha 0.05: 6 seeds can never count (3 * 2/64 >= 0.05); at 7 only the
    all-positive pattern does (3 * 2/128 < 0.05 but 3 * 4/128 is not), so the power is
    exactly P(all 7 differences > 0) = Phi(delta/sd)**7."""
    assert attainable_level(6, 0.05, 3) == 0.0
    assert attainable_level(7, 0.05, 3) == 1 / 64
    # the level is what Holm lets through: three equal p values at it are all significant
    assert np.all(adjust_p([1 / 64] * 3) < 0.05) and not np.any(adjust_p([2 / 64] * 3) < 0.05)
    got = simulated_power(Noise.normal(1.0), 1.0, [6, 7], k=3, sims=4000)
    want = sps.norm.cdf(1.0) ** 7  # 0.298
    assert got[6] == 0.0
    assert got[7] == pytest.approx(want, abs=4 * math.sqrt(want * (1 - want) / 4000))
    assert analytic_power(1.0, 1.0, 6, k=3) == 0.0


def test_seeds_needed_for_a_stated_normal_match_the_closed_form() -> None:
    """delta/sd = 0.5, no adjustment, 80%: the normal-theory sample size with Guenther's t
    correction, ((z_.975 + z_.8) / 0.5)**2 + z_.975**2 / 2 = 33.3, so 34 seeds."""
    z_a, z_b = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    want = math.ceil(((z_a + z_b) / 0.5) ** 2 + z_a**2 / 2)
    assert want == 34
    got = seeds_needed(Noise.normal(0.2), 0.1, power=0.8, k=1, sims=2000)
    assert got.analytic is not None and abs(got.analytic - want) <= 1
    assert got.seeds is not None and abs(got.seeds - want) <= 0.1 * want
    assert got.power >= 0.8 and got.simulated[got.seeds - 1] < 0.8  # the first that reaches it
    assert got.floor == 6  # 2/2**6 < 0.05 <= 2/2**5


def test_holm_over_more_comparisons_needs_more_seeds() -> None:
    one = seeds_needed(Noise.normal(0.3), 0.2, k=1, sims=1000)
    four = seeds_needed(Noise.normal(0.3), 0.2, k=4, sims=1000)
    assert one.seeds is not None and four.seeds is not None and four.seeds > one.seeds
    assert four.floor == 8  # 4 * 2/2**8 < 0.05 <= 4 * 2/2**7


@pytest.mark.parametrize("delta", [0.1, 0.2, 0.3])
def test_the_analytic_power_agrees_with_the_simulated_test_on_tied_scores(delta: float) -> None:
    """Bootstrapped residuals of Hanoi-like differences (three values, skewed), Holm over
    2: the approximation's seeds within 10% (or two seeds) of the simulation's, never more
    (measured: 65 vs 70, 19 vs 20, 10 vs 12); a normal scatter of the same SD within one
    seed or 3%. The simulation, not the approximation, is the plan's answer."""
    diffs = np.array([1, 1, 1, 0, 0, 1, 1, -1, 0, 0, 1, -1, -1, 0, 1, 1]) / 3
    tied = seeds_needed(Noise.resample(diffs), delta, k=2, sims=2000)
    assert tied.seeds is not None and tied.analytic is not None
    assert abs(tied.analytic - tied.seeds) <= max(2, 0.1 * tied.seeds)
    smooth = seeds_needed(Noise.normal(Noise.resample(diffs).sd), delta, k=2, sims=2000)
    assert smooth.seeds is not None and smooth.analytic is not None
    assert abs(smooth.analytic - smooth.seeds) <= max(1, 0.03 * smooth.seeds)


def test_a_scatter_that_never_varies_needs_the_floor_only() -> None:
    got = seeds_needed(Noise.resample([0.0, 0.0, 0.0]), 0.1, k=2, sims=200)
    assert got.seeds == got.floor == 7 and got.power == 1.0


def test_the_draws_are_the_same_whatever_the_width() -> None:
    noise = Noise.resample([0.1, -0.2, 0.3, 0.0])
    assert np.array_equal(noise.draw(50, 5, seed=1), noise.draw(50, 9, seed=1)[:, :5])
    assert not np.array_equal(noise.draw(50, 5, seed=1), noise.draw(50, 5, seed=2))
