"""Reports in the seeds' style: per-run summary, Markdown table, JSON and PNG plots.

``summarise`` turns finished episodes into one row per run (mean and sample SD over seeds,
success, tokens per env step, score per 1,000 input tokens, a permutation test against a
named baseline with a bootstrap interval); ``write_report`` renders it as report.md,
report.json, scores.png and score_per_token.png, plus, given a ``layout``, a seed-style pivot
table (Markdown and the heat-shaded table.png) and the Fig. 2-style differences from the
baseline (fig2.png).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from statelab.analysis._fig2 import change_counts, change_sentences, fig2_png
from statelab.analysis._heat import cell_colours, heat_table_png
from statelab.analysis._md import md_text
from statelab.analysis._pivot import pivot, pivot_markdown, pivot_records
from statelab.analysis._plots import plot_score_per_token, plot_scores
from statelab.analysis._summary import Test, summarise
from statelab.analysis._table import describe_baseline, to_json, to_markdown

__all__ = [
    "Test",
    "cell_colours",
    "change_counts",
    "change_sentences",
    "fig2_png",
    "heat_table_png",
    "pivot",
    "pivot_markdown",
    "pivot_records",
    "plot_score_per_token",
    "plot_scores",
    "summarise",
    "to_json",
    "to_markdown",
    "write_report",
]


def write_report(
    episodes: pd.DataFrame,
    baseline: Mapping[str, str] | None,
    out_dir: str | Path,
    title: str,
    *,
    axes: Sequence[str] | None = None,
    layout: Mapping[str, Sequence[str]] | None = None,
    test: Test = "permutation",
) -> dict[str, Path]:
    """Summarise ``episodes`` and write the report files into ``out_dir`` (created if needed).

    Returns the written paths under the keys ``markdown`` (report.md), ``json`` (report.json),
    ``scores`` (scores.png) and ``score_per_token`` (score_per_token.png).

    ``layout`` (``{"rows": [...], "columns": [...]}``, e.g. rows ``["model"]`` and columns
    ``["env", "history"]``) adds the seed-style pivot table to report.md, its heat-shaded
    image ``table`` (table.png), and, when some run has a baseline comparison, ``fig2``
    (fig2.png, differences from the baseline) with the improves/degrades/neutral counts;
    report.json then gains ``layout``, ``pivot`` (one record per table row) and ``counts``.
    ``test`` picks what marks ``*`` (see :func:`summarise`).
    """
    rows, columns = _layout(layout) if layout is not None else ([], [])
    out = Path(out_dir)
    summary = summarise(episodes, dict(baseline) if baseline else None, axes=axes, test=test)
    pivot_md = (
        pivot_markdown(summary, rows, columns, "Mean normalised score (SD) per run")
        if layout is not None
        else ""
    )
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "markdown": out / "report.md",
        "json": out / "report.json",
        "scores": out / "scores.png",
        "score_per_token": out / "score_per_token.png",
    }
    plot_scores(summary, paths["scores"])
    plot_score_per_token(summary, paths["score_per_token"])
    payload: dict[str, object] = {"title": title, **to_json(summary)}
    n_runs = len(summary)
    n_seeds, n_eps = (int(summary[c].sum()) if n_runs else 0 for c in ("n", "episodes"))
    lost = int(summary[["episodes_failed", "episodes_unscored"]].to_numpy().sum()) if n_runs else 0
    body = [
        f"# {md_text(title)}",
        "",
        f"{n_runs} runs, {n_seeds} run-seeds with a score, {n_eps} scored episodes"
        f" ({lost} failed or unscored, excluded);"
        f" baseline: {md_text(describe_baseline(baseline))}.",
        "",
        to_markdown(summary, "Table: mean normalised score per run", baseline=baseline),
        "## Score per run",
        "",
        f"![Mean normalised score per run, SD error bars]({paths['scores'].name})",
        "",
        "## Score per 1,000 input tokens",
        "",
        f"![Normalised score per 1,000 acting-agent input tokens]({paths['score_per_token'].name})",
        "",
        "Per episode, score × 1,000 / mean acting-agent input tokens per env step (every"
        " acting call of a step counted), then averaged over the seed's episodes and over"
        " seeds, as seed 000's Fig. 1. Auxiliary calls (e.g. summaries) are excluded. Bars"
        " marked 0 are runs with zero score.",
        "",
    ]
    if layout is not None:
        body += _layout_section(summary, rows, columns, title, pivot_md, out, paths, payload)
    paths["json"].write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n")
    paths["markdown"].write_text("\n".join(body))
    return paths


def _layout(layout: Mapping[str, Sequence[str]]) -> tuple[list[str], list[str]]:
    missing = [k for k in ("rows", "columns") if k not in layout]
    if missing:
        raise ValueError(f"layout needs the keys 'rows' and 'columns'; missing {missing}")
    rows, columns = layout["rows"], layout["columns"]
    return (
        [rows] if isinstance(rows, str) else list(rows),
        [columns] if isinstance(columns, str) else list(columns),
    )


def _layout_section(
    summary: pd.DataFrame,
    rows: list[str],
    columns: list[str],
    title: str,
    pivot_md: str,
    out: Path,
    paths: dict[str, Path],
    payload: dict[str, object],
) -> list[str]:
    """Write table.png (and fig2.png), fill ``paths`` and ``payload``; report.md lines."""
    paths["table"] = out / "table.png"
    heat_table_png(summary, rows, columns, paths["table"], f"{title}: mean normalised score")
    counts = change_counts(summary)
    payload.update(
        layout={"rows": rows, "columns": columns},
        pivot=pivot_records(summary, rows, columns),
        counts=counts,
    )
    body = [
        f"## Table: {' × '.join(rows)} by {' × '.join(columns)}",
        "",
        pivot_md,
        f"![Pivot table, cells shaded by mean score within each env]({paths['table'].name})",
        "",
    ]
    if counts:
        paths["fig2"] = out / "fig2.png"
        fig2_png(summary, paths["fig2"], f"{title}: difference from baseline")
        body += [
            "## Difference from baseline",
            "",
            f"![Mean score difference from the baseline per variant]({paths['fig2'].name})",
            "",
            *[f"- {md_text(line)}" for line in change_sentences(counts)],
            "",
            "Counts over compared runs (instances); neutral: |Δ| < 0.01 in mean score, "
            "regardless of significance.",
            "",
        ]
    return body
