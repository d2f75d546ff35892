"""Seed 003's measures: decision loss, β and κ, relevance lag, the game bootstraps."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

LAG_THRESHOLD = 0.5
#: bootstrap resamples and seed
RESAMPLES = 10_000
BOOT_SEED = 0
#: privileged strings shorter than this are not checked (e.g. "look")
MIN_SECRET = 6
AUDIT_TABLE = "seed003_audit"
LEAK_TABLE = "seed003_leaks"
#: one row per ``statelab audit``: when it started, and when it finished (NULL: it did not)
AUDIT_RUNS_TABLE = "seed003_audit_runs"


# -- decision loss, β and κ ---------------------------------------------------------------
def decision_loss(logprobs: Mapping[str, float], a_star: str | None) -> float | None:
    """−log p(a*) from a reader's normalised log-probabilities of every command (None when
    a* is unknown or not among them)."""
    if a_star is None or a_star not in logprobs:
        return None
    return -float(logprobs[a_star])


@dataclass(frozen=True)
class Decomposition:
    """δ_full, δ_oracle, δ_W at one decision point, and β, κ."""

    full: float
    oracle: float
    writer: float

    @property
    def beta(self) -> float:
        return self.oracle - self.full

    @property
    def kappa(self) -> float:
        return self.writer - self.oracle


def decompose(full: float, oracle: float, writer: float) -> Decomposition:
    return Decomposition(full, oracle, writer)


# -- relevance lag ------------------------------------------------------------------------
@dataclass(frozen=True)
class RelevanceLag:
    #: steps between the most consequential chunk and the decision (None: undefined)
    lag: int | None
    #: that chunk's index (oldest first), and the NLL increase its removal caused
    chunk: int | None
    gain: float


def relevance_lag(
    base: float, without: Sequence[float], threshold: float = LAG_THRESHOLD
) -> RelevanceLag:
    """The lag from the NLL with every chunk (``base``) and with each chunk left out."""
    if not without:
        return RelevanceLag(None, None, 0.0)
    gains = [w - base for w in without]
    best = max(gains)
    if best < threshold:
        return RelevanceLag(None, None, best)
    i = next(k for k, g in enumerate(gains) if g == best)  # ties: the earliest chunk
    return RelevanceLag(len(gains) - 1 - i, i, best)


async def leave_one_chunk_out(
    chunks: Sequence[str], nll: Callable[[Sequence[str]], Awaitable[float]]
) -> tuple[float, list[float]]:
    """``nll`` of the whole history and of the history without each chunk in turn."""
    base = await nll(chunks)
    without = [await nll([c for j, c in enumerate(chunks) if j != i]) for i in range(len(chunks))]
    return base, without


# -- bootstrap ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    #: games (clusters) and points behind it
    games: int
    points: int

    def text(self, digits: int = 2, scale: float = 1.0) -> str:
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
