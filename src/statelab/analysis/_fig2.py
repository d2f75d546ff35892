"""Seed 000 Fig. 2: each variant's difference from the baseline, and how often it helps.

A *variant* is a compared run's value on the baseline axes (e.g. grounding ``image`` or ``vot``
against ``{"grounding": "text"}``); an *instance* is one baseline run it is compared with (one
model × env, say). :func:`change_counts` counts instances where the variant improves, degrades
or is neutral (``|Δ| < neutral``); :func:`fig2_png` draws the differences as grouped bars.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from statelab.analysis._legend import describe_baseline
from statelab.analysis._plots import PALETTE
from statelab.analysis._roles import ROLE_COMPARED
from statelab.analysis._summary import varying_axes

NEUTRAL = 0.01
_NEUTRAL_FILL = "#E6E6E6"


def variant_of(rec: Mapping[str, Any], baseline: Mapping[str, str] | None) -> str:
    """The compared run's values on the baseline axes that differ from the baseline's."""
    if not baseline:
        return str(rec.get("run"))
    parts = [str(rec[a]) for a, v in baseline.items() if rec.get(a) != v]
    return " / ".join(parts) or str(rec.get("run"))


def _compared(summary: pd.DataFrame) -> list[dict[str, Any]]:
    """Compared runs with a finite difference, in summary order."""
    if not len(summary):
        return []
    rows = summary[summary["role"] == ROLE_COMPARED]
    return [
        {str(k): v for k, v in r.items()}
        for r in rows.to_dict("records")
        if isinstance(r["diff"], (int, float)) and math.isfinite(float(r["diff"]))
    ]


def _direction(diff: float, neutral: float) -> str:
    d = round(float(diff), 12)  # 0.39 - 0.38 is not 0.01 in floats; ignore that noise
    if abs(d) < neutral or d == 0.0:
        return "neutral"
    return "improves" if d > 0 else "degrades"


def change_counts(summary: pd.DataFrame, neutral: float = NEUTRAL) -> dict[str, dict[str, int]]:
    """Per variant: ``{"improves", "degrades", "neutral", "total"}`` over its instances.

    Neutral means ``|diff| < neutral``; otherwise the sign of ``diff`` decides (significance
    plays no part, as in the seed's counts). Runs without a baseline comparison are skipped.
    """
    if neutral < 0:
        raise ValueError(f"neutral must be >= 0, got {neutral}")
    baseline = summary.attrs.get("baseline")
    counts: dict[str, dict[str, int]] = {}
    for rec in _compared(summary):
        c = counts.setdefault(
            variant_of(rec, baseline), {"improves": 0, "degrades": 0, "neutral": 0, "total": 0}
        )
        c[_direction(float(rec["diff"]), neutral)] += 1
        c["total"] += 1
    return counts


def change_sentences(counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """``"vot: improves in 15/24, degrades in 5/24, neutral in 4/24"``, one per variant."""
    return [
        f"{v}: improves in {c['improves']}/{c['total']}, degrades in {c['degrades']}/"
        f"{c['total']}, neutral in {c['neutral']}/{c['total']}"
        for v, c in counts.items()
    ]


def _instance_axes(summary: pd.DataFrame, compared: list[dict[str, Any]]) -> list[str]:
    """Axes that tell instances apart within an env: varying, not env, not a baseline axis."""
    baseline = summary.attrs.get("baseline") or {}
    frame = pd.DataFrame(compared)
    return [
        a
        for a in varying_axes(summary)
        if a != "env" and a not in baseline and frame[a].nunique(dropna=False) > 1
    ]


def fig2_png(
    summary: pd.DataFrame, path: str | Path, title: str, *, neutral: float = NEUTRAL
) -> Path:
    """Grouped bars of ``diff`` (run mean minus baseline mean) for every compared variant.

    One panel per env with one group per instance (e.g. model) when several instances share an
    env, else a single panel with one group per env; one bar per variant. ``*`` marks a
    significant difference; the grey band is the neutral zone ``|Δ| < neutral``. Explicit Agg
    canvas, no pyplot state. Returns ``path``.
    """
    path = Path(path)
    compared = _compared(summary)
    baseline = summary.attrs.get("baseline")
    if not compared:
        fig = Figure(figsize=(5.0, 3.0), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        ax.text(
            0.5, 0.5, "no baseline comparisons", ha="center", va="center", transform=ax.transAxes
        )
        ax.set_axis_off()
        fig.savefig(path, dpi=150)
        return path
    variants = list(dict.fromkeys(variant_of(r, baseline) for r in compared))
    colours = {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(variants)}
    inst_axes = _instance_axes(summary, compared)
    # panel -> group label -> variant -> record
    panels: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for rec in compared:
        if inst_axes:
            panel, group = str(rec["env"]), " / ".join(str(rec[a]) for a in inst_axes)
        else:
            panel, group = "", str(rec["env"])
        panels.setdefault(panel, {}).setdefault(group, {})[variant_of(rec, baseline)] = rec
    n_groups = [len(g) for g in panels.values()]
    bar_w = 0.8 / len(variants)
    width = min(24.0, 2.6 + sum(n_groups) * (0.22 * len(variants) + 0.4) + 0.4 * len(panels))
    fig = Figure(figsize=(max(5.5, width), 4.4), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(
        1, len(panels), sharey=True, squeeze=False, gridspec_kw={"width_ratios": n_groups}
    )
    axes: list[Axes] = list(grid[0])
    slot = (width - 2.6 - 0.4 * len(panels)) / sum(n_groups)  # inches per group
    tilt = max(len(g) for p in panels.values() for g in p) * 0.065 > slot
    extent = max(abs(float(r["diff"])) for r in compared)
    lim = max(0.05, extent * 1.3, neutral * 2)
    for ax, (panel, groups) in zip(axes, panels.items(), strict=True):
        ax.axhspan(-neutral, neutral, color=_NEUTRAL_FILL, lw=0, zorder=0)
        ax.axhline(0.0, color="black", lw=0.8, zorder=1)
        for gi, recs in enumerate(groups.values()):
            for vi, variant in enumerate(variants):
                bar = recs.get(variant)
                if bar is None:
                    continue
                x = gi - 0.4 + bar_w * (vi + 0.5)
                d = float(bar["diff"])
                ax.bar(
                    x,
                    d,
                    bar_w * 0.92,
                    color=colours[variant],
                    edgecolor="black",
                    linewidth=0.6,
                    zorder=2,
                )
                if bool(bar["sig"]):
                    ax.text(
                        x,
                        d + math.copysign(0.03 * lim, d),
                        "*",
                        ha="center",
                        va="bottom" if d >= 0 else "top",
                        fontsize=13,
                        fontweight="bold",
                    )
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(
            list(groups),
            rotation=30 if tilt else 0,
            ha="right" if tilt else "center",
            fontsize=8,
        )
        ax.set_xlim(-0.6, len(groups) - 0.4)
        if panel:
            ax.set_title(panel, fontsize=10)
        ax.grid(axis="y", linewidth=0.4, alpha=0.6)
        ax.set_axisbelow(True)
    axes[0].set_ylim(-lim, lim)
    axes[0].set_ylabel("Δ mean score vs baseline")
    handles = [Patch(facecolor=c, edgecolor="black", label=v) for v, c in colours.items()]
    handles.append(Patch(facecolor=_NEUTRAL_FILL, label=f"neutral (|Δ| < {neutral:g})"))
    fig.legend(
        handles=handles,
        title=f"vs {describe_baseline(baseline)}",
        loc="outside right upper",
        fontsize=8,
        title_fontsize=8,
        frameon=False,
    )
    fig.suptitle(f"{title} (* significant vs baseline)", fontsize=11)
    fig.savefig(path, dpi=150)
    return path
