"""The heat-shaded PNG of a pivot table (seed 000's Tables 3-8 as images).

Each cell is shaded by its mean on the seed's light-yellow -> orange -> purple scale
(#FCFDBF -> #FC8961 -> #B73779, piecewise linear), normalised within each env ("game family")
by default; ``scale="unit"`` maps the absolute score, as the seed's own figures do.
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Rectangle

from statelab.analysis._cells import missing
from statelab.analysis._legend import describe_baseline, describe_test
from statelab.analysis._pivot import (
    EXPERT_FILL,
    HEAT_GROUP_AXIS,
    Grid,
    Key,
    frame,
    is_expert,
    pivot_grid,
    pivot_texts,
)
from statelab.analysis._roles import EXPERT_NOTE

HEAT_STOPS: tuple[tuple[float, str], ...] = ((0.0, "#FCFDBF"), (0.5, "#FC8961"), (1.0, "#B73779"))
"""The seed's shading scale: position in [0, 1] -> colour, linear in RGB between stops."""
Scale = Literal["env", "unit"]




def heat_colour(t: float) -> str:
    """``#RRGGBB`` at position ``t`` (clipped to [0, 1]) on the seed's scale :data:`HEAT_STOPS`."""
    t = min(1.0, max(0.0, float(t)))
    for (t0, c0), (t1, c1) in itertools.pairwise(HEAT_STOPS):
        if t <= t1:
            f = (t - t0) / (t1 - t0)
            rgb = [a + (b - a) * f for a, b in zip(to_rgb(c0), to_rgb(c1), strict=True)]
            return "#" + "".join(f"{round(x * 255):02X}" for x in rgb)
    return HEAT_STOPS[-1][1]


def text_colour(fill: str) -> str:
    """``"black"`` or ``"white"``, whichever contrasts more with ``fill`` (WCAG luminance)."""

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in to_rgb(fill))
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "black" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "white"


def _positions(grid: Grid, scale: Scale) -> dict[tuple[int, int], float]:
    """Colour-scale position of every shaded cell (non-expert runs with a mean)."""
    if scale not in ("env", "unit"):
        raise ValueError(f"scale must be 'env' or 'unit', got {scale!r}")
    means: dict[tuple[int, int], tuple[Hashable, float]] = {}
    for pos, rec in grid.cells.items():
        if not is_expert(rec) and not missing(rec["mean"]):
            means[pos] = (rec.get(HEAT_GROUP_AXIS), float(rec["mean"]))
    if scale == "unit":
        return {pos: m for pos, (_, m) in means.items()}
    bounds: dict[Hashable, tuple[float, float]] = {}
    for group, m in means.values():
        lo, hi = bounds.get(group, (m, m))
        bounds[group] = (min(lo, m), max(hi, m))
    out: dict[tuple[int, int], float] = {}
    for pos, (group, m) in means.items():
        lo, hi = bounds[group]
        out[pos] = 0.5 if hi - lo <= 1e-12 else (m - lo) / (hi - lo)
    return out


def cell_colours(
    summary: pd.DataFrame,
    rows: Sequence[str] | str,
    columns: Sequence[str] | str,
    *,
    scale: Scale = "env",
) -> pd.DataFrame:
    """Background colour (``#RRGGBB``) of each :func:`pivot` cell; ``""`` when unshaded.

    ``scale="env"``: each env's ("game family's") lowest mean gets the first colour of
    :data:`HEAT_STOPS` and its highest the last, linearly between (the middle colour when all
    are equal). ``scale="unit"``: the mean itself in [0, 1] (what the seed's colours encode).
    Expert cells, empty cells and runs without a mean are unshaded.
    """
    grid = pivot_grid(summary, rows, columns)
    return frame(grid, _colour_grid(grid, scale))


def _colour_grid(grid: Grid, scale: Scale) -> list[list[str]]:
    out = [[""] * len(grid.columns) for _ in grid.rows]
    for (ri, ci), t in _positions(grid, scale).items():
        out[ri][ci] = heat_colour(t)
    return out


# --- heat table PNG -----------------------------------------------------------------------

_FONT = 9.0
_PAD = 0.12  # inch, each side of a cell's text
_ROW_H = 0.27  # inch
_MARGIN = 0.15  # inch


def _measure(texts: Sequence[str], weight: str = "normal") -> float:
    """Widest of ``texts`` in inches at the table font size."""
    fig = Figure(dpi=100)
    renderer = FigureCanvasAgg(fig).get_renderer()
    prop = FontProperties(size=_FONT, weight=weight)
    widths = [
        renderer.get_text_width_height_descent(t, prop, ismath=False)[0] / 100.0 for t in texts if t
    ]
    return max(widths, default=0.0)


def _wrap(text: str, width_in: float) -> list[str]:
    return textwrap.wrap(text, max(20, int(width_in / 0.068))) or [""]


def _spans(keys: Sequence[Key], level: int) -> list[tuple[int, int]]:
    """Runs ``[start, stop)`` of columns sharing the key prefix up to ``level``."""
    spans: list[tuple[int, int]] = []
    for i, k in enumerate(keys):
        if spans and keys[spans[-1][0]][: level + 1] == k[: level + 1]:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return spans


def heat_table_png(
    summary: pd.DataFrame,
    rows: Sequence[str] | str,
    columns: Sequence[str] | str,
    path: str | Path,
    title: str,
    *,
    scale: Scale = "env",
) -> Path:
    """Draw :func:`pivot` as a table image, each cell shaded by :func:`cell_colours`.

    Column levels are spanning headers (env over history, as in the seed's tables); the text
    is black or white, whichever contrasts more with the shading. Expert cells are grey.
    Matplotlib through an explicit Agg canvas (no pyplot state). Returns ``path``.
    """
    path = Path(path)
    grid = pivot_grid(summary, rows, columns)
    texts = pivot_texts(grid)
    fills = _colour_grid(grid, scale)
    n_levels, n_rowax = len(grid.col_axes), len(grid.row_axes)
    # Column widths (inches): row-label columns, then data columns.
    row_w = [_measure([a.capitalize()], "bold") + 2 * _PAD for a in grid.row_axes]
    for j in range(n_rowax):
        row_w[j] = max(row_w[j], _measure([str(k[j]) for k in grid.rows]) + 2 * _PAD)
    if n_levels > 1:
        row_w[-1] = max(row_w[-1], _measure(grid.col_axes[:-1]) + 2 * _PAD)
    data_w = [
        max(_measure([t[c] for t in texts]), _measure([str(k[-1])], "bold")) + 2 * _PAD
        for c, k in enumerate(grid.columns)
    ]
    for level in range(n_levels - 1):
        for start, stop in _spans(grid.columns, level):
            need = _measure([str(grid.columns[start][level])], "bold") + 2 * _PAD
            have = sum(data_w[start:stop])
            if have < need:
                for c in range(start, stop):
                    data_w[c] += (need - have) / (stop - start)
    table_w = sum(row_w) + sum(data_w)
    width = max(5.0, table_w + 2 * _MARGIN)
    title_lines = _wrap(title, width - 2 * _MARGIN)
    notes = _notes(summary, grid, scale)
    note_lines = [ln for n in notes for ln in _wrap(n, width - 2 * _MARGIN)]
    title_h = 0.2 * len(title_lines) + 0.1
    body_rows = max(1, len(grid.rows))
    notes_h = 0.17 * len(note_lines) + 0.45
    height = _MARGIN + title_h + _ROW_H * (n_levels + body_rows) + notes_h + _MARGIN

    fig = Figure(figsize=(width, height), dpi=150)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(0.0, width)
    ax.set_ylim(height, 0.0)
    ax.set_axis_off()
    x0 = _MARGIN
    y = _MARGIN
    for line in title_lines:
        ax.text(
            x0, y + 0.1, line, fontsize=_FONT + 1, fontweight="bold", va="center", parse_math=False
        )
        y += 0.2
    y += 0.1
    top = y
    ax.plot([x0, x0 + table_w], [top, top], color="black", lw=1.2)
    data_x = [x0 + sum(row_w) + sum(data_w[:c]) for c in range(len(data_w))]
    if not grid.rows:
        ax.text(
            x0 + table_w / 2,
            y + _ROW_H * (n_levels + 0.5),
            "no runs",
            ha="center",
            va="center",
            fontsize=_FONT,
            color="dimgray",
        )
    # Header rows: spanning levels, then leaf level with the row axes' names.
    for level in range(n_levels):
        yc = y + _ROW_H / 2
        leaf = level == n_levels - 1
        if leaf:
            rx = x0
            for a, w in zip(grid.row_axes, row_w, strict=True):
                ax.text(
                    rx + _PAD,
                    yc,
                    a.capitalize(),
                    fontsize=_FONT,
                    fontweight="bold",
                    va="center",
                    parse_math=False,
                )
                rx += w
        else:
            ax.text(
                x0 + sum(row_w) - _PAD,
                yc,
                grid.col_axes[level],
                fontsize=_FONT,
                style="italic",
                color="dimgray",
                ha="right",
                va="center",
                parse_math=False,
            )
        for start, stop in _spans(grid.columns, level):
            xs, xe = data_x[start], data_x[stop - 1] + data_w[stop - 1]
            ax.text(
                (xs + xe) / 2,
                yc,
                str(grid.columns[start][level]),
                fontsize=_FONT,
                fontweight="bold",
                ha="center",
                va="center",
                parse_math=False,
            )
            if not leaf:
                ax.plot([xs + 0.06, xe - 0.06], [y + _ROW_H - 0.02] * 2, color="black", lw=0.6)
        y += _ROW_H
    ax.plot([x0, x0 + table_w], [y, y], color="black", lw=0.8)
    prev: Key | None = None
    for ri, key in enumerate(grid.rows):
        expert = ri in grid.expert_rows
        if prev is not None and n_rowax > 1 and prev[0] != key[0]:  # a new outer group
            ax.plot([x0, x0 + table_w], [y, y], color="gray", lw=0.6)
        elif n_rowax == 1 and expert and (ri - 1) not in grid.expert_rows:
            ax.plot([x0, x0 + table_w], [y, y], color="gray", lw=0.6, ls="--")
        rx = x0
        for j, (v, w) in enumerate(zip(key, row_w, strict=True)):
            repeated = prev is not None and j < n_rowax - 1 and prev[: j + 1] == key[: j + 1]
            if not repeated:
                ax.text(
                    rx + _PAD,
                    y + _ROW_H / 2,
                    str(v),
                    fontsize=_FONT,
                    va="center",
                    style="italic" if expert else "normal",
                    parse_math=False,
                )
            rx += w
        for ci, (cx, cw) in enumerate(zip(data_x, data_w, strict=True)):
            fill = fills[ri][ci] or (EXPERT_FILL if expert and texts[ri][ci] else "")
            if fill:
                ax.add_patch(
                    Rectangle((cx, y), cw, _ROW_H, facecolor=fill, edgecolor="white", lw=1.2)
                )
            if texts[ri][ci]:
                ax.text(
                    cx + cw / 2,
                    y + _ROW_H / 2,
                    texts[ri][ci],
                    fontsize=_FONT,
                    ha="center",
                    va="center",
                    color=text_colour(fill or "#FFFFFF"),
                    parse_math=False,
                )
        prev = key
        y += _ROW_H
    if not grid.rows:
        y += _ROW_H
    ax.plot([x0, x0 + table_w], [y, y], color="black", lw=1.2)
    y += 0.15
    _gradient(ax, x0, y, scale)
    y += 0.3
    for line in note_lines:
        ax.text(
            x0, y + 0.085, line, fontsize=_FONT - 1, va="center", color="#333333", parse_math=False
        )
        y += 0.17
    fig.savefig(path, dpi=150, facecolor="white")
    return path


def _gradient(ax: Any, x: float, y: float, scale: Scale) -> None:
    """The colour scale, left to right: "Shading:", low end label, strip, high end label."""
    n, w, h = 48, 1.6, 0.14
    lo, hi = ("env min", "env max") if scale == "env" else ("0", "1")
    style: dict[str, Any] = {"va": "center", "fontsize": _FONT - 1, "color": "#333333"}
    ax.text(x, y + h / 2, "Shading:", **style)
    x += _measure(["Shading: "]) + 0.05
    ax.text(x, y + h / 2, lo, **style)
    x += _measure([lo]) + 0.08
    for i in range(n):
        ax.add_patch(
            Rectangle(
                (x + w * i / n, y), w / n + 0.002, h, lw=0, facecolor=heat_colour(i / (n - 1))
            )
        )
    ax.add_patch(Rectangle((x, y), w, h, fill=False, edgecolor="gray", lw=0.5))
    ax.text(x + w + 0.08, y + h / 2, hi, **style)


def _notes(summary: pd.DataFrame, grid: Grid, scale: Scale) -> list[str]:
    layout = (
        f"Rows: {' × '.join(grid.row_axes)}; columns: {' × '.join(grid.col_axes)}. "
        "Cells: mean normalised score (sample SD) over seeds; blank: no such run."
    )
    shading = (
        "Shading: mean score normalised within each env (lightest = the env's lowest mean, "
        "darkest = its highest)."
        if scale == "env"
        else "Shading: mean score on [0, 1]."
    )
    baseline = summary.attrs.get("baseline")
    notes = [layout, shading]
    if grid.expert_rows:
        notes.append(f"{EXPERT_NOTE[0].upper()}{EXPERT_NOTE[1:]}; unshaded.")
    if baseline:
        test = describe_test(summary.attrs).replace("`", "")
        notes.append(f"Baseline: {describe_baseline(baseline)}. {test}")
    return notes
