"""Power of the report's own test: how many seeds a comparison needs to detect a difference.

A report marks a run ``*`` against its baseline when the exact paired sign-flip test
(:func:`~statelab.analysis.stats.permutation_mean_diff`: every sign pattern up to
:data:`~statelab.analysis.stats.MAX_EXACT` of them, 13 pairs, Monte Carlo with 10,000 draws
beyond) gives a p value that, adjusted over the report's ``k`` comparisons by Holm's
step-down, is below ``alpha``. Holm's adjusted p of a comparison is at most ``k * p`` (equal
when its p is the family's smallest, e.g. when it is the only real effect), so
``k * p < alpha`` is significant whatever the other comparisons show; that is the event whose
probability is the power here (``k = 1``: no adjustment). It has a floor: the smallest exact
p is ``2 / 2**n``, so ``k * 2 / 2**n < alpha`` must hold before any difference can count.

Two ways to the power at ``n`` seeds for a true mean difference ``delta``:

- :func:`simulated_power`: draw ``sims`` sets of ``n`` paired per-seed differences
  (``delta`` plus a :class:`Noise`: resampled pilot residuals or a normal) and run the test
  itself on each, vectorised (:func:`signflip_p`, the same p values as the report's test).
- :func:`analytic_power`: the paired t test's power (noncentral t) at the sign-flip test's
  attainable level (the largest p it can give below ``alpha / k``; zero below the floor).
  Fast, for the search's start and the plot; :func:`seeds_needed` confirms it by simulation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy import stats

from statelab.analysis.stats import MAX_EXACT

__all__ = [
    "REPORT_RESAMPLES",
    "Noise",
    "SeedsNeeded",
    "analytic_power",
    "attainable_level",
    "seeds_needed",
    "signflip_p",
    "simulated_power",
]

FloatArray = npt.NDArray[np.float64]

#: the Monte Carlo draws of the report's test beyond :data:`MAX_EXACT` sign patterns
REPORT_RESAMPLES = 10_000
#: fewest pairs the report tests (``_comparisons.MIN_TEST_N``)
_LEAST = 2
#: most null values held at once (bounds memory: rows x patterns)
_CHUNK = 4_000_000
#: scipy's tolerance for "equal" null values: 100 machine epsilons of the observed value
_TOL = np.finfo(np.float64).eps * 100


@dataclass(frozen=True)
class Noise:
    """How one seed's paired difference scatters about the true mean difference.

    ``residuals`` (mean zero) are resampled with replacement when given (a bootstrap of a
    pilot's centred differences, or of the differences between two stated runs); otherwise
    the scatter is normal with standard deviation ``sd``. ``sd`` is always the scatter's
    standard deviation (of the residuals, when given).
    """

    sd: float
    residuals: FloatArray | None = field(default=None, compare=False)

    @classmethod
    def normal(cls, sd: float) -> Noise:
        """A normal scatter of standard deviation ``sd`` (>= 0)."""
        if not (math.isfinite(sd) and sd >= 0.0):
            raise ValueError(f"sd must be finite and >= 0, got {sd}")
        return cls(float(sd))

    @classmethod
    def resample(cls, residuals: Iterable[float] | npt.ArrayLike) -> Noise:
        """The given residuals, centred, resampled with replacement."""
        r = np.asarray(list(residuals) if isinstance(residuals, Iterable) else residuals)
        r = r.astype(np.float64).reshape(-1)
        if r.size < 2 or not np.all(np.isfinite(r)):
            raise ValueError("residuals need at least two finite values")
        r = r - r.mean()
        return cls(float(np.sqrt(np.mean(r**2))), r)

    @property
    def kind(self) -> str:
        """``"bootstrap"`` (resampled residuals) or ``"normal"``."""
        return "normal" if self.residuals is None else "bootstrap"

    def draw(self, sims: int, n: int, seed: int = 0) -> FloatArray:
        """A ``(sims, n)`` array of scatter; column ``j`` comes from its own generator
        (``seed``, ``j``), so the first ``n`` columns are the same whatever ``n`` is drawn."""
        out = np.empty((sims, n), dtype=np.float64)
        for j in range(n):
            rng = np.random.default_rng([seed, j])
            if self.residuals is None:
                out[:, j] = rng.normal(0.0, self.sd, size=sims)
            else:
                out[:, j] = self.residuals[rng.integers(0, self.residuals.size, size=sims)]
        return out


def _signs(n: int, max_exact: int, n_resamples: int, seed: int) -> tuple[FloatArray, bool]:
    """Every sign pattern of ``n`` pairs (exact), or ``n_resamples`` random ones."""
    if 2**n <= max_exact:
        codes = np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)
        return np.where(codes & 1, -1.0, 1.0), True
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, n)), False


def signflip_p(
    d: npt.ArrayLike,
    *,
    max_exact: int = MAX_EXACT,
    n_resamples: int = REPORT_RESAMPLES,
    seed: int = 0,
) -> FloatArray:
    """The report's two-sided sign-flip p value of each row of ``d`` (``(sims, n)``, one
    row a set of paired per-seed differences), as
    :func:`~statelab.analysis.stats.permutation_mean_diff` computes it (scipy's
    ``permutation_test``): exact over all ``2**n`` patterns when there are at most
    ``max_exact``, else over ``n_resamples`` random patterns counting the observed one
    (``(c + 1) / (m + 1)``); ``2 * min`` of the one-sided p values, capped at 1. The Monte
    Carlo patterns are drawn once from ``seed`` for every row (as the report draws each
    test's from the same seed). Null values within rounding of the observed one count as
    ties, on the data's scale: where the observed mean is 0 the report's scipy lets
    rounding decide them (a p a little under 1); such a p is never under any level."""
    arr = np.atleast_2d(np.asarray(d, dtype=np.float64))
    sims, n = arr.shape
    signs, exact = _signs(n, max_exact, n_resamples, seed)
    extra = 0 if exact else 1
    total = signs.shape[0] + extra
    out = np.empty(sims, dtype=np.float64)
    step = max(1, _CHUNK // signs.shape[0])
    for lo in range(0, sims, step):
        block = arr[lo : lo + step]
        null = block @ signs.T / n  # (rows, patterns)
        obs = block.mean(axis=1, keepdims=True)
        # ties within rounding of the data's scale count as ties (scipy's tolerance is
        # relative to the observed mean alone, so at a mean of 0 rounding decides them)
        gamma = np.maximum(np.abs(obs), np.abs(block).mean(axis=1, keepdims=True)) * _TOL
        le = np.count_nonzero(null <= obs + gamma, axis=1) + extra
        ge = np.count_nonzero(null >= obs - gamma, axis=1) + extra
        out[lo : lo + step] = np.minimum(1.0, 2.0 * np.minimum(le, ge) / total)
    return out


def attainable_level(
    n: int,
    alpha: float,
    k: int,
    *,
    max_exact: int = MAX_EXACT,
    n_resamples: int = REPORT_RESAMPLES,
) -> float:
    """The largest p value the report's test can give at ``n`` pairs that still counts
    (``k * p < alpha``); 0 when none can (the floor: ``k * 2 / 2**n >= alpha`` exactly)."""
    if n < _LEAST:
        return 0.0
    if 2**n <= max_exact:  # p = 2 c / 2**n, c = 1 .. 2**(n-1)
        half = 2 ** (n - 1)
        c = math.ceil(alpha / k * half) - 1
        return max(0, c) / half
    m = math.ceil(alpha / k * (n_resamples + 1) / 2) - 1  # p = 2 (c + 1) / (B + 1)
    return 2 * max(0, m) / (n_resamples + 1)


def analytic_power(
    sd: float,
    delta: float,
    n: int,
    *,
    k: int = 1,
    alpha: float = 0.05,
    max_exact: int = MAX_EXACT,
    n_resamples: int = REPORT_RESAMPLES,
) -> float:
    """Approximate power of the report's test at ``n`` pairs: the two-sided paired t test's
    (noncentral t, ``n - 1`` degrees of freedom, noncentrality ``delta * sqrt(n) / sd``) at
    :func:`attainable_level`; 0 below the floor, 1 for ``sd == 0`` above it."""
    level = attainable_level(n, alpha, k, max_exact=max_exact, n_resamples=n_resamples)
    if level <= 0.0:
        return 0.0
    if sd <= 0.0:
        return 1.0 if delta != 0 else 0.0
    df = n - 1
    crit = float(stats.t.ppf(1.0 - level / 2.0, df))
    ncp = abs(delta) * math.sqrt(n) / sd
    return float(stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp))


def simulated_power(
    noise: Noise,
    delta: float,
    ns: Iterable[int],
    *,
    k: int = 1,
    alpha: float = 0.05,
    sims: int = 2000,
    seed: int = 0,
    max_exact: int = MAX_EXACT,
    n_resamples: int = REPORT_RESAMPLES,
) -> dict[int, float]:
    """Power of the report's test at each ``n`` in ``ns``, by simulation: ``sims`` sets of
    ``n`` differences ``delta + noise``, each tested by :func:`signflip_p`; the share with
    ``k * p < alpha``. The same draws serve every ``n`` (the first ``n`` of each set, in
    this call and in any other with the same ``seed``), so the curve is not jagged by fresh
    noise at each ``n``."""
    wanted = sorted(set(int(n) for n in ns))
    if not wanted:
        return {}
    scatter = noise.draw(sims, max(wanted), seed)
    out: dict[int, float] = {}
    for n in wanted:
        if n < _LEAST:
            out[n] = 0.0
            continue
        p = signflip_p(
            delta + scatter[:, :n], max_exact=max_exact, n_resamples=n_resamples, seed=seed
        )
        out[n] = float(np.mean(k * p < alpha))
    return out


@dataclass(frozen=True)
class SeedsNeeded:
    """The answer of :func:`seeds_needed` for one ``delta``: ``seeds`` (by simulation of the
    test; None when more than ``max_seeds`` are needed), ``analytic`` (the approximation's;
    None likewise), ``power`` (simulated, at ``seeds``), ``floor`` (fewest seeds at which any
    difference can count) and every power computed (``simulated``, by seeds)."""

    delta: float
    seeds: int | None
    analytic: int | None
    power: float
    floor: int
    simulated: dict[int, float]


def _first(ok: Callable[[int], bool], lo: int, hi: int) -> int | None:
    for n in range(lo, hi + 1):
        if ok(n):
            return n
    return None


def seeds_needed(
    noise: Noise,
    delta: float,
    *,
    power: float = 0.8,
    k: int = 1,
    alpha: float = 0.05,
    sims: int = 2000,
    seed: int = 0,
    max_seeds: int = 500,
    max_exact: int = MAX_EXACT,
    n_resamples: int = REPORT_RESAMPLES,
) -> SeedsNeeded:
    """Fewest seeds at which the report's test reaches ``power`` for a true mean difference
    ``delta``. The analytic approximation gives a start; the simulation of the test itself
    steps down from it while the power holds, or up until it does (at most ``max_seeds``).
    """
    level = {"max_exact": max_exact, "n_resamples": n_resamples}
    floor = _first(lambda n: attainable_level(n, alpha, k, **level) > 0, _LEAST, max_seeds)
    if floor is None:
        return SeedsNeeded(delta, None, None, 0.0, max_seeds + 1, {})
    analytic = _first(
        lambda n: analytic_power(noise.sd, delta, n, k=k, alpha=alpha, **level) >= power,
        floor,
        max_seeds,
    )
    sim: dict[int, float] = {}

    def at(n: int) -> float:
        if n not in sim:
            sim.update(
                simulated_power(noise, delta, [n], k=k, alpha=alpha, sims=sims, seed=seed, **level)
            )
        return sim[n]

    n = analytic if analytic is not None else max_seeds
    if at(n) >= power:
        while n > floor and at(n - 1) >= power:
            n -= 1
        found: int | None = n
    else:
        found = _first(lambda m: at(m) >= power, n + 1, max_seeds)
    got = sim.get(found, 0.0) if found is not None else 0.0
    return SeedsNeeded(delta, found, analytic, got, floor, dict(sorted(sim.items())))
