"""Per-run summary of finished episodes, with bootstrap tests against a named baseline."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from statelab.analysis.stats import bootstrap_mean_diff, mean_sd

DEFAULT_AXES: tuple[str, ...] = ("env", "model", "agent", "history", "format", "grounding")
"""Axis columns in display order; other constant-per-run text columns are axes too."""

EPISODE_COLUMNS: frozenset[str] = frozenset(
    {
        "run",
        "seed",
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
# Roles of a row with respect to the baseline comparison.
ROLE_NONE, ROLE_EXPERT, ROLE_BASELINE = "none", "expert", "baseline"
ROLE_COMPARED, ROLE_UNMATCHED = "compared", "unmatched"
MIN_TEST_N = 2  # fewer observations (or pairs) than this on a side: no test


def _nanmean(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else float("nan")


def _per_call(numerator: pd.Series, calls: np.ndarray) -> np.ndarray:
    num = numerator.to_numpy(dtype=np.float64)
    out = np.full(num.shape, np.nan)
    np.divide(num, calls, out=out, where=calls > 0)
    return out


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


def _run_stats(g: pd.DataFrame) -> dict[str, Any]:
    done = g[g["status"] == "done"]
    failed = int((g["status"] != "done").sum())
    scores = done["score"].to_numpy(dtype=np.float64)
    row: dict[str, Any] = {"n": len(done), "failed": failed}
    if len(done):
        row["mean"], row["sd"] = mean_sd(scores)
        row["success_rate"] = float(done["success"].astype(bool).mean())
    else:
        row["mean"] = row["sd"] = row["success_rate"] = float("nan")
    calls = done["agent_calls"].to_numpy(dtype=np.float64)
    in_per_call = _per_call(done["agent_in"], calls)
    row["in_per_step"] = _nanmean(in_per_call)
    row["out_per_step"] = _nanmean(_per_call(done["agent_out"], calls))
    per_1k = np.full(scores.shape, np.nan)
    np.divide(scores * 1000.0, in_per_call, out=per_1k, where=in_per_call > 0)
    row["score_per_1k_in"] = _nanmean(per_1k)
    aux = done["aux_in"] if "aux_in" in done.columns else pd.Series(np.nan, index=done.index)
    row["aux_in_per_step"] = _nanmean(_per_call(aux, calls))
    return row


def _seed_scores(g: pd.DataFrame) -> pd.Series:
    done = g[g["status"] == "done"]
    return pd.Series(done["score"].to_numpy(dtype=np.float64), index=done["seed"].to_numpy())


def _no_test() -> dict[str, Any]:
    nan = float("nan")
    return {
        "paired": False,
        "n_test": 0,
        "diff": nan,
        "ci_low": nan,
        "ci_high": nan,
        "p": nan,
        "sig": False,
    }


def _compare(x: pd.Series, y: pd.Series, n_resamples: int, ci: float, seed: int) -> dict[str, Any]:
    """Test run scores ``x`` against baseline scores ``y`` (both indexed by seed)."""
    out = _no_test()
    if x.empty or y.empty:
        return out
    shared = x.index.intersection(y.index)
    unique = x.index.is_unique and y.index.is_unique
    if unique and len(shared) >= MIN_TEST_N:
        xs, ys, paired = x.loc[shared].to_numpy(), y.loc[shared].to_numpy(), True
    else:
        xs, ys, paired = x.to_numpy(), y.to_numpy(), False
    out["paired"] = paired
    out["n_test"] = len(xs) if paired else min(len(xs), len(ys))
    out["diff"] = float(np.mean(xs) - np.mean(ys))
    if out["n_test"] < MIN_TEST_N:
        return out
    res = bootstrap_mean_diff(xs, ys, paired=paired, n_resamples=n_resamples, ci=ci, seed=seed)
    out.update(
        diff=res.diff, ci_low=res.ci_low, ci_high=res.ci_high, p=res.p_value, sig=res.significant
    )
    return out


def summarise(
    episodes: pd.DataFrame,
    baseline: Mapping[str, str] | None,
    *,
    axes: Sequence[str] | None = None,
    n_resamples: int = 10_000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per run: score mean/SD over finished episodes, token figures, baseline test.

    Each non-expert run is compared with the run that has the same value on every other axis
    and the ``baseline`` values on the baseline axes (e.g. ``{"history": "full"}``), by a
    bootstrap test of the mean difference, paired by seed (inner join) when the two runs share
    at least two seeds, unpaired otherwise. Failed episodes are counted in ``failed`` and
    excluded from every other figure. Per-step token figures divide by acting-agent calls;
    ``score_per_1k_in`` is the per-episode score per 1,000 mean input tokens per acting call
    (seed 000, Fig. 1), averaged over episodes (NaN without calls). The axes, baseline and test
    settings are kept in ``DataFrame.attrs``.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in episodes.columns]
    if missing:
        raise ValueError(f"episodes lacks columns: {missing}")
    axis_cols = _find_axes(episodes, axes)
    base = dict(baseline) if baseline else None
    if base:
        unknown = [k for k in base if k not in axis_cols]
        if unknown:
            raise ValueError(f"baseline names unknown axes: {unknown} (axes: {axis_cols})")
    rows: list[dict[str, Any]] = []
    groups: dict[Hashable, pd.DataFrame] = dict(tuple(episodes.groupby("run", sort=False)))
    keys: dict[tuple[Any, ...], list[Hashable]] = {}
    for run, g in groups.items():
        first = g.iloc[0]
        row = {"run": run, **{a: first[a] for a in axis_cols}, **_run_stats(g)}
        rows.append(row)
        keys.setdefault(tuple(row[a] for a in axis_cols), []).append(run)
    for row in rows:
        row.update(role=ROLE_NONE, baseline_run=None)
        row.update(_no_test())
        if row["agent"] == EXPERT:
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
                    _seed_scores(groups[row["run"]]),
                    _seed_scores(groups[matches[0]]),
                    n_resamples,
                    ci,
                    seed,
                )
            )
    columns = [
        "run",
        *axis_cols,
        "n",
        "failed",
        "mean",
        "sd",
        "success_rate",
        "in_per_step",
        "out_per_step",
        "score_per_1k_in",
        "aux_in_per_step",
        "role",
        "baseline_run",
        "paired",
        "n_test",
        "diff",
        "ci_low",
        "ci_high",
        "p",
        "sig",
    ]
    summary = pd.DataFrame(rows, columns=columns)
    if len(summary):
        summary = _sorted(summary, axis_cols, base)
    summary.attrs.update(baseline=base, axes=axis_cols, n_resamples=n_resamples, ci=ci)
    return summary


def _sorted(
    summary: pd.DataFrame, axis_cols: list[str], base: dict[str, str] | None
) -> pd.DataFrame:
    """Expert rows last; otherwise by axis, in first-appearance order, baseline value first."""
    sort_keys = pd.DataFrame({"_expert": summary["agent"] == EXPERT})
    for a in axis_cols:
        ranks = _order(summary[a], (base or {}).get(a))
        sort_keys[a] = summary[a].map(ranks)
    order = sort_keys.sort_values(["_expert", *axis_cols], kind="stable").index
    return summary.loc[order].reset_index(drop=True)


def varying_axes(summary: pd.DataFrame) -> list[str]:
    """Axes whose value differs between non-expert runs, plus always ``env`` and ``agent``."""
    axes: list[str] = summary.attrs.get("axes") or [a for a in DEFAULT_AXES if a in summary.columns]
    runs = summary[summary["agent"] != EXPERT] if "agent" in summary.columns else summary
    return [a for a in axes if a in ("env", "agent") or runs[a].nunique(dropna=False) > 1]
