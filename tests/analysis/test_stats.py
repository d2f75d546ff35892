"""Bootstrap interval of the mean difference and mean/SD on data with known answers."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from statelab.analysis import BootstrapResult, bootstrap_mean_diff, mean_sd, permutation_mean_diff


def test_exact_shift_paired_gives_point_ci_and_significance() -> None:
    y = np.linspace(0.0, 0.9, 10)
    res = bootstrap_mean_diff(y + 1.0, y, paired=True)
    assert res.diff == pytest.approx(1.0)
    assert res.ci_low == pytest.approx(1.0)
    assert res.ci_high == pytest.approx(1.0)
    assert res.significant
    assert res.p_value == 0.0
    assert (res.n_x, res.n_y, res.paired) == (10, 10, True)


def test_same_distribution_is_not_significant() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(0.5, 0.2, size=10)
    y = rng.normal(0.5, 0.2, size=10)
    for paired in (False, True):
        res = bootstrap_mean_diff(x, y, paired=paired)
        assert not res.significant
        assert res.ci_low < 0.0 < res.ci_high
        assert res.p_value > 0.05


def test_clear_shift_unpaired_is_significant_with_tight_ci() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(0.9, 0.05, size=10)
    y = rng.normal(0.1, 0.05, size=10)
    res = bootstrap_mean_diff(x, y, paired=False)
    assert res.significant
    assert 0.7 < res.ci_low < res.diff < res.ci_high < 0.9
    assert res.diff == pytest.approx(x.mean() - y.mean())
    assert res.p_value == 0.0
    assert not res.paired


def test_deterministic_for_a_seed_and_seed_matters() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.normal(0.4, 0.3, 12), rng.normal(0.3, 0.3, 9)
    a = bootstrap_mean_diff(x, y, paired=False, seed=11)
    b = bootstrap_mean_diff(x, y, paired=False, seed=11)
    c = bootstrap_mean_diff(x, y, paired=False, seed=12)
    assert a == b
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)


def test_ci_contains_analytic_mean_difference() -> None:
    rng = np.random.default_rng(2024)
    x = rng.normal(0.6, 0.1, size=200)
    y = rng.normal(0.4, 0.1, size=200)
    res = bootstrap_mean_diff(x, y, paired=False)
    assert res.ci_low < 0.2 < res.ci_high
    # The percentile CI is close to the normal-theory one: diff +/- 1.96 * SE.
    se = np.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
    assert res.ci_high - res.ci_low == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_ci_level_widens_interval() -> None:
    rng = np.random.default_rng(5)
    x, y = rng.normal(0.5, 0.2, 20), rng.normal(0.45, 0.2, 20)
    narrow = bootstrap_mean_diff(x, y, paired=True, ci=0.5)
    wide = bootstrap_mean_diff(x, y, paired=True, ci=0.99)
    assert wide.ci_low < narrow.ci_low <= narrow.ci_high < wide.ci_high


def test_all_zero_differences_are_degenerate_not_significant() -> None:
    x = [0.1, 0.3, 0.3, 0.7, 0.0]
    res = bootstrap_mean_diff(x, list(x), paired=True)
    assert (res.diff, res.ci_low, res.ci_high) == (0.0, 0.0, 0.0)
    assert not res.significant
    assert res.p_value == 1.0
    unpaired = bootstrap_mean_diff([0.1] * 7, [0.1] * 3, paired=False)
    assert (unpaired.ci_low, unpaired.ci_high) == (0.0, 0.0)
    assert not unpaired.significant


def test_negative_shift_and_p_value_two_sided() -> None:
    y = np.linspace(0.2, 0.8, 10)
    res = bootstrap_mean_diff(y - 0.5, y, paired=True)
    assert res.significant and res.ci_high < 0.0
    rng = np.random.default_rng(9)
    d = rng.normal(0.05, 0.3, 15)
    weak = bootstrap_mean_diff(d, np.zeros(15), paired=True, seed=1)
    flipped = bootstrap_mean_diff(-d, np.zeros(15), paired=True, seed=1)
    assert weak.p_value == pytest.approx(flipped.p_value, abs=0.02)
    assert 0.0 < weak.p_value <= 1.0


@pytest.mark.parametrize(("x", "y"), [([], [1.0, 2.0]), ([1.0, 2.0], []), ([], [])])
def test_empty_input_raises(x: list[float], y: list[float]) -> None:
    with pytest.raises(ValueError, match="empty"):
        bootstrap_mean_diff(x, y, paired=False)
    with pytest.raises(ValueError, match="empty"):
        permutation_mean_diff(x, y, paired=False)


def test_bootstrap_needs_two_values_per_sample() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        bootstrap_mean_diff([1.0], [1.0, 2.0], paired=False)


def test_paired_length_mismatch_raises() -> None:
    with pytest.raises(ValueError, match="same length"):
        bootstrap_mean_diff([1.0, 2.0, 3.0], [1.0, 2.0], paired=True)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_mean_diff([1.0, float("nan")], [1.0, 2.0], paired=True)
    with pytest.raises(ValueError, match="ci"):
        bootstrap_mean_diff([1.0, 2.0], [1.0, 2.0], paired=True, ci=1.5)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_mean_diff([1.0, 2.0], [1.0, 2.0], paired=True, n_resamples=0)


def test_accepts_generators_and_result_is_frozen() -> None:
    res = bootstrap_mean_diff((v for v in [1.0, 2.0]), iter([0.0, 1.0]), paired=True)
    assert isinstance(res, BootstrapResult)
    assert res.diff == pytest.approx(1.0)
    with pytest.raises(AttributeError):
        res.diff = 2.0  # type: ignore[misc]


def test_ten_thousand_resamples_at_n10_are_fast() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.random(10), rng.random(10)
    bootstrap_mean_diff(x, y, paired=False)  # warm-up
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        bootstrap_mean_diff(x, y, paired=False)
        bootstrap_mean_diff(x, y, paired=True)
        best = min(best, time.perf_counter() - start)
    assert best < 0.1  # two tests; each must be well under 50 ms


def test_large_sample_is_chunked_without_error() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(0.0, 1.0, 5_000)
    res = bootstrap_mean_diff(x, x + 0.5, paired=False, n_resamples=2_000)
    assert res.significant and res.ci_high < 0.0


def test_mean_sd() -> None:
    mean, sd = mean_sd([0.2, 0.4, 0.6])
    assert mean == pytest.approx(0.4)
    assert sd == pytest.approx(0.2)  # sample SD (ddof=1)
    mean1, sd1 = mean_sd([0.7])
    assert mean1 == pytest.approx(0.7) and math.isnan(sd1)  # sample SD undefined for n = 1
    assert mean_sd(np.array([1.0, 1.0])) == (1.0, 0.0)
    with pytest.raises(ValueError):
        mean_sd([])
