"""Per-run summary of finished episodes, with permutation tests against a named baseline."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from statelab.analysis._components import is_expert
from statelab.analysis._seeds import episode_figures, per_seed, run_figures, seed_scores
from statelab.analysis.stats import MAX_EXACT, bootstrap_mean_diff, permutation_mean_diff

DEFAULT_AXES: tuple[str, ...] = ("env", "model", "agent", "history", "format", "grounding")
"""Axis columns in display order; other constant-per-run text columns are axes too."""

EPISODE_COLUMNS: frozenset[str] = frozenset(
    {
        "run",
        "seed",
        "grp",
        "status",
        "error",
        "score",
        "success",
        "steps",
        "agent_calls",
        "agent_in",
        "agent_out",
        "aux_in",
        "aux_out",
    }
)
REQUIRED_COLUMNS: tuple[str, ...] = (
    "run",
    "env",
    "agent",
    "seed",
    "status",
    "score",
    "success",
    "agent_calls",
    "agent_in",
    "agent_out",
)
EXPERT = "expert"
#: How reports label the expert's rows: it reads the env's privileged state.
EXPERT_LABEL = "privileged expert"
EXPERT_NOTE = (
    "privileged expert: the env's scripted expert, which reads hidden state the agents cannot"
    " see (a ceiling for reference; not tested)"
)
# Roles of a row with respect to the baseline comparison.
ROLE_NONE, ROLE_EXPERT, ROLE_BASELINE = "none", "expert", "baseline"
ROLE_COMPARED, ROLE_UNMATCHED = "compared", "unmatched"
MIN_TEST_N = 2  # fewer seeds (or pairs) than this on a side: no test
Test = Literal["permutation", "bootstrap"]
SUMMARY_COLUMNS: tuple[str, ...] = (
    "n",
    "failed",
    "unscored",
    "episodes",
    "episodes_failed",
    "episodes_unscored",
    "mean",
    "sd",
    "success_rate",
    "in_per_step",
    "in_per_call",
    "out_per_step",
    "score_per_1k_in",
    "aux_in_per_step",
    "role",
    "baseline_run",
    "paired",
    "n_test",
    "n_base",
    "diff",
    "ci_low",
    "ci_high",
    "p",
    "min_p",
    "sig",
    "test",
)
"""The columns of a summary after ``run`` and the axes."""
TESTS: tuple[str, ...] = ("permutation", "bootstrap")


def _find_axes(episodes: pd.DataFrame, axes: Sequence[str] | None) -> list[str]:
    if axes is not None:
        missing = [a for a in axes if a not in episodes.columns]
        if missing:
            raise ValueError(f"axis columns not in episodes: {missing}")
        found = list(axes)
    else:
        found = [a for a in DEFAULT_AXES if a in episodes.columns]
        for col in episodes.columns:
            if col in EPISODE_COLUMNS or col in DEFAULT_AXES:
                continue
            if pd.api.types.is_string_dtype(episodes[col]) and (
                episodes.groupby("run", sort=False)[col].nunique(dropna=False).le(1).all()
            ):
                found.append(col)
    varying = episodes.groupby("run", sort=False)[found].nunique(dropna=False).gt(1).any()
    if varying.any():
        bad = list(varying[varying].index)
        raise ValueError(f"axis columns {bad} are not constant within a run")
    return found


def _order(values: pd.Series, first: str | None) -> dict[Hashable, int]:
    """Rank of each value: first appearance order, with ``first`` (the baseline) first."""
    uniq: list[Hashable] = list(dict.fromkeys(values.tolist()))
    if first is not None and first in uniq:
        uniq.remove(first)
        uniq.insert(0, first)
    return {v: i for i, v in enumerate(uniq)}


def _no_test() -> dict[str, Any]:
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
    out = _no_test()
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


def summarise(
    episodes: pd.DataFrame,
    baseline: Mapping[str, str] | None,
    *,
    axes: Sequence[str] | None = None,
    test: Test = "permutation",
    n_resamples: int = 10_000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per run: score mean/SD over seeds, token figures, test against the baseline.

    Units (see :mod:`statelab.analysis._seeds`): every figure is computed per episode,
    averaged over a seed's scored episodes (its rollouts), then over seeds; a seed is the
    ``grp`` column when present (the store's config seed), else ``seed``. ``n`` counts seeds
    with a score; ``failed`` and ``unscored`` count the other seeds (some episode failed / all
    finished without a score); ``episodes*`` count episodes. Failed and unscored episodes are
    excluded from every figure. ``sd`` is the sample SD over seeds (NaN for n = 1).
    ``success_rate`` is the share of successful episodes. ``in_per_step`` /
    ``out_per_step`` / ``aux_in_per_step`` are tokens per env step, ``in_per_call`` per
    acting-model call; ``score_per_1k_in`` is seed 000's Fig. 1 (per-episode score per 1,000
    mean acting input tokens per env step, then averaged; NaN without tokens).

    Each non-expert run is compared with the run that has the same value on every other axis
    and the ``baseline`` values on the baseline axes (e.g. ``{"history": "full"}``), paired by
    seed (inner join) when the two runs share at least two seeds, unpaired otherwise.
    ``diff`` is the mean difference, ``[ci_low, ci_high]`` its percentile bootstrap interval
    (``n_resamples``, ``ci``); ``p`` and ``sig`` come from ``test``: ``"permutation"``
    (default; exact sign-flip test over the pairs, Monte Carlo beyond 13, or a label
    permutation test when unpaired; ``sig`` when ``p < 1 - ci``; ``min_p`` is the smallest p
    it could give) or ``"bootstrap"`` (the seeds' test: ``sig`` when the interval excludes
    0). ``test`` names what ran. The axes, baseline and test settings are kept in
    ``DataFrame.attrs``.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in episodes.columns]
    if missing:
        raise ValueError(f"episodes lacks columns: {missing}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    axis_cols = _find_axes(episodes, axes)
    base = dict(baseline) if baseline else None
    if base:
        unknown = [k for k in base if k not in axis_cols]
        if unknown:
            raise ValueError(f"baseline names unknown axes: {unknown} (axes: {axis_cols})")
    rows: list[dict[str, Any]] = []
    figures = episode_figures(episodes)
    seeds: dict[Hashable, pd.DataFrame] = {}
    keys: dict[tuple[Any, ...], list[Hashable]] = {}
    for run, g in figures.groupby("run", sort=False):
        first = g.iloc[0]
        seeds[run] = per_seed(g)
        row = {"run": run, **{a: first[a] for a in axis_cols}, **run_figures(seeds[run])}
        rows.append(row)
        keys.setdefault(tuple(row[a] for a in axis_cols), []).append(run)
    for row in rows:
        row.update(role=ROLE_NONE, baseline_run=None)
        row.update(_no_test())
        if is_expert(row["agent"]):
            row["role"] = ROLE_EXPERT
        elif base is None:
            continue
        elif all(row[k] == v for k, v in base.items()):
            row["role"] = ROLE_BASELINE
        else:
            target = tuple(base.get(a, row[a]) for a in axis_cols)
            matches = keys.get(target, [])
            if len(matches) > 1:
                raise ValueError(f"run {row['run']!r} matches several baseline runs: {matches}")
            if not matches:
                row["role"] = ROLE_UNMATCHED
                continue
            row.update(role=ROLE_COMPARED, baseline_run=matches[0])
            row.update(
                _compare(
                    seed_scores(seeds[row["run"]]),
                    seed_scores(seeds[matches[0]]),
                    test,
                    n_resamples,
                    ci,
                    seed,
                )
            )
    summary = pd.DataFrame(rows, columns=["run", *axis_cols, *SUMMARY_COLUMNS])
    if len(summary):
        summary = _sorted(summary, axis_cols, base)
    summary.attrs.update(
        baseline=base,
        axes=axis_cols,
        test=test,
        n_resamples=n_resamples,
        ci=ci,
        max_exact=MAX_EXACT,
        min_test_n=MIN_TEST_N,
    )
    return summary


def is_expert_row(row: Mapping[str, Any]) -> bool:
    """Whether a summary row is the expert's: its role, else its agent's ``expert`` tag."""
    if "role" in row:
        return bool(row["role"] == ROLE_EXPERT)
    return "agent" in row and is_expert(row["agent"])


def expert_rows(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a summary (or runs) frame are the expert's (see :func:`is_expert_row`)."""
    if "role" in frame.columns:
        return frame["role"] == ROLE_EXPERT
    if "agent" not in frame.columns:
        return pd.Series(False, index=frame.index, dtype=bool)
    return frame["agent"].map(is_expert).astype(bool)


def _sorted(
    summary: pd.DataFrame, axis_cols: list[str], base: dict[str, str] | None
) -> pd.DataFrame:
    """Expert rows last; otherwise by axis, in first-appearance order, baseline value first."""
    sort_keys = pd.DataFrame({"_expert": expert_rows(summary)})
    for a in axis_cols:
        ranks = _order(summary[a], (base or {}).get(a))
        sort_keys[a] = summary[a].map(ranks)
    order = sort_keys.sort_values(["_expert", *axis_cols], kind="stable").index
    return summary.loc[order].reset_index(drop=True)


def varying_axes(summary: pd.DataFrame) -> list[str]:
    """Axes whose value differs between non-expert runs, plus always ``env`` and ``agent``."""
    axes: list[str] = summary.attrs.get("axes") or [a for a in DEFAULT_AXES if a in summary.columns]
    runs = summary[~expert_rows(summary)]
    return [a for a in axes if a in ("env", "agent") or runs[a].nunique(dropna=False) > 1]
