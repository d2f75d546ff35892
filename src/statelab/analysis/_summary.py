"""Per-run summary of finished episodes, with permutation tests against a named baseline.

The reference rows (expert, random floor) and the roles are :mod:`statelab.analysis._roles`;
the tests against the baseline and the floor are :mod:`statelab.analysis._comparisons`.
Their names that the report's modules import from here stay importable from here (``as``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import pandas as pd

from statelab.analysis._comparisons import MIN_TEST_N, TESTS, Test, Tester, adjust_pvalues, no_test
from statelab.analysis._roles import (
    REFERENCE_ROLES,
    ROLE_BASELINE,
    ROLE_COMPARED,
    ROLE_EXPERT,
    ROLE_FLOOR,
    ROLE_UNMATCHED,
    is_reference,
    reference_role,
)
from statelab.analysis._seeds import episode_figures, per_seed, run_figures
from statelab.analysis.behaviour import BEHAVIOUR_FIGURES
from statelab.analysis.stats import ADJUSTMENTS, MAX_EXACT, Adjust

DEFAULT_AXES: tuple[str, ...] = ("env", "model", "agent", "history", "format", "grounding")
"""Axis columns in display order; other constant-per-run text columns are axes too."""

EPISODE_COLUMNS: frozenset[str] = frozenset(
    {
        "run",
        "seed",
        "grp",
        "status",
        "error",
        "reason",
        "score",
        "success",
        "steps",
        "agent_calls",
        "agent_in",
        "agent_out",
        "aux_in",
        "aux_out",
        "tags",
        *BEHAVIOUR_FIGURES,
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
SUMMARY_COLUMNS: tuple[str, ...] = (
    "n",
    "failed",
    "unscored",
    "episodes",
    "episodes_failed",
    "episodes_unscored",
    "episodes_done",
    "episodes_truncated",
    "mean",
    "sd",
    "success_rate",
    "in_per_step",
    "in_per_call",
    "out_per_step",
    "score_per_1k_in",
    "aux_in_per_step",
    "cost",
    *BEHAVIOUR_FIGURES,
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
    "p_adj",
    "min_p_adj",
    "sig",
    "test",
    "floor_run",
    "floor_diff",
    "floor_ci_low",
    "floor_ci_high",
)
"""The columns of a summary after ``run`` and the axes."""


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


def summarise(
    episodes: pd.DataFrame,
    baseline: Mapping[str, str] | None,
    *,
    axes: Sequence[str] | None = None,
    test: Test = "permutation",
    adjust: Adjust = "holm",
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
    0). ``test`` names what ran. Many runs against one baseline are many tests: ``p_adj``
    is ``p`` adjusted over every compared run of the summary by ``adjust`` (``"holm"``,
    default: Holm's step-down, controls the family-wise error; ``"bh"``:
    Benjamini-Hochberg, controls the false discovery rate; ``"none"``), and ``sig`` is then
    ``p_adj < 1 - ci``. The behaviour figures (:mod:`statelab.analysis.behaviour`) are
    averaged like the scores. Reference rows (``role`` ``expert``: the privileged expert;
    ``floor``: the random agent; by the run's tags, else the agent's name) are never tested;
    every other run gets ``floor_diff`` (its mean minus its env's random floor's) with the
    percentile bootstrap interval ``[floor_ci_low, floor_ci_high]``. The axes, baseline,
    test and adjustment settings are kept in ``DataFrame.attrs``.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in episodes.columns]
    if missing:
        raise ValueError(f"episodes lacks columns: {missing}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    if adjust not in ADJUSTMENTS:
        raise ValueError(f"adjust must be one of {ADJUSTMENTS}, got {adjust!r}")
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
        row["role"] = reference_role(first.get("agent"), first.get("tags"))
        rows.append(row)
        keys.setdefault(tuple(row[a] for a in axis_cols), []).append(run)
    tester = Tester(seeds, test, n_resamples, ci, seed)
    floors: dict[Any, Hashable] = {}
    for row in rows:
        if row["role"] == ROLE_FLOOR:
            floors.setdefault(row.get("env"), row["run"])
    for row in rows:
        role = row["role"]
        row.update(baseline_run=None, floor_run=None, floor_diff=float("nan"))
        row.update(floor_ci_low=float("nan"), floor_ci_high=float("nan"))
        row.update(no_test())
        if role in REFERENCE_ROLES:
            continue
        floor = floors.get(row.get("env"))
        if floor is not None:
            row.update(tester.floor(row["run"], floor))
        if base is None:
            continue
        if all(row[k] == v for k, v in base.items()):
            row["role"] = ROLE_BASELINE
            continue
        target = tuple(base.get(a, row[a]) for a in axis_cols)
        matches = [m for m in keys.get(target, []) if m != row["run"]]
        if len(matches) > 1:
            raise ValueError(f"run {row['run']!r} matches several baseline runs: {matches}")
        if not matches:
            row["role"] = ROLE_UNMATCHED
            continue
        row.update(role=ROLE_COMPARED, baseline_run=matches[0])
        row.update(tester.compare(row["run"], matches[0]))
    n_tests = adjust_pvalues(rows, adjust, 1.0 - ci)
    summary = pd.DataFrame(rows, columns=["run", *axis_cols, *SUMMARY_COLUMNS])
    if len(summary):
        summary = _sorted(summary, axis_cols, base)
    summary.attrs.update(
        baseline=base,
        axes=axis_cols,
        test=test,
        adjust=adjust,
        n_tests=n_tests,
        n_resamples=n_resamples,
        ci=ci,
        max_exact=MAX_EXACT,
        min_test_n=MIN_TEST_N,
    )
    return summary


def _sorted(
    summary: pd.DataFrame, axis_cols: list[str], base: dict[str, str] | None
) -> pd.DataFrame:
    """Runs first, then the random floor, then the expert; otherwise by axis, in
    first-appearance order, baseline value first."""
    rank = {ROLE_FLOOR: 1, ROLE_EXPERT: 2}
    sort_keys = pd.DataFrame({"_ref": summary["role"].map(lambda r: rank.get(r, 0))})
    for a in axis_cols:
        ranks = _order(summary[a], (base or {}).get(a))
        sort_keys[a] = summary[a].map(ranks)
    order = sort_keys.sort_values(["_ref", *axis_cols], kind="stable").index
    return summary.loc[order].reset_index(drop=True)


def varying_axes(summary: pd.DataFrame) -> list[str]:
    """Axes whose value differs between non-reference runs, plus always ``env`` and
    ``agent``."""
    axes: list[str] = summary.attrs.get("axes") or [a for a in DEFAULT_AXES if a in summary.columns]
    runs = summary[~is_reference(summary)]
    return [a for a in axes if a in ("env", "agent") or runs[a].nunique(dropna=False) > 1]
