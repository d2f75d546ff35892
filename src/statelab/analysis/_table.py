"""Markdown and JSON renderings of a :func:`summarise` table, in the seeds' style."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from statelab.analysis._md import Link, md_row
from statelab.analysis._summary import (
    EXPERT_LABEL,
    EXPERT_NOTE,
    FLOOR_LABEL,
    FLOOR_NOTE,
    MIN_TEST_N,
    ROLE_BASELINE,
    ROLE_COMPARED,
    ROLE_EXPERT,
    ROLE_FLOOR,
    is_reference,
    varying_axes,
)
from statelab.analysis.behaviour import BEHAVIOUR_UNITS, shown_behaviour
from statelab.analysis.stats import ADJUST_NAMES, MAX_EXACT, min_attainable_p

DASH = "–"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _cell(value: Any) -> str:
    """A table cell: text with pipes escaped and newlines flattened."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def _num(value: Any, fmt: str, signed: bool = False) -> str:
    if _missing(value):
        return DASH
    return format(float(value), ("+" if signed else "") + fmt)


def _alpha(summary_attrs: Mapping[str, Any]) -> float:
    return 1.0 - float(summary_attrs.get("ci", 0.95))


def score_cell(row: Mapping[str, Any]) -> str:
    """``"0.46 (0.12)*"``: mean, sample SD in parentheses ("–" for one seed), ``*`` when
    significant vs baseline."""
    if _missing(row["mean"]):
        return DASH
    star = "*" if row["role"] == ROLE_COMPARED and bool(row["sig"]) else ""
    return f"{row['mean']:.2f} ({_num(row['sd'], '.2f')}){star}"


def _delta_cell(row: Mapping[str, Any]) -> str:
    role = row["role"]
    if role == ROLE_BASELINE:
        return "baseline"
    if role != ROLE_COMPARED or _missing(row["diff"]):
        return DASH
    diff = _num(row["diff"], ".2f", signed=True)
    if _missing(row["ci_low"]):
        return f"{diff} [too few seeds]"
    low, high = _num(row["ci_low"], ".2f", True), _num(row["ci_high"], ".2f", True)
    return f"{diff} [{low}, {high}]"


def _p_text(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3g}"


#: the adjustments' names in a p cell
_ADJ_SHORT = {"holm": "Holm", "bh": "BH"}


def _pairs(row: Mapping[str, Any]) -> str:
    if bool(row["paired"]):
        k = int(row["n_test"])
        return f"{k} pair" + ("" if k == 1 else "s")
    return f"unpaired, {int(row['n_test'])} vs {int(row['n_base'])} seeds"


def p_cell(row: Mapping[str, Any], attrs: Mapping[str, Any]) -> str:
    """``"0.031 (6 pairs)"``: the test's p and what it was over, and, when the test cannot
    reach the level at all, why (``"n too small for p<0.05"``)."""
    if row["role"] != ROLE_COMPARED or _missing(row["diff"]):
        return DASH
    if _missing(row["p"]):
        return f"{DASH} ({_pairs(row)}; needs {MIN_TEST_N})"
    text = f"{_p_text(float(row['p']))} ({_pairs(row)}"
    short = _ADJ_SHORT.get(str(attrs.get("adjust", "none")))
    if short and int(attrs.get("n_tests", 0)) > 1 and not _missing(row.get("p_adj")):
        text += f"; {short} {_p_text(float(row['p_adj']))}"
    alpha = _alpha(attrs)
    if not _missing(row.get("min_p")) and float(row["min_p"]) >= alpha:
        design = min_attainable_p(
            int(row["n_test"]),
            int(row["n_base"]),
            paired=bool(row["paired"]),
            n_resamples=int(attrs.get("n_resamples", 10_000)),
            max_exact=int(attrs.get("max_exact", MAX_EXACT)),
        )
        why = "n too small" if design >= alpha else "too few non-zero differences"
        text += f"; {why} for p<{alpha:g}"
    return text + ")"


def _count_cell(n: int, failed: int, unscored: int) -> str:
    extra = [f"+{failed} failed"] if failed else []
    extra += [f"+{unscored} no score"] if unscored else []
    return f"{n} ({', '.join(extra)})" if extra else str(n)


def _n_cell(row: Mapping[str, Any]) -> str:
    """Seeds: with a score, then (+ failed, + finished without a score)."""
    return _count_cell(int(row["n"]), int(row["failed"]), int(row["unscored"]))


def _episodes_cell(row: Mapping[str, Any]) -> str:
    return _count_cell(
        int(row["episodes"]), int(row["episodes_failed"]), int(row["episodes_unscored"])
    )


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
    alpha = _alpha(attrs)
    if method == "none":
        return f"No adjustment for the {k} comparisons: each `*` is its own test."
    name = ADJUST_NAMES[method]
    tail = f" (shown in the p column as {_ADJ_SHORT[method]} p)" if k > 1 else ""
    return (
        f"Many runs against one baseline are many tests: p is adjusted over the {k} "
        f"comparison{'s' if k != 1 else ''} of this table by {name}{tail}, and `*` marks an "
        f"adjusted p < {alpha:g}."
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
        "score. Episodes (shown with rollouts or failures): the same counts over episodes. "
        "Failed and unscored episodes are excluded from every figure. Success: share of "
        "successful episodes. Tokens: the acting agent's input/output per env step (In "
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


def _show_episodes(summary: pd.DataFrame) -> bool:
    seeds = summary["n"] + summary["failed"] + summary["unscored"]
    eps = summary["episodes"] + summary["episodes_failed"] + summary["episodes_unscored"]
    return bool((eps != seeds).any())


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
_REFERENCE_LABELS = {ROLE_EXPERT: EXPERT_LABEL, ROLE_FLOOR: FLOOR_LABEL}


def axis_label(rec: Mapping[str, Any], axis: str) -> str:
    """A run's cell on ``axis`` as every table shows it (the one place labels are rendered:
    a reference row's agent is named by its role; text is escaped by :func:`md_row`)."""
    value = rec.get(axis)
    if axis == "agent" and rec.get("role") in _REFERENCE_LABELS:
        value = _REFERENCE_LABELS[str(rec["role"])]
    return _cell(value)


#: where the report (``results/<name>/report/``) finds the experiment's page (``statelab view``)
VIEWER_PAGE = "../view/index.html"


def viewer_link(run_id: Any) -> Link | str:
    """The run's episodes in the viewer (written by ``statelab view``), or '–'."""
    if not isinstance(run_id, str) or not run_id:
        return "–"
    return Link("episodes", f"{VIEWER_PAGE}#run={run_id}")


def to_markdown(
    summary: pd.DataFrame, title: str, *, baseline: Mapping[str, str] | None = None
) -> str:
    """A Markdown table of ``summary`` with a caption and a legend below.

    Columns: the axes that vary across runs (always env and agent), mean (SD), Δ vs baseline
    [95% CI], p (pairs), n (seeds), episodes (when some run has rollouts or failures),
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
        f"**{_cell(title)}**",
        "",
        md_row(header),
        "|" + "|".join(["---"] * len(axes) + ["---:"] * (len(header) - len(axes))) + "|",
    ]
    for rec in rows.to_dict("records"):
        cells = [axis_label(rec, a) for a in axes] + [
            score_cell(rec),
            _delta_cell(rec),
            p_cell(rec, summary.attrs),
            _n_cell(rec),
            *([_episodes_cell(rec)] if episodes else []),
            _num(rec["success_rate"], ".2f"),
            _num(rec["in_per_step"], ",.0f"),
            *([_num(rec["in_per_call"], ",.0f")] if per_call else []),
            _num(rec["out_per_step"], ",.0f"),
            _num(rec["score_per_1k_in"], ".3f"),
            *([_num(rec["cost"], ",.4f")] if cost else []),
            *[_num(rec[b], _BEHAVIOUR_FORMATS[b]) for b in behaviour],
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
            "sd": "sample SD over seeds (ddof = 1); null for n = 1",
            "success_rate": "share of successful episodes (per seed, then averaged)",
            "in_per_step": "acting-agent input tokens per env step",
            "in_per_call": "acting-agent input tokens per acting-model call",
            "score_per_1k_in": "per episode: 1000 * score / in_per_step, then averaged",
            "cost": "US dollars of the run's model calls over all its episodes (failed ones"
            " included, cache hits free), by the backend's price table; null where unknown",
            "p_adj": "p adjusted over the n_tests compared runs (test.adjust)",
            "floor_diff": "mean minus the env's random floor's mean (floor_ci_*: bootstrap CI)",
            **BEHAVIOUR_UNITS,
        },
        "runs": [{str(k): _plain(v) for k, v in rec.items()} for rec in summary.to_dict("records")],
    }
