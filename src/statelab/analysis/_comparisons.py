"""How :func:`~statelab.analysis._summary.summarise` tests a run: against its baseline run
(the report's test, permutation or bootstrap, paired by seed where it can be), against its
env's random floor (the bootstrap interval), and the adjustment of the p values over the
compared runs."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Literal

import numpy as np
import pandas as pd

from statelab.analysis._roles import ROLE_COMPARED
from statelab.analysis._seeds import seed_scores
from statelab.analysis.stats import (
    Adjust,
    adjust_p,
    bootstrap_mean_diff,
    min_adjusted_p,
    permutation_mean_diff,
)

MIN_TEST_N = 2  # fewer seeds (or pairs) than this on a side: no test
Test = Literal["permutation", "bootstrap"]
TESTS: tuple[str, ...] = ("permutation", "bootstrap")


def no_test() -> dict[str, Any]:
    nan = float("nan")
    return {
        "paired": False,
        "n_test": 0,
        "n_base": 0,
        "diff": nan,
        "ci_low": nan,
        "ci_high": nan,
        "p": nan,
        "min_p": nan,
        "p_adj": nan,
        "min_p_adj": nan,
        "sig": False,
        "test": None,
    }


def _compare(
    x: pd.Series, y: pd.Series, test: Test, n_resamples: int, ci: float, seed: int
) -> dict[str, Any]:
    """Test run seed scores ``x`` against baseline seed scores ``y`` (both indexed by seed).

    Paired over the shared seeds when there are at least :data:`MIN_TEST_N`, else unpaired.
    The interval is always the percentile bootstrap; the ``*`` (``sig``) comes from ``test``:
    ``"permutation"`` (p < 1 - ci) or ``"bootstrap"`` (the interval excludes 0).
    """
    out = no_test()
    if x.empty or y.empty:
        return out
    shared = x.index.intersection(y.index)
    if len(shared) >= MIN_TEST_N:
        xs, ys, paired = x.loc[shared].to_numpy(), y.loc[shared].to_numpy(), True
    else:
        xs, ys, paired = x.to_numpy(), y.to_numpy(), False
    out.update(paired=paired, n_test=len(xs), n_base=len(ys))
    out["diff"] = float(np.mean(xs) - np.mean(ys))
    if min(len(xs), len(ys)) < MIN_TEST_N:
        return out
    boot = bootstrap_mean_diff(xs, ys, paired=paired, n_resamples=n_resamples, ci=ci, seed=seed)
    out.update(diff=boot.diff, ci_low=boot.ci_low, ci_high=boot.ci_high)
    if test == "bootstrap":
        out.update(p=boot.p_value, sig=boot.significant, test="bootstrap")
        return out
    perm = permutation_mean_diff(xs, ys, paired=paired, n_resamples=n_resamples, seed=seed)
    kind = "exact" if perm.exact else f"Monte Carlo, {perm.n_resamples:,}"
    out.update(
        p=perm.p_value,
        min_p=perm.min_p,
        sig=bool(perm.p_value < 1.0 - ci),
        test=f"{perm.method} ({kind})",
    )
    return out


class Tester:
    """The comparisons of one summary: against the baseline (the report's test) and against
    the random floor (the bootstrap interval, for the floor warning)."""

    def __init__(
        self, seeds: dict[Hashable, pd.DataFrame], test: Test, n: int, ci: float, seed: int
    ):
        self.seeds, self.test, self.n, self.ci, self.seed = seeds, test, n, ci, seed

    def compare(self, run: Hashable, base: Hashable) -> dict[str, Any]:
        x, y = seed_scores(self.seeds[run]), seed_scores(self.seeds[base])
        return _compare(x, y, self.test, self.n, self.ci, self.seed)

    def floor(self, run: Hashable, floor: Hashable) -> dict[str, Any]:
        x, y = seed_scores(self.seeds[run]), seed_scores(self.seeds[floor])
        got = _compare(x, y, "bootstrap", self.n, self.ci, self.seed)
        return {
            "floor_run": floor,
            "floor_diff": got["diff"],
            "floor_ci_low": got["ci_low"],
            "floor_ci_high": got["ci_high"],
        }


def adjust_pvalues(rows: list[dict[str, Any]], method: Adjust, alpha: float) -> int:
    """Adjust the compared runs' p values for their number (``p_adj``); unless ``method`` is
    ``"none"``, ``sig`` becomes ``p_adj < alpha``. ``min_p_adj`` is the least adjusted p the
    tests' designs allow (:func:`~statelab.analysis.stats.min_adjusted_p`; NaN where a test
    has no ``min_p``, e.g. the bootstrap). Returns the number of tests adjusted over."""
    tested = [r for r in rows if r["role"] == ROLE_COMPARED and np.isfinite(r["p"])]
    if not tested:
        return 0
    adjusted = adjust_p([float(r["p"]) for r in tested], method)
    least = [float(r.get("min_p", float("nan"))) for r in tested]
    floors = (
        min_adjusted_p(least, method) if all(np.isfinite(least)) else [float("nan")] * len(least)
    )
    for r, p, floor in zip(tested, adjusted, floors, strict=True):
        r["p_adj"] = float(p)
        r["min_p_adj"] = float(floor)
        if method != "none":
            r["sig"] = bool(p < alpha)
    return len(tested)
