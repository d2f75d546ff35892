"""Reports in the seeds' style: per-run summary, Markdown table, JSON and PNG plots.

``summarise`` turns finished episodes into one row per run (mean and SD over seeds, success,
tokens per acting call, score per 1,000 input tokens, bootstrap test against a named
baseline); ``write_report`` renders it as report.md, report.json, scores.png and
score_per_token.png.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from statelab.analysis._plots import plot_score_per_token, plot_scores
from statelab.analysis._summary import summarise
from statelab.analysis._table import describe_baseline, to_json, to_markdown

__all__ = [
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
) -> dict[str, Path]:
    """Summarise ``episodes`` and write the report files into ``out_dir`` (created if needed).

    Returns the written paths under the keys ``markdown`` (report.md), ``json`` (report.json),
    ``scores`` (scores.png) and ``score_per_token`` (score_per_token.png).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarise(episodes, dict(baseline) if baseline else None, axes=axes)
    paths = {
        "markdown": out / "report.md",
        "json": out / "report.json",
        "scores": out / "scores.png",
        "score_per_token": out / "score_per_token.png",
    }
    plot_scores(summary, paths["scores"])
    plot_score_per_token(summary, paths["score_per_token"])
    payload = {"title": title, **to_json(summary)}
    paths["json"].write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n")
    n_runs, n_eps = len(summary), int(summary["n"].sum()) if len(summary) else 0
    body = [
        f"# {title}",
        "",
        f"{n_runs} runs, {n_eps} finished episodes; baseline: {describe_baseline(baseline)}.",
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
        "Token counts include only the acting agent's prompts; auxiliary calls (e.g. summaries)"
        " are excluded. Bars marked 0 are runs with zero score.",
        "",
    ]
    paths["markdown"].write_text("\n".join(body))
    return paths
