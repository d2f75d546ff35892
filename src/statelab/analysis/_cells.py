"""The cells of a summary table (:mod:`statelab.analysis._table`), each from one run's row:
score, Δ vs baseline, p, counts, a run's label on an axis and its link to the viewer."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from statelab.analysis._comparisons import MIN_TEST_N
from statelab.analysis._md import Link
from statelab.analysis._roles import (
    EXPERT_LABEL,
    FLOOR_LABEL,
    ROLE_BASELINE,
    ROLE_COMPARED,
    ROLE_EXPERT,
    ROLE_FLOOR,
)
from statelab.analysis.stats import MAX_EXACT, min_attainable_p

DASH = "–"


def missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def cell_text(value: Any) -> str:
    """A table cell: text with pipes escaped and newlines flattened."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def num(value: Any, fmt: str, signed: bool = False) -> str:
    if missing(value):
        return DASH
    return format(float(value), ("+" if signed else "") + fmt)


def alpha_of(summary_attrs: Mapping[str, Any]) -> float:
    return 1.0 - float(summary_attrs.get("ci", 0.95))


def score_cell(row: Mapping[str, Any]) -> str:
    """``"0.46 (0.12)*"``: mean, sample SD in parentheses ("–" for one seed), ``*`` when
    significant vs baseline."""
    if missing(row["mean"]):
        return DASH
    star = "*" if row["role"] == ROLE_COMPARED and bool(row["sig"]) else ""
    return f"{row['mean']:.2f} ({num(row['sd'], '.2f')}){star}"


def delta_cell(row: Mapping[str, Any]) -> str:
    role = row["role"]
    if role == ROLE_BASELINE:
        return "baseline"
    if role != ROLE_COMPARED or missing(row["diff"]):
        return DASH
    diff = num(row["diff"], ".2f", signed=True)
    if missing(row["ci_low"]):
        return f"{diff} [too few seeds]"
    low, high = num(row["ci_low"], ".2f", True), num(row["ci_high"], ".2f", True)
    return f"{diff} [{low}, {high}]"


def _p_text(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3g}"


#: the adjustments' names in a p cell
ADJ_SHORT = {"holm": "Holm", "bh": "BH"}


def _pairs(row: Mapping[str, Any]) -> str:
    if bool(row["paired"]):
        k = int(row["n_test"])
        return f"{k} pair" + ("" if k == 1 else "s")
    return f"unpaired, {int(row['n_test'])} vs {int(row['n_base'])} seeds"


def p_cell(row: Mapping[str, Any], attrs: Mapping[str, Any]) -> str:
    """``"0.031 (6 pairs)"``: the test's p and what it was over, and, when the test cannot
    reach the level at all, why (``"n too small for p<0.05"``), or when its adjusted p cannot
    at this n and this many comparisons (``"n too small for Holm p<0.05 over 4
    comparisons"``: Holm's least adjusted p is 4 x 2/2^7 = 0.0625 at 7 pairs)."""
    if row["role"] != ROLE_COMPARED or missing(row["diff"]):
        return DASH
    if missing(row["p"]):
        return f"{DASH} ({_pairs(row)}; needs {MIN_TEST_N})"
    text = f"{_p_text(float(row['p']))} ({_pairs(row)}"
    short = ADJ_SHORT.get(str(attrs.get("adjust", "none")))
    if short and int(attrs.get("n_tests", 0)) > 1 and not missing(row.get("p_adj")):
        text += f"; {short} {_p_text(float(row['p_adj']))}"
    alpha = alpha_of(attrs)
    if not missing(row.get("min_p")) and float(row["min_p"]) >= alpha:
        design = min_attainable_p(
            int(row["n_test"]),
            int(row["n_base"]),
            paired=bool(row["paired"]),
            n_resamples=int(attrs.get("n_resamples", 10_000)),
            max_exact=int(attrs.get("max_exact", MAX_EXACT)),
        )
        why = "n too small" if design >= alpha else "too few non-zero differences"
        text += f"; {why} for p<{alpha:g}"
    elif short and int(attrs.get("n_tests", 0)) > 1 and _at_least(row.get("min_p_adj"), alpha):
        k = int(attrs["n_tests"])
        text += f"; n too small for {short} p<{alpha:g} over {k} comparisons"
    return text + ")"


def _at_least(value: Any, level: float) -> bool:
    return not missing(value) and float(value) >= level


def _count_cell(n: int, failed: int, unscored: int) -> str:
    extra = [f"+{failed} failed"] if failed else []
    extra += [f"+{unscored} no score"] if unscored else []
    return f"{n} ({', '.join(extra)})" if extra else str(n)


def n_cell(row: Mapping[str, Any]) -> str:
    """Seeds: with a score, then (+ failed, + finished without a score)."""
    return _count_cell(int(row["n"]), int(row["failed"]), int(row["unscored"]))


def episodes_cell(row: Mapping[str, Any]) -> str:
    """Episodes: scored, then (of them, k truncated; + failed, + without a score)."""
    cell = _count_cell(
        int(row["episodes"]), int(row["episodes_failed"]), int(row["episodes_unscored"])
    )
    cut = int(row.get("episodes_truncated") or 0)
    if not cut:
        return cell
    n, _, rest = cell.partition(" (")
    return f"{n} ({cut} truncated" + (f"; {rest}" if rest else ")")


_REFERENCE_LABELS = {ROLE_EXPERT: EXPERT_LABEL, ROLE_FLOOR: FLOOR_LABEL}


def axis_label(rec: Mapping[str, Any], axis: str) -> str:
    """A run's cell on ``axis`` as every table shows it (the one place labels are rendered:
    a reference row's agent is named by its role; text is escaped by :func:`md_row`)."""
    value = rec.get(axis)
    if axis == "agent" and rec.get("role") in _REFERENCE_LABELS:
        value = _REFERENCE_LABELS[str(rec["role"])]
    return cell_text(value)


#: where the report (``results/<name>/report/``) finds the experiment's page (``statelab view``)
VIEWER_PAGE = "../view/index.html"


def viewer_link(run_id: Any) -> Link | str:
    """The run's episodes in the viewer (written by ``statelab view``), or '–'."""
    if not isinstance(run_id, str) or not run_id:
        return "–"
    return Link("episodes", f"{VIEWER_PAGE}#run={run_id}")
