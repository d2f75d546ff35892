"""PNG bar plots of a :func:`summarise` table.

Matplotlib through an explicit Agg canvas (headless, no pyplot global state), with
constrained layout (a tight layout that also makes room for the figure legend).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from statelab.analysis._roles import (
    EXPERT_LABEL,
    FLOOR_LABEL,
    ROLE_COMPARED,
    ROLE_EXPERT,
    ROLE_FLOOR,
    is_reference,
)
from statelab.analysis._summary import varying_axes

#: the bar colours of every report plot, in order (seaborn's "deep")
PALETTE = (
    "#4C72B0",
    "#DD8452",
    "#55A868",
    "#C44E52",
    "#8172B3",
    "#937860",
    "#DA8BC3",
    "#8C8C8C",
    "#CCB974",
    "#64B5CD",
)
_EXPERT_COLOUR = "#BBBBBB"


def _label_axes(summary: pd.DataFrame, axes: Sequence[str]) -> list[str]:
    """Axes that tell bars apart within an env panel (agent only when it varies)."""
    runs = summary[~is_reference(summary)]
    shown = [a for a in axes if a != "env" and runs[a].nunique(dropna=False) > 1]
    return shown or [a for a in axes if a == "agent"]


def _label(row: pd.Series, axes: Sequence[str]) -> str:
    if row.get("role") in (ROLE_EXPERT, ROLE_FLOOR):
        return EXPERT_LABEL if row["role"] == ROLE_EXPERT else FLOOR_LABEL
    parts = [str(row[a]) for a in axes]
    return " / ".join(parts) if parts else str(row["run"])


def _colour_axis(summary: pd.DataFrame, axes: Sequence[str]) -> str | None:
    """The axis bars are coloured by: the (first) baseline axis, else the last varying one."""
    baseline = summary.attrs.get("baseline") or {}
    for axis in baseline:
        if axis in summary.columns:
            return str(axis)
    rest = [a for a in axes if a not in ("env", "agent")]
    return rest[-1] if rest else None


def _new_figure(n_bars_per_env: Sequence[int]) -> tuple[Figure, list[Axes]]:
    width = min(24.0, 2.0 + 0.75 * sum(n_bars_per_env) + 0.6 * len(n_bars_per_env))
    fig = Figure(figsize=(max(5.0, width), 4.6), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(
        1,
        len(n_bars_per_env),
        sharey=True,
        squeeze=False,
        gridspec_kw={"width_ratios": [max(1, n) for n in n_bars_per_env]},
    )
    return fig, list(grid[0])


def _bar_panels(
    summary: pd.DataFrame,
    value: str,
    *,
    error: str | None,
    ylabel: str,
    title: str,
    path: Path,
    floor_top: float,
    stars: bool,
) -> Path:
    """Bars of ``summary[value]`` per run, one panel per env, ``*`` over significant bars."""
    path = Path(path)
    axes = varying_axes(summary) if len(summary) else []
    colour_by = _colour_axis(summary, axes) if len(summary) else None
    non_expert = summary[~is_reference(summary)] if len(summary) else summary
    colour_values = list(dict.fromkeys(non_expert[colour_by])) if colour_by else []
    colours = {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(colour_values)}
    envs = list(dict.fromkeys(summary["env"])) if len(summary) else []
    if not envs:
        fig, panels = _new_figure([1])
        panels[0].text(0.5, 0.5, "no runs", ha="center", va="center", transform=panels[0].transAxes)
        panels[0].set_axis_off()
        fig.savefig(path, dpi=150)
        return path
    groups = [summary[summary["env"] == env] for env in envs]
    label_axes = _label_axes(summary, axes)
    fig, panels = _new_figure([len(g) for g in groups])
    top = floor_top
    for ax, env, group in zip(panels, envs, groups, strict=True):
        xs = list(range(len(group)))
        heights, errs, cols, labels = [], [], [], []
        for _, row in group.iterrows():
            h = float(row[value])
            e = float(row[error]) if error and not math.isnan(float(row[error])) else 0.0
            heights.append(0.0 if math.isnan(h) else h)
            errs.append(e)
            expert = row.get("role") in (ROLE_EXPERT, ROLE_FLOOR)
            cols.append(_EXPERT_COLOUR if expert or not colour_by else colours[row[colour_by]])
            labels.append(_label(row, label_axes))
            top = max(top, heights[-1] + e)
        ax.bar(
            xs,
            heights,
            color=cols,
            edgecolor="black",
            linewidth=0.6,
            yerr=errs if error else None,
            capsize=3,
            error_kw={"linewidth": 0.8},
        )
        for x, (_, row), h, e in zip(xs, group.iterrows(), heights, errs, strict=True):
            raw = float(row[value])
            if math.isnan(raw):
                ax.text(x, 0.0, "n/a", ha="center", va="bottom", fontsize=8, color="dimgray")
            elif raw == 0.0:
                ax.text(x, 0.0, "0", ha="center", va="bottom", fontsize=8, color="dimgray")
            if stars and row["role"] == ROLE_COMPARED and bool(row["sig"]):
                ax.text(x, h + e, "*", ha="center", va="bottom", fontsize=14, fontweight="bold")
        ax.set_title(str(env), fontsize=10)
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
        ax.grid(axis="y", linewidth=0.4, alpha=0.6)
        ax.set_axisbelow(True)
    panels[0].set_ylabel(ylabel)
    panels[0].set_ylim(0.0, top * 1.15 if top > 0 else 1.0)
    if colour_by and colours:
        handles = [Patch(facecolor=c, edgecolor="black", label=str(v)) for v, c in colours.items()]
        fig.legend(
            handles=handles,
            title=colour_by,
            loc="outside lower center",
            ncols=min(len(handles), 4),
            fontsize=8,
            title_fontsize=8,
            frameon=False,
        )
    fig.suptitle(title, fontsize=11)
    fig.savefig(path, dpi=150)
    return path


def plot_scores(summary: pd.DataFrame, path: str | Path) -> Path:
    """Bar plot of mean normalised score with SD error bars per run, grouped by env.

    A ``*`` over a bar marks a significant difference from the baseline.
    """
    return _bar_panels(
        summary,
        "mean",
        error="sd",
        ylabel="normalised score (mean ± sample SD)",
        title="Score per run (* significant vs baseline)",
        path=Path(path),
        floor_top=1.0,
        stars=True,
    )


def plot_score_per_token(summary: pd.DataFrame, path: str | Path) -> Path:
    """Bars of normalised score per 1,000 acting-agent input tokens (seed 000, Fig. 1): per
    episode, score × 1,000 / mean input tokens per env step, then averaged.

    Reference runs (the expert and the random floor: no model calls) are left out; a run
    scoring 0 gets an empty bar marked "0".
    """
    runs = summary[~is_reference(summary)] if len(summary) else summary
    return _bar_panels(
        runs,
        "score_per_1k_in",
        error=None,
        ylabel="score per 1,000 input tokens per env step",
        title="Score per 1,000 input tokens (acting calls only; per episode, then averaged)",
        path=Path(path),
        floor_top=0.0,
        stars=False,
    )
