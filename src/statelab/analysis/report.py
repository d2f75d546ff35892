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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.analysis._comparisons import Test
from statelab.analysis._ends import ends_markdown, episode_ends
from statelab.analysis._fig2 import change_counts, change_sentences, fig2_png
from statelab.analysis._heat import heat_table_png
from statelab.analysis._legend import describe_baseline
from statelab.analysis._md import md_text
from statelab.analysis._pivot import pivot_markdown, pivot_records
from statelab.analysis._plots import plot_score_per_token, plot_scores
from statelab.analysis._roles import ROLE_EXPERT, is_reference
from statelab.analysis._summary import summarise
from statelab.analysis._table import to_json, to_markdown
from statelab.analysis.caveats import Caveat, caveats, caveats_markdown
from statelab.analysis.stats import Adjust

__all__ = ["MainReport", "build_report", "write_files", "write_report"]


@dataclass
class MainReport:
    """The main part of a report: its Markdown blocks (title and counts, the table, how
    episodes ended, the warnings, the plots, the pivot), report.json's payload, and the
    files written."""

    blocks: list[str]
    payload: dict[str, Any]
    paths: dict[str, Path]
    summary: pd.DataFrame
    warnings: list[Caveat]


def build_report(
    episodes: pd.DataFrame,
    baseline: Mapping[str, str] | None,
    out_dir: str | Path,
    title: str,
    *,
    axes: Sequence[str] | None = None,
    layout: Mapping[str, Sequence[str]] | None = None,
    test: Test = "permutation",
    adjust: Adjust = "holm",
    run_info: pd.DataFrame | None = None,
) -> MainReport:
    """Summarise ``episodes``, draw the plots into ``out_dir`` and return the blocks of the
    main report (nothing of report.md or report.json is written here; see
    :func:`write_report`). ``run_info`` (one row per run label in ``run``: ``env_seeds``,
    ``first_views``, ``memory_states``, ``distinct_memories``, ``has_memory``) joins the
    summary for the warnings of :mod:`statelab.analysis.caveats`."""
    rows, columns = _layout(layout) if layout is not None else ([], [])
    out = Path(out_dir)
    summary = summarise(
        episodes, dict(baseline) if baseline else None, axes=axes, test=test, adjust=adjust
    )
    if run_info is not None and len(summary):
        attrs = summary.attrs
        info = run_info.drop(columns=[c for c in run_info.columns if c in summary and c != "run"])
        summary = summary.merge(info, on="run", how="left")
        summary.attrs = attrs
    found = caveats(summary)
    runs_only = summary[~is_reference(summary) | (summary["role"] == ROLE_EXPERT)]
    runs_only.attrs = summary.attrs
    pivot_md = (  # before anything is written: a layout that cannot be drawn writes nothing
        pivot_markdown(runs_only, rows, columns, "Mean normalised score (SD) per run")
        if layout is not None
        else ""
    )
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "scores": out / "scores.png",
        "score_per_token": out / "score_per_token.png",
    }
    plot_scores(summary, paths["scores"])
    plot_score_per_token(summary, paths["score_per_token"])
    payload: dict[str, Any] = {"title": title, **to_json(summary)}
    payload["warnings"] = [c.as_dict() for c in found]
    ends = episode_ends(episodes)
    payload["ends"] = ends
    blocks = [
        _head(summary, title, baseline),
        to_markdown(summary, "Table: mean normalised score per run", baseline=baseline),
        ends_markdown(ends),
    ]
    if found:
        blocks.append(caveats_markdown(found))
    blocks.append(_plots_section(paths))
    if layout is not None:
        block = _layout_section(runs_only, rows, columns, title, pivot_md, out, paths, payload)
        blocks.append(block)
    return MainReport(blocks, payload, paths, summary, found)


def write_report(
    episodes: pd.DataFrame,
    baseline: Mapping[str, str] | None,
    out_dir: str | Path,
    title: str,
    *,
    axes: Sequence[str] | None = None,
    layout: Mapping[str, Sequence[str]] | None = None,
    test: Test = "permutation",
    adjust: Adjust = "holm",
) -> dict[str, Path]:
    """Summarise ``episodes`` and write the report files into ``out_dir`` (created if needed).

    report.md says, a line per run, how its episodes ended (done, truncated by a per-episode
    limit, failed: :mod:`statelab.analysis._ends`), and report.json carries the same as
    ``ends`` (one record per run) beside each run's ``episodes_done``,
    ``episodes_truncated`` and ``episodes_failed``.

    Returns the written paths under the keys ``markdown`` (report.md), ``json`` (report.json),
    ``scores`` (scores.png) and ``score_per_token`` (score_per_token.png).

    ``layout`` (``{"rows": [...], "columns": [...]}``, e.g. rows ``["model"]`` and columns
    ``["env", "history"]``) adds the seed-style pivot table to report.md, its heat-shaded
    image ``table`` (table.png), and, when some run has a baseline comparison, ``fig2``
    (fig2.png, differences from the baseline) with the improves/degrades/neutral counts;
    report.json then gains ``layout``, ``pivot`` (one record per table row) and ``counts``.
    ``test`` picks what marks ``*`` (see :func:`summarise`), ``adjust`` how p values are
    adjusted for the number of comparisons. The random floor's rows are in the per-run table
    and the plots, not in the pivot.
    """
    main = build_report(
        episodes,
        baseline,
        out_dir,
        title,
        axes=axes,
        layout=layout,
        test=test,
        adjust=adjust,
    )
    return write_files(main.blocks, main.payload, Path(out_dir), main.paths)


def write_files(
    blocks: Sequence[str], payload: Mapping[str, Any], out_dir: Path, paths: dict[str, Path]
) -> dict[str, Path]:
    """Write report.md (the blocks, one blank line apart) and report.json; return every
    path, these two first."""
    out = {"markdown": out_dir / "report.md", "json": out_dir / "report.json", **paths}
    out_dir.mkdir(parents=True, exist_ok=True)
    text = "\n\n".join(b.strip("\n") for b in blocks if b.strip()) + "\n"
    out["json"].write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n")
    out["markdown"].write_text(text)
    return out


def _head(summary: pd.DataFrame, title: str, baseline: Mapping[str, str] | None) -> str:
    n_runs = len(summary)
    n_seeds, n_eps = (int(summary[c].sum()) if n_runs else 0 for c in ("n", "episodes"))
    lost = int(summary[["episodes_failed", "episodes_unscored"]].to_numpy().sum()) if n_runs else 0
    cut = int(summary["episodes_truncated"].sum()) if n_runs else 0
    truncated = f"{cut} truncated by a limit, scored as they stand at the cut; " if cut else ""
    return (
        f"# {md_text(title)}\n\n{n_runs} runs, {n_seeds} run-seeds with a score,"
        f" {n_eps} scored episodes ({truncated}{lost} failed or unscored, excluded);"
        f" baseline: {md_text(describe_baseline(baseline))}."
    )


def _plots_section(paths: Mapping[str, Path]) -> str:
    return "\n".join(
        [
            "## Score per run",
            "",
            f"![Mean normalised score per run, SD error bars]({paths['scores'].name})",
            "",
            "## Score per 1,000 input tokens",
            "",
            "![Normalised score per 1,000 acting-agent input tokens]"
            f"({paths['score_per_token'].name})",
            "",
            "Per episode, score × 1,000 / mean acting-agent input tokens per env step (every"
            " acting call of a step counted), then averaged over the seed's episodes and over"
            " seeds, as seed 000's Fig. 1. Auxiliary calls (e.g. summaries) are excluded. Bars"
            " marked 0 are runs with zero score.",
        ]
    )


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
) -> str:
    """Write table.png (and fig2.png), fill ``paths`` and ``payload``; the report.md block."""
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
        ]
    return "\n".join(body)
