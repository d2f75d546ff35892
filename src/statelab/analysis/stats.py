"""Bootstrap test of a mean difference, and mean/SD over seeds.

The seeds report every comparison against a baseline with "a bootstrap test of the mean
difference (10,000 resamples; 95% confidence interval)". :func:`bootstrap_mean_diff` is that
test: a percentile interval of the resampled difference of means, significant when the interval
excludes zero, with a two-sided p-value read off the same bootstrap distribution.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["BootstrapResult", "bootstrap_mean_diff", "mean_sd"]

FloatArray = npt.NDArray[np.float64]

# Largest number of resampled values drawn at once; bounds memory for large samples.
_CHUNK_ELEMENTS = 4_000_000
# Resampled differences this close to zero (relative to the data's scale) are rounding noise.
_ZERO_TOL = 1e-12


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


def _to_array(values: Iterable[float] | npt.ArrayLike) -> FloatArray:
    if isinstance(values, Iterator):  # a generator: materialise it first
        values = list(values)
    return np.asarray(values, dtype=np.float64).reshape(-1)


def _as_sample(values: Iterable[float] | npt.ArrayLike, name: str) -> FloatArray:
    arr = _to_array(values)
    if arr.size == 0:
        raise ValueError(f"{name} is empty: a bootstrap needs at least one value")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _resampled_means(values: FloatArray, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """Means of ``n_resamples`` resamples (with replacement) of ``values``, vectorised."""
    n = values.size
    chunk = max(1, _CHUNK_ELEMENTS // n)
    out = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = values[idx].mean(axis=1)
    return out


def bootstrap_mean_diff(
    x: Iterable[float] | npt.ArrayLike,
    y: Iterable[float] | npt.ArrayLike,
    *,
    paired: bool,
    n_resamples: int = 10_000,
    ci: float = 0.95,
    seed: int = 0,
) -> BootstrapResult:
    """Bootstrap test of ``mean(x) - mean(y)``.

    Paired: ``x`` and ``y`` are aligned (same seed at the same position) and the per-pair
    differences are resampled. Unpaired: each group is resampled independently.
    Deterministic for a given ``seed``. Raises ``ValueError`` on empty or non-finite input,
    on paired samples of different lengths, and on a bad ``n_resamples`` or ``ci``.
    """
    xs = _as_sample(x, "x")
    ys = _as_sample(y, "y")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    rng = np.random.default_rng(seed)
    scale = max(1.0, float(np.max(np.abs(xs))), float(np.max(np.abs(ys))))
    if paired:
        if xs.size != ys.size:
            raise ValueError(
                f"paired samples must have the same length, got {xs.size} and {ys.size}"
            )
        d = xs - ys
        diff = float(d.mean())
        boot = _resampled_means(d, n_resamples, rng)
    else:
        diff = float(xs.mean() - ys.mean())
        boot = _resampled_means(xs, n_resamples, rng) - _resampled_means(ys, n_resamples, rng)
    tol = _ZERO_TOL * scale
    boot[np.abs(boot) <= tol] = 0.0
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


def mean_sd(values: Iterable[float] | npt.ArrayLike) -> tuple[float, float]:
    """Mean and sample standard deviation (``ddof=1``; 0.0 for a single value).

    Raises ``ValueError`` on empty input.
    """
    arr = _to_array(values)
    if arr.size == 0:
        raise ValueError("mean_sd needs at least one value")
    sd = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
    return float(arr.mean()), sd
