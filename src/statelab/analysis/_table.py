"""Markdown and JSON renderings of a :func:`summarise` table, in the seeds' style.

Its cells are :mod:`statelab.analysis._cells`, the sentences under it
:mod:`statelab.analysis._legend`; their names that other modules import from here stay
importable from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from statelab.analysis._cells import (
    axis_label,
    cell_text,
    delta_cell,
    episodes_cell,
    n_cell,
    num,
    p_cell,
    score_cell,
    viewer_link,
)
from statelab.analysis._comparisons import MIN_TEST_N
from statelab.analysis._legend import legend
from statelab.analysis._md import md_row
from statelab.analysis._roles import is_reference
from statelab.analysis._summary import varying_axes
from statelab.analysis.behaviour import BEHAVIOUR_UNITS, shown_behaviour
from statelab.analysis.stats import ADJUST_NAMES, MAX_EXACT


def _show_episodes(summary: pd.DataFrame) -> bool:
    seeds = summary["n"] + summary["failed"] + summary["unscored"]
    eps = summary["episodes"] + summary["episodes_failed"] + summary["episodes_unscored"]
    cut = summary.get("episodes_truncated")
    return bool((eps != seeds).any() or (cut is not None and cut.gt(0).any()))


def _show_per_call(summary: pd.DataFrame) -> bool:
    a = summary["in_per_step"].to_numpy(dtype=np.float64)
    b = summary["in_per_call"].to_numpy(dtype=np.float64)
    both = np.isfinite(a) & np.isfinite(b)
    return bool((np.abs(a[both] - b[both]) > 1e-9 * np.maximum(1.0, a[both])).any())


_BEHAVIOUR_HEADERS = {
    "invalid_rate": "Invalid",
    "distinct_actions": "Distinct",
    "longest_repeat": "Max rep.",
    "wm_queries": "WM q.",
    "rejections": "Rejected",
    "same_memory": "Same mem.",
}
_BEHAVIOUR_FORMATS = {
    "invalid_rate": ".2f",
    "distinct_actions": ".1f",
    "longest_repeat": ".1f",
    "wm_queries": ".1f",
    "rejections": ".1f",
    "same_memory": ".2f",
}


def to_markdown(
    summary: pd.DataFrame, title: str, *, baseline: Mapping[str, str] | None = None
) -> str:
    """A Markdown table of ``summary`` with a caption and a legend below.

    Columns: the axes that vary across runs (always env and agent), mean (SD), Δ vs baseline
    [95% CI], p (pairs), n (seeds), episodes (when some run has rollouts, failures or
    truncated episodes),
    success, tokens per env step in (and per call, when they differ)/out, score per 1,000
    input tokens, then the behaviour columns the runs have
    (:func:`~statelab.analysis.behaviour.shown_behaviour`). The reference rows come last:
    the random floor ("random floor"), then the expert ("privileged expert").
    ``baseline`` defaults to the one recorded by :func:`summarise`.
    """
    if baseline is None:
        baseline = summary.attrs.get("baseline")
    axes = varying_axes(summary)
    ci = float(summary.attrs.get("ci", 0.95))
    episodes, per_call = _show_episodes(summary), _show_per_call(summary)
    header = [a.capitalize() for a in axes] + [
        "Score mean (SD)",
        f"Δ vs baseline [{ci:.0%} CI]",
        "p (pairs)",
        "n",
        *(["Episodes"] if episodes else []),
        "Success",
        "In tok/step",
        *(["In tok/call"] if per_call else []),
        "Out tok/step",
        "Score/1k in",
    ]
    cost = "cost" in summary.columns and bool(np.isfinite(summary["cost"].astype(float)).any())
    header += ["Cost $"] if cost else []
    behaviour = shown_behaviour(summary)
    header += [_BEHAVIOUR_HEADERS[b] for b in behaviour]
    viewer = "run_id" in summary.columns and summary["run_id"].notna().any()
    header += ["Viewer"] if viewer else []
    rows = summary.assign(_ref=is_reference(summary)).sort_values("_ref", kind="stable")
    lines = [
        f"**{cell_text(title)}**",
        "",
        md_row(header),
        "|" + "|".join(["---"] * len(axes) + ["---:"] * (len(header) - len(axes))) + "|",
    ]
    for rec in rows.to_dict("records"):
        cells = [axis_label(rec, a) for a in axes] + [
            score_cell(rec),
            delta_cell(rec),
            p_cell(rec, summary.attrs),
            n_cell(rec),
            *([episodes_cell(rec)] if episodes else []),
            num(rec["success_rate"], ".2f"),
            num(rec["in_per_step"], ",.0f"),
            *([num(rec["in_per_call"], ",.0f")] if per_call else []),
            num(rec["out_per_step"], ",.0f"),
            num(rec["score_per_1k_in"], ".3f"),
            *([num(rec["cost"], ",.4f")] if cost else []),
            *[num(rec[b], _BEHAVIOUR_FORMATS[b]) for b in behaviour],
            *([viewer_link(rec.get("run_id"))] if viewer else []),
        ]
        lines.append(md_row(cells))
    lines += ["", legend(summary, baseline), ""]
    return "\n".join(lines)


def _plain(value: Any) -> Any:
    """A JSON-ready value: numpy scalars unwrapped, NaN/inf and pandas NA to ``None``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def to_json(summary: pd.DataFrame) -> dict[str, Any]:
    """Machine-readable summary: settings plus one record per run (NaN -> ``None``)."""
    attrs = summary.attrs
    baseline = attrs.get("baseline")
    test = attrs.get("test", "permutation")
    return {
        "baseline": dict(baseline) if baseline else None,
        "axes": list(attrs.get("axes", [])),
        "test": {
            "method": (
                "percentile bootstrap of the mean difference (significant: CI excludes 0)"
                if test == "bootstrap"
                else "two-sided permutation test of the mean difference: exact sign-flip "
                "(paired; Monte Carlo beyond max_exact sign patterns) or label permutation "
                "(unpaired); significant: p < 1 - ci"
            ),
            "name": test,
            "interval": "percentile bootstrap of the mean difference",
            "n_resamples": int(attrs.get("n_resamples", 10_000)),
            "max_exact": int(attrs.get("max_exact", MAX_EXACT)),
            "ci": float(attrs.get("ci", 0.95)),
            "paired_by": "seed",
            "min_pairs": int(attrs.get("min_test_n", MIN_TEST_N)),
            "adjust": str(attrs.get("adjust", "none")),
            "adjust_method": ADJUST_NAMES[str(attrs.get("adjust", "none"))],
            "n_tests": int(attrs.get("n_tests", 0)),
            "significant": "p_adj < 1 - ci (p when adjust is none)",
        },
        "units": {
            "n": "seeds with a score (rollouts averaged per seed first)",
            "failed": "seeds with no finished episode",
            "unscored": "seeds whose finished episodes all lack a score",
            "episodes": "scored episodes (episodes_failed, episodes_unscored likewise)",
            "episodes_done": "episodes played to their end (the env's end, its step budget,"
            " or the agent's or derail rule's stop), scored or not",
            "episodes_truncated": "episodes cut by a per-episode limit (limits:), scored as"
            " they stand at the cut: the env's score at their last step",
            "episodes_failed": "episodes an error ended (not scored; their steps are stored)",
            "sd": "sample SD over seeds (ddof = 1); null for n = 1",
            "success_rate": "share of successful episodes (per seed, then averaged)",
            "in_per_step": "acting-agent input tokens per env step",
            "in_per_call": "acting-agent input tokens per acting-model call",
            "score_per_1k_in": "per episode: 1000 * score / in_per_step, then averaged",
            "cost": "US dollars of the run's model calls over all its episodes (failed ones"
            " included, cache hits free), by the backend's price table; null where unknown",
            "p_adj": "p adjusted over the n_tests compared runs (test.adjust)",
            "min_p_adj": "the least p_adj this test's n and n_tests allow (no * where it is"
            " at or above 1 - ci)",
            "floor_diff": "mean minus the env's random floor's mean (floor_ci_*: bootstrap CI)",
            **BEHAVIOUR_UNITS,
        },
        "runs": [{str(k): _plain(v) for k, v in rec.items()} for rec in summary.to_dict("records")],
    }
