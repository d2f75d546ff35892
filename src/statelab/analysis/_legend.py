"""The sentences under a summary table (:mod:`statelab.analysis._table`): the units, the
baseline, which test marks ``*`` and how its p values were adjusted, the behaviour columns."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from statelab.analysis._cells import ADJ_SHORT, alpha_of
from statelab.analysis._comparisons import MIN_TEST_N
from statelab.analysis._roles import EXPERT_NOTE, FLOOR_NOTE, ROLE_EXPERT, ROLE_FLOOR
from statelab.analysis.behaviour import shown_behaviour
from statelab.analysis.stats import ADJUST_NAMES, MAX_EXACT


def describe_baseline(baseline: Mapping[str, str] | None) -> str:
    if not baseline:
        return "none"
    return ", ".join(f"{k} = {v}" for k, v in baseline.items())


def describe_test(attrs: Mapping[str, Any]) -> str:
    """One sentence: which test marks ``*``, at what level, and what the interval is."""
    n_resamples = int(attrs.get("n_resamples", 10_000))
    ci = float(attrs.get("ci", 0.95))
    alpha = 1.0 - ci
    pairs = int(math.log2(int(attrs.get("max_exact", MAX_EXACT))))
    interval = (
        f"Δ's interval: percentile bootstrap over seeds, {n_resamples:,} resamples, {ci:.0%} CI"
    )
    if attrs.get("test") == "bootstrap":
        mark = (
            f"`*`: the {ci:.0%} percentile bootstrap interval of the mean difference excludes 0"
            if attrs.get("adjust", "none") == "none"
            else f"`*`: the p of the {ci:.0%} percentile bootstrap interval, adjusted below, is"
            f" < {alpha:g}"
        )
        return (
            f"{mark} (the seeds' test, {n_resamples:,} resamples; p read off the same "
            "resamples). This test over-rejects at small n (see benchmarks/significance.py)."
        )
    return (
        f"`*`: p < {alpha:g} by a two-sided permutation test of the mean difference over seeds: "
        f"paired, an exact sign-flip test (all 2^n sign patterns up to {pairs} pairs, "
        f"{n_resamples:,} Monte Carlo draws beyond); unpaired, a permutation test of the run "
        "labels. Its false-positive rate stays at or under the level at every n; with 5 or "
        "fewer pairs no p below 0.05 exists, and the p column says so. "
        f"{interval} (reported, not used for the `*`)."
    )


def describe_adjust(attrs: Mapping[str, Any]) -> str:
    """One sentence: how the p values were adjusted for the number of comparisons."""
    method = str(attrs.get("adjust", "none"))
    k = int(attrs.get("n_tests", 0))
    alpha = alpha_of(attrs)
    if method == "none":
        return f"No adjustment for the {k} comparisons: each `*` is its own test."
    name = ADJUST_NAMES[method]
    tail = f" (shown in the p column as {ADJ_SHORT[method]} p)" if k > 1 else ""
    limit = (
        f" Holm multiplies the smallest p by {k}: where {k} × (least p at that n) ≥ {alpha:g}"
        f" no `*` can exist, and the p column says so."
        if method == "holm" and k > 1
        else ""
    )
    return (
        f"Many runs against one baseline are many tests: p is adjusted over the {k} "
        f"comparison{'s' if k != 1 else ''} of this table by {name}{tail}, and `*` marks an "
        f"adjusted p < {alpha:g}.{limit}"
    )


def behaviour_legend(summary: pd.DataFrame) -> str:
    """What the behaviour columns are."""
    names = {
        "invalid_rate": "Invalid: share of env steps whose action the env refused",
        "distinct_actions": "Distinct: distinct actions per episode",
        "longest_repeat": "Max rep.: the longest run of one action on consecutive steps",
        "wm_queries": "WM q.: world-model questions per episode",
        "rejections": "Rejected: proposals rejected before the env ran them, per episode",
        "same_memory": "Same mem.: share of memory writes that left the memory unchanged",
    }
    shown = [names[c] for c in shown_behaviour(summary)]
    return (
        "Behaviour (per episode from the stored steps, averaged like the scores): "
        + "; ".join(shown)
        + "."
    )


def legend(summary: pd.DataFrame, baseline: Mapping[str, str] | None) -> str:
    """The lines under the table: units, the ``*``, the test and the interval."""
    cells = (
        "Cells: mean normalised score (sample SD, ddof = 1; – for n = 1) over seeds, scores "
        "in [0, 1]. n: seeds with a score (each seed's rollouts averaged first); +k failed: "
        "seeds with no finished episode; +k no score: seeds whose finished episodes have no "
        "score. Episodes (shown with rollouts, failures or cuts): the same counts over "
        "episodes; k truncated: episodes cut by a per-episode limit (limits:), scored as they "
        "stand at the cut (the env's score at their last step). Failed and unscored episodes "
        "are excluded from every figure. Success: share of successful episodes. Tokens: the "
        "acting agent's input/output per env step (In "
        "tok/call: per acting-model call, shown when a step can take several calls); "
        "auxiliary calls such as summaries are excluded. Score/1k in: per episode, score × "
        "1,000 / mean input tokens per env step (seed 000, Fig. 1), then averaged."
    )
    if shown_behaviour(summary):
        cells += " " + behaviour_legend(summary)
    roles = set(summary["role"]) if "role" in summary.columns else set()
    for role, note in ((ROLE_FLOOR, FLOOR_NOTE), (ROLE_EXPERT, EXPERT_NOTE)):
        if role in roles:
            cells += f" {note[0].upper()}{note[1:]}."
    if not baseline:
        return f"{cells} No baseline given, so no significance tests."
    return (
        f"{cells} Baseline: {describe_baseline(baseline)}, every other axis equal; runs are "
        f"paired by seed where they share at least {MIN_TEST_N} (Δ and p are then over the "
        f"shared seeds). Δ = run mean minus baseline mean. {describe_test(summary.attrs)} "
        f"{describe_adjust(summary.attrs)}"
    )
