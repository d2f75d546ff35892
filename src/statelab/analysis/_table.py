"""Markdown and JSON renderings of a :func:`summarise` table, in the seeds' style."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from statelab.analysis._summary import (
    EXPERT,
    ROLE_BASELINE,
    ROLE_COMPARED,
    varying_axes,
)

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


def score_cell(row: Mapping[str, Any]) -> str:
    """``"0.46 (0.12)*"``: mean, SD in parentheses, ``*`` when significant vs baseline."""
    if _missing(row["mean"]):
        return DASH
    star = "*" if row["role"] == ROLE_COMPARED and bool(row["sig"]) else ""
    return f"{row['mean']:.2f} ({row['sd']:.2f}){star}"


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


def _n_cell(row: Mapping[str, Any]) -> str:
    failed = int(row["failed"])
    return f"{int(row['n'])} (+{failed} failed)" if failed else str(int(row["n"]))


def describe_baseline(baseline: Mapping[str, str] | None) -> str:
    if not baseline:
        return "none"
    return ", ".join(f"{k} = {v}" for k, v in baseline.items())


def legend(summary: pd.DataFrame, baseline: Mapping[str, str] | None) -> str:
    """The line under the table: what the cells, the ``*`` and the test mean."""
    n_resamples = int(summary.attrs.get("n_resamples", 10_000))
    ci = float(summary.attrs.get("ci", 0.95))
    cells = (
        "Cells: mean normalised score (SD) over seeds, scores in [0, 1]; n = finished episodes. "
        "Tokens count only the acting agent's calls (per call); auxiliary calls such as "
        "summaries are excluded."
    )
    if not baseline:
        return f"{cells} No baseline given, so no significance tests."
    return (
        f"{cells} `*` marks a significant difference from the baseline "
        f"({describe_baseline(baseline)}; every other axis equal): bootstrap test of the mean "
        f"difference, {n_resamples:,} resamples, {ci:.0%} CI, paired by seed where both runs "
        "share at least two seeds (Δ is then over the shared seeds). Δ = run mean minus "
        "baseline mean, with the bootstrap CI."
    )


def to_markdown(
    summary: pd.DataFrame, title: str, *, baseline: Mapping[str, str] | None = None
) -> str:
    """A Markdown table of ``summary`` with a caption and a legend line below.

    Columns: the axes that vary across runs (always env and agent), mean (SD), n, success,
    tokens per step in/out, score per 1,000 input tokens, Δ vs baseline [95% CI]. Expert rows
    come last. ``baseline`` defaults to the one recorded by :func:`summarise`.
    """
    if baseline is None:
        baseline = summary.attrs.get("baseline")
    axes = varying_axes(summary)
    ci = float(summary.attrs.get("ci", 0.95))
    header = [a.capitalize() for a in axes] + [
        "Score mean (SD)",
        "n",
        "Success",
        "In tok/step",
        "Out tok/step",
        "Score/1k in",
        f"Δ vs baseline [{ci:.0%} CI]",
    ]
    rows = summary.assign(_expert=summary["agent"] == EXPERT).sort_values("_expert", kind="stable")
    lines = [
        f"**{_cell(title)}**",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * len(axes) + ["---:"] * (len(header) - len(axes))) + "|",
    ]
    for rec in rows.to_dict("records"):
        cells = [_cell(rec[a]) for a in axes] + [
            score_cell(rec),
            _n_cell(rec),
            _num(rec["success_rate"], ".2f"),
            _num(rec["in_per_step"], ",.0f"),
            _num(rec["out_per_step"], ",.0f"),
            _num(rec["score_per_1k_in"], ".3f"),
            _delta_cell(rec),
        ]
        lines.append("| " + " | ".join(cells) + " |")
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
    baseline = summary.attrs.get("baseline")
    return {
        "baseline": dict(baseline) if baseline else None,
        "axes": list(summary.attrs.get("axes", [])),
        "test": {
            "method": "bootstrap of the mean difference (percentile CI)",
            "n_resamples": int(summary.attrs.get("n_resamples", 10_000)),
            "ci": float(summary.attrs.get("ci", 0.95)),
            "paired_by": "seed",
        },
        "runs": [{str(k): _plain(v) for k, v in rec.items()} for rec in summary.to_dict("records")],
    }
