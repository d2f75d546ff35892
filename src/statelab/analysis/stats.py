"""Tests of a mean difference over seeds, mean/SD over seeds (built on ``scipy.stats``), and
the game bootstraps (:func:`paired_bootstrap`, :func:`clustered_bootstrap`: an
:class:`Interval` over games, each game weighing the same; a clustered draw brings all of a
game's points).

Two tests of ``mean(x) - mean(y)`` (a run against its baseline, one value per seed):

- :func:`permutation_mean_diff`, the default in reports: paired by seed, an exact sign-flip
  test of the mean of the per-seed differences (every one of the ``2**n`` sign patterns while
  there are at most ``max_exact`` of them, i.e. up to 13 pairs; Monte Carlo beyond); unpaired,
  a permutation test of the group labels. Under the null (differences symmetric about zero,
  or exchangeable groups) its false-positive rate is at most the nominal level at every n,
  which is why it marks the ``*``. At small n it may be unable to reach ``p < 0.05`` at all
  (5 pairs: smallest two-sided p is 2/32 = 0.0625); ``min_p`` says so.
- :func:`bootstrap_mean_diff`, the seeds' "bootstrap test of the mean difference (10,000
  resamples; 95% confidence interval)": the percentile interval of the resampled difference.
  Reports keep it as the interval they print, and as the ``test="bootstrap"`` option; as a
  test it over-rejects at small n (about 23% at n = 3, 10% at n = 10 for a nominal 5%; see
  ``benchmarks/significance.py``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

__all__ = [
    "ADJUSTMENTS",
    "BOOT_SEED",
    "RESAMPLES",
    "BootstrapResult",
    "Interval",
    "PermutationResult",
    "adjust_p",
    "bootstrap_mean_diff",
    "clustered_bootstrap",
    "mean_sd",
    "min_adjusted_p",
    "min_attainable_p",
    "paired_bootstrap",
    "permutation_mean_diff",
]

FloatArray = npt.NDArray[np.float64]

# Largest number of resampled values drawn at once; bounds memory for large samples.
_CHUNK_ELEMENTS = 500_000
# Largest number of permuted values drawn at once (a report's test of thousands of seeds
# stays within a few MB; the null distribution is the same as drawn at once)
_PERMUTED_ELEMENTS = 500_000
# Resampled differences this close to zero (relative to the data's scale) are rounding noise.
_ZERO_TOL = 1e-12
#: Null statistics this close to the observed one, relative to the scores' scale (the largest
#: magnitude among them, at least 1), are ties: a mean of n scores on a lattice such as
#: Hanoi's {0, 1/3, 2/3, 1} computed along two sign patterns differs by rounding (about
#: n * 1e-16) where distinct values differ by at least a lattice step over n. scipy's own
#: tolerance is relative to the observed statistic, hence none at all when it is 0.
TIE_TOL = 1e-9
#: Most arrangements (sign patterns or label splits) enumerated exactly: 2**13 (13 pairs),
#: no more than the 10,000 Monte Carlo draws used beyond; 2**15 would take ~0.2 s a test.
MAX_EXACT = 2**13


@dataclass(frozen=True)
class BootstrapResult:
    """Outcome of :func:`bootstrap_mean_diff`.

    ``diff`` is ``mean(x) - mean(y)`` (the mean of the pairwise differences when paired);
    ``[ci_low, ci_high]`` is the percentile interval of the bootstrap distribution of that
    difference; ``p_value`` is two-sided, ``2 * min(P(d <= 0), P(d >= 0))`` capped at 1;
    ``significant`` is true when the interval excludes zero.
    """

    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    n_x: int
    n_y: int
    paired: bool
    significant: bool


@dataclass(frozen=True)
class PermutationResult:
    """Outcome of :func:`permutation_mean_diff`.

    ``p_value`` is two-sided (``2 * min(one-sided p)``, capped at 1; ties with the observed
    difference judged on the scores' scale, :data:`TIE_TOL`; exactly 1 when the difference is
    0). ``exact`` tells
    whether every arrangement was enumerated (``n_resamples`` of them) or ``n_resamples`` were
    drawn (Monte Carlo; scipy then counts the observed arrangement too, so p >= 1/(m+1)).
    ``min_p`` is the smallest p-value the test can return on data of this shape (see
    :func:`min_attainable_p`); when it exceeds the level, no difference can be significant.
    ``method`` is ``"sign-flip"`` (paired) or ``"label permutation"`` (unpaired).
    """

    diff: float
    p_value: float
    n_x: int
    n_y: int
    paired: bool
    exact: bool
    n_resamples: int
    min_p: float
    method: str


def _to_array(values: Iterable[float] | npt.ArrayLike) -> FloatArray:
    if isinstance(values, Iterator):  # a generator: materialise it first
        values = list(values)
    return np.asarray(values, dtype=np.float64).reshape(-1)


def _as_sample(values: Iterable[float] | npt.ArrayLike, name: str, least: int = 1) -> FloatArray:
    arr = _to_array(values)
    if arr.size == 0:
        raise ValueError(f"{name} is empty: a test needs at least {least} value(s)")
    if arr.size < least:
        raise ValueError(f"{name} has {arr.size} value(s); this needs at least {least}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _pair(
    x: Iterable[float] | npt.ArrayLike, y: Iterable[float] | npt.ArrayLike, paired: bool, least: int
) -> tuple[FloatArray, FloatArray]:
    xs, ys = _as_sample(x, "x", least), _as_sample(y, "y", least)
    if paired and xs.size != ys.size:
        raise ValueError(f"paired samples must have the same length, got {xs.size} and {ys.size}")
    return xs, ys


def _mean(a: FloatArray, axis: int = -1) -> Any:
    return np.mean(a, axis=axis)


def _mean_diff(a: FloatArray, b: FloatArray, axis: int = -1) -> Any:
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


def _scipy_version() -> tuple[int, int]:
    import scipy

    major, minor = scipy.__version__.split(".")[:2]
    return int(major), int(minor)


# scipy's keyword for a generator: ``rng`` from 1.15, ``random_state`` before.
_RNG_KEYWORD = "rng" if _scipy_version() >= (1, 15) else "random_state"


def _rng(seed: int) -> dict[str, np.random.Generator]:
    return {_RNG_KEYWORD: np.random.default_rng(seed)}


def bootstrap_mean_diff(
    x: Iterable[float] | npt.ArrayLike,
    y: Iterable[float] | npt.ArrayLike,
    *,
    paired: bool,
    n_resamples: int = 10_000,
    ci: float = 0.95,
    seed: int = 0,
) -> BootstrapResult:
    """Percentile bootstrap of ``mean(x) - mean(y)`` (``scipy.stats.bootstrap``).

    Paired: ``x`` and ``y`` are aligned (same seed at the same position) and the per-pair
    differences are resampled. Unpaired: each group is resampled independently. Each sample
    needs at least two values. Deterministic for a given ``seed``. Raises ``ValueError`` on
    short or non-finite input, on paired samples of different lengths, and on a bad
    ``n_resamples`` or ``ci``.
    """
    xs, ys = _pair(x, y, paired, least=2)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    data: tuple[FloatArray, ...] = (xs - ys,) if paired else (xs, ys)
    statistic: Callable[..., Any] = _mean if paired else _mean_diff
    with warnings.catch_warnings():  # constant data: a degenerate (but correct) interval
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap(
            data,
            statistic,
            n_resamples=n_resamples,
            batch=max(1, _CHUNK_ELEMENTS // max(xs.size, ys.size)),
            vectorized=True,
            confidence_level=ci,
            method="percentile",
            **_rng(seed),
        )
    boot = np.asarray(res.bootstrap_distribution, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(xs))), float(np.max(np.abs(ys))))
    tol = _ZERO_TOL * scale
    boot[np.abs(boot) <= tol] = 0.0
    diff = float(np.mean(data[0]) if paired else xs.mean() - ys.mean())
    if abs(diff) <= tol:
        diff = 0.0
    alpha = 1.0 - ci
    low, high = np.quantile(boot, [alpha / 2.0, 1.0 - alpha / 2.0])
    p_value = min(1.0, 2.0 * min(float(np.mean(boot <= 0.0)), float(np.mean(boot >= 0.0))))
    return BootstrapResult(
        diff=diff,
        ci_low=float(low),
        ci_high=float(high),
        p_value=p_value,
        n_x=int(xs.size),
        n_y=int(ys.size),
        paired=paired,
        significant=bool(low > 0.0 or high < 0.0),
    )


def _arrangements(n_x: int, n_y: int, paired: bool) -> int:
    return 2**n_x if paired else math.comb(n_x + n_y, n_x)


def min_attainable_p(
    n_x: int,
    n_y: int,
    *,
    paired: bool,
    n_resamples: int = 10_000,
    max_exact: int = MAX_EXACT,
    n_nonzero: int | None = None,
) -> float:
    """Smallest two-sided p-value :func:`permutation_mean_diff` can return.

    Exact: ``2 / arrangements`` (sign patterns ``2**n``, or label splits ``C(n_x + n_y, n_x)``);
    paired, only non-zero differences can flip, so ``n_nonzero`` (when given) replaces ``n``.
    Monte Carlo: ``2 / (n_resamples + 1)``. Capped at 1.
    """
    total = _arrangements(n_x, n_y, paired)
    if total <= max_exact:
        if paired and n_nonzero is not None:
            total = 2**n_nonzero
        return min(1.0, 2.0 / total)
    return min(1.0, 2.0 / (n_resamples + 1))


def permutation_mean_diff(
    x: Iterable[float] | npt.ArrayLike,
    y: Iterable[float] | npt.ArrayLike,
    *,
    paired: bool,
    n_resamples: int = 10_000,
    max_exact: int = MAX_EXACT,
    seed: int = 0,
) -> PermutationResult:
    """Permutation test of ``mean(x) - mean(y)`` (``scipy.stats.permutation_test``).

    Paired (``x[i]`` and ``y[i]`` from the same seed): the sign of each per-seed difference
    is flipped (``permutation_type="samples"`` on the differences). Unpaired: the pooled
    values are re-split into groups of the original sizes (``"independent"``). Exact when the
    arrangements number at most ``max_exact`` (default :data:`MAX_EXACT`, 13 pairs), else
    ``n_resamples`` random ones (deterministic for a given ``seed``). A null statistic within
    :data:`TIE_TOL` times the scores' scale of the observed one is a tie (as extreme), so a
    difference of exactly 0 has p = 1. Raises ``ValueError`` on
    empty or non-finite input and on paired samples of different lengths.
    """
    xs, ys = _pair(x, y, paired, least=1)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    total = _arrangements(xs.size, ys.size, paired)
    exact = total <= max_exact
    data: tuple[FloatArray, ...] = (xs - ys,) if paired else (xs, ys)
    statistic: Callable[..., Any] = _mean if paired else _mean_diff
    res = stats.permutation_test(
        data,
        statistic,
        permutation_type="samples" if paired else "independent",
        vectorized=True,
        n_resamples=np.inf if exact else n_resamples,
        batch=max(1, _PERMUTED_ELEMENTS // (xs.size + ys.size)),
        alternative="two-sided",
        **_rng(seed),
    )
    diff = float(res.statistic)
    scale = max(1.0, float(np.max(np.abs(xs))), float(np.max(np.abs(ys))))
    n_nonzero = int(np.count_nonzero(data[0])) if paired else None
    tol = TIE_TOL * scale
    zero = abs(diff) <= tol
    null = np.asarray(res.null_distribution, dtype=np.float64)
    return PermutationResult(
        diff=0.0 if zero else diff,
        p_value=1.0 if zero else _two_sided_p(null, diff, tol, exact),
        n_x=int(xs.size),
        n_y=int(ys.size),
        paired=paired,
        exact=exact,
        n_resamples=total if exact else n_resamples,
        min_p=min_attainable_p(
            xs.size,
            ys.size,
            paired=paired,
            n_resamples=n_resamples,
            max_exact=max_exact,
            n_nonzero=n_nonzero,
        ),
        method="sign-flip" if paired else "label permutation",
    )


def _two_sided_p(null: FloatArray, observed: float, tol: float, exact: bool) -> float:
    """``2 * min(P(T <= t), P(T >= t))`` over the null statistics ``T``, a null value within
    ``tol`` of ``t`` counting as a tie (as extreme); Monte Carlo counts the observed
    arrangement too (``(k + 1) / (m + 1)``, as scipy does). Capped at 1."""
    extra = 0 if exact else 1
    less = (int(np.count_nonzero(null <= observed + tol)) + extra) / (null.size + extra)
    more = (int(np.count_nonzero(null >= observed - tol)) + extra) / (null.size + extra)
    return float(min(1.0, 2.0 * min(less, more)))


def mean_sd(values: Iterable[float] | npt.ArrayLike) -> tuple[float, float]:
    """Mean and sample standard deviation (``ddof=1``; NaN for a single value, where the
    sample SD is undefined; reports print it as "–").

    Raises ``ValueError`` on empty input.
    """
    arr = _to_array(values)
    if arr.size == 0:
        raise ValueError("mean_sd needs at least one value")
    sd = float(arr.std(ddof=1)) if arr.size > 1 else float("nan")
    return float(arr.mean()), sd


Adjust = Literal["holm", "bh", "none"]
#: the multiple-comparison adjustments :func:`adjust_p` knows
ADJUSTMENTS: tuple[str, ...] = ("holm", "bh", "none")
#: how reports name them
ADJUST_NAMES: dict[str, str] = {
    "holm": "Holm's step-down (family-wise error)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "none": "no adjustment",
}


def adjust_p(p_values: Iterable[float] | npt.ArrayLike, method: Adjust = "holm") -> FloatArray:
    """p values adjusted for their number, in the input order.

    ``"holm"``: Holm's step-down, ``p_(i) * (m - i + 1)`` over the sorted p values, made
    monotone and capped at 1 (controls the family-wise error rate under any dependence);
    ``"bh"``: Benjamini-Hochberg (``scipy.stats.false_discovery_control``; controls the
    false discovery rate for independent or positively dependent tests); ``"none"``: as
    given. Raises ``ValueError`` on a value outside [0, 1] or an unknown method.
    """
    p = _to_array(p_values)
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0):
        raise ValueError("p values must be finite and in [0, 1]")
    if method not in ADJUSTMENTS:
        raise ValueError(f"method must be one of {ADJUSTMENTS}, got {method!r}")
    if method == "none" or p.size == 0:
        return p.copy()
    if method == "bh":
        return np.asarray(stats.false_discovery_control(p, method="bh"), dtype=np.float64)
    order = np.argsort(p, kind="stable")
    m = p.size
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m, dtype=np.float64)
    out[order] = np.minimum(1.0, stepped)
    return out


def min_adjusted_p(min_ps: Iterable[float] | npt.ArrayLike, method: Adjust = "holm") -> FloatArray:
    """A lower bound on each test's adjusted p, whatever the data, from every test's least
    attainable unadjusted p (:func:`min_attainable_p`), in the input order.

    ``"holm"``: an adjusted p is at least the test's own p and at least ``m`` times the
    smallest p of the family (``max(min_p_i, m * min_j min_p_j)``, capped at 1; attained
    when all tests share one design). With 4 comparisons a ``*`` at 0.05 needs
    ``4 * 2 / 2**n < 0.05``: 8 pairs. ``"bh"`` and ``"none"``: the test's own least p (a
    Benjamini-Hochberg p is never below the unadjusted one, and equals it when every test
    reaches it). Where the bound is at or above the level, no ``*`` can exist at this n and
    this many comparisons.
    """
    low = _to_array(min_ps)
    if method not in ADJUSTMENTS:
        raise ValueError(f"method must be one of {ADJUSTMENTS}, got {method!r}")
    if method != "holm" or low.size == 0:
        return low.copy()
    return np.minimum(1.0, np.maximum(low, low.size * float(np.min(low))))


# -- game bootstraps (the seeds' "paired percentile bootstrap over games") -----------------
#: bootstrap resamples and seed of the game bootstraps
RESAMPLES = 10_000
BOOT_SEED = 0


@dataclass(frozen=True)
class Interval:
    """A mean over games (or their points) and its 95% percentile bootstrap interval."""

    mean: float
    low: float
    high: float
    #: games (clusters) and points behind it
    games: int
    points: int

    def text(self, digits: int = 2, scale: float = 1.0) -> str:
        """``mean [low, high]`` times ``scale`` (signed where the interval or mean is
        negative; "–" when there is nothing to estimate)."""
        if math.isnan(self.mean):
            return "–"
        f = f"{{:+.{digits}f}}" if self.low < 0 < self.high or self.mean < 0 else f"{{:.{digits}f}}"
        return (
            f"{f.format(self.mean * scale)} [{f.format(self.low * scale)}, "
            f"{f.format(self.high * scale)}]"
        )


_NAN = Interval(math.nan, math.nan, math.nan, 0, 0)


def _percentiles(draws: np.ndarray) -> tuple[float, float]:
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return float(lo), float(hi)


def paired_bootstrap(
    a: Mapping[Any, float],
    b: Mapping[Any, float] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = BOOT_SEED,
) -> Interval:
    """Mean of ``a[g] - b[g]`` (or of ``a[g]``) over the games both have, with the paired
    percentile bootstrap interval over games (each game weighs the same)."""
    games = sorted(set(a) & set(b) if b is not None else set(a), key=str)
    if not games:
        return _NAN
    d = np.array([a[g] - (b[g] if b is not None else 0.0) for g in games], dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(resamples, len(d)))
    lo, hi = _percentiles(d[idx].mean(axis=1))
    return Interval(float(d.mean()), lo, hi, len(d), len(d))


def clustered_bootstrap(
    a: Mapping[Any, Sequence[float]],
    b: Mapping[Any, Sequence[float]] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = BOOT_SEED,
) -> Interval:
    """Mean over write points of ``a`` (minus the mean over the points of ``b``), with a
    game-clustered percentile bootstrap: games are drawn with replacement and bring all
    their points (in both conditions: the same games)."""
    games = sorted((g for g in a if len(a[g]) and (b is None or (g in b and len(b[g])))), key=str)
    if not games:
        return _NAN
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(games), size=(resamples, len(games)))

    def pooled(x: Mapping[Any, Sequence[float]]) -> tuple[float, np.ndarray]:
        sums = np.array([float(np.sum(x[g])) for g in games])
        counts = np.array([len(x[g]) for g in games], dtype=float)
        return float(sums.sum() / counts.sum()), sums[idx].sum(axis=1) / counts[idx].sum(axis=1)

    mean_a, draws = pooled(a)
    points = sum(len(a[g]) for g in games)
    if b is not None:
        mean_b, draws_b = pooled(b)
        mean_a, draws = mean_a - mean_b, draws - draws_b
    lo, hi = _percentiles(draws)
    return Interval(mean_a, lo, hi, len(games), points)
