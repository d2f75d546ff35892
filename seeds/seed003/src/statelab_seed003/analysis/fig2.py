"""Seed 003's Figure 2: does a candidate's score predict the outcome of its episode?

For every stored write point whose candidates carry an outcome (the return of the episode
continued from that candidate: :mod:`statelab_seed003.train.continuation`), the **within-write-point
Spearman correlation** between the candidates' predicted value and their outcomes, for each score
form (``recursive``: the writer rolls the candidate forward; ``window``: the candidate as a fixed
context plus the raw steps since) and each look-ahead K (S_K). The predicted value is the
negated score (a score is a loss in nats: lower is better), so ρ > 0 means the score orders the
candidates as their outcomes do (the seed: ρ = 0.48 for the recursive form, ρ ≤ 0.07 for the
window form).

ρ is Spearman's: the Pearson correlation of average ranks (ties share their mean rank, as
``scipy.stats.spearmanr`` ranks them). A point where the outcomes or the scores are all equal
(or fewer than two candidates have both) has no ρ and is counted as undefined. The figure's
value is the mean ρ over the defined points, with the game-clustered percentile bootstrap of
:func:`~statelab_seed003.analysis.measures.clustered_bootstrap` (a drawn game brings all its
points; 10,000 resamples), the games being the episodes' seeds.

Input: the ``scores_round<r>.jsonl`` rows ``statelab seed003 train writer`` writes (one write
point a line; per candidate ``recursive_k``/``window_k`` {K: S_K} and ``outcome``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

from statelab.analysis._md import md_cell
from statelab.analysis.stats import Interval, clustered_bootstrap

FORMS = ("recursive", "window")


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ of paired values (average ranks for ties); None when either side is
    constant or there are fewer than two pairs."""
    if len(x) != len(y):
        raise ValueError("spearman: x and y differ in length")
    if len(x) < 2:
        return None
    rx, ry = rankdata(x), rankdata(y)
    dx, dy = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum()))
    if den == 0.0:
        return None
    return float((dx * dy).sum()) / den


def point_rho(point: dict[str, Any], form: str, k: int) -> float | None:
    """ρ between the candidates' negated S_K of ``form`` and their outcomes at one point."""
    pairs = [
        (-float(s), float(c["outcome"]))
        for c in point["candidates"]
        if c.get("outcome") is not None
        and (s := (c.get(f"{form}_k") or {}).get(str(k))) is not None
    ]
    return spearman([p for p, _ in pairs], [o for _, o in pairs])


@dataclass(frozen=True)
class Cell:
    """One bar of Figure 2: a score form at a look-ahead K."""

    form: str
    k: int
    rho: Interval
    #: points with a ρ, and all points with outcomes scored at this K
    defined: int
    points: int


def figure2(points: Iterable[dict[str, Any]], ks: Sequence[int] | None = None) -> list[Cell]:
    """Figure 2's cells for every form and K (default: every K the points were scored at)."""
    rows = [p for p in points if any(c.get("outcome") is not None for c in p["candidates"])]
    looks = sorted(set(ks) if ks else {int(k) for p in rows for k in p.get("ks", [])})
    out = []
    for form in FORMS:
        for k in looks:
            at = [p for p in rows if k in p.get("ks", [])]
            by_game: dict[Any, list[float]] = {}
            for p in at:
                if (rho := point_rho(p, form, k)) is not None:
                    by_game.setdefault(p["seed"], []).append(rho)
            defined = sum(len(v) for v in by_game.values())
            out.append(Cell(form, k, clustered_bootstrap(by_game), defined, len(at)))
    return out


def read_points(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """The write points of ``scores_round<r>.jsonl`` files."""
    out = []
    for path in paths:
        out += [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
    return out


def table(cells: Sequence[Cell]) -> str:
    """Figure 2 as a Markdown table."""
    lines = [
        "| score | K | within-point Spearman ρ [95% CI] | points with ρ / scored | games |",
        "|---|---:|---|---:|---:|",
    ]
    for c in cells:
        lines.append(
            f"| {md_cell(c.form)} | {c.k} | {c.rho.text(2)} | {c.defined} / {c.points} "
            f"| {c.rho.games} |"
        )
    return "\n".join(lines)


def plot(cells: Sequence[Cell], path: str | Path) -> Path:
    """Mean ρ against K, one line per form, with the bootstrap intervals."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3.4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for i, form in enumerate(FORMS):
        got = [c for c in cells if c.form == form and not math.isnan(c.rho.mean)]
        if not got:
            continue
        x = np.array([c.k for c in got], dtype=float) * (1 + 0.04 * (i - 0.5))
        y = np.array([c.rho.mean for c in got])
        err = np.array(
            [[c.rho.mean - c.rho.low for c in got], [c.rho.high - c.rho.mean for c in got]]
        )
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=form)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xscale("log")
    ks = sorted({c.k for c in cells})
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("look-ahead K")
    ax.set_ylabel("within-write-point Spearman ρ")
    ax.set_ylim(-1.05, 1.05)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=150)
    return out


def write_figure2(
    points: Iterable[dict[str, Any]], out_dir: str | Path, stem: str = "fig2"
) -> dict[str, Any]:
    """``<stem>.md`` (the table), ``<stem>.png`` (the plot) and ``<stem>.json`` into
    ``out_dir``; returns the JSON (form, K, mean, low, high, defined, points, games)."""
    cells = figure2(list(points))
    where = Path(out_dir)
    where.mkdir(parents=True, exist_ok=True)
    (where / f"{stem}.md").write_text(table(cells) + "\n")
    if cells:
        plot(cells, where / f"{stem}.png")
    data = {
        "cells": [
            {"form": c.form, "k": c.k, "rho": _num(c.rho.mean), "low": _num(c.rho.low),
             "high": _num(c.rho.high), "defined": c.defined, "points": c.points,
             "games": c.rho.games}
            for c in cells
        ]
    }  # fmt: skip
    (where / f"{stem}.json").write_text(json.dumps(data, indent=1))
    return data


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)
