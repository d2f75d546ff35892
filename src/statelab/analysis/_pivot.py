"""Seed-style pivot tables of a :func:`summarise` table: text, Markdown and a heat-shaded PNG.

Rows are the values of some axes (e.g. model), columns a MultiIndex over others (e.g. env then
history), cells ``"0.46 (0.12)*"`` as in seed 000's Tables 3-8. Expert runs get their own row.
The PNG shades each cell by its mean on the seed's light-yellow -> orange -> purple scale
(#FCFDBF -> #FC8961 -> #B73779, piecewise linear), normalised within each env ("game family").
"""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LinearSegmentedColormap, to_rgb
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Rectangle

from statelab.analysis._summary import EXPERT, EXPERT_LABEL, EXPERT_NOTE, ROLE_EXPERT
from statelab.analysis._table import _cell, _missing, describe_baseline, describe_test, score_cell

HEAT_STOPS: tuple[tuple[float, str], ...] = ((0.0, "#FCFDBF"), (0.5, "#FC8961"), (1.0, "#B73779"))
"""The seed's shading scale: position in [0, 1] -> colour, linear in RGB between stops."""
HEAT_CMAP = LinearSegmentedColormap.from_list("statelab_heat", list(HEAT_STOPS))
HEAT_GROUP_AXIS = "env"
EXPERT_FILL = "#EEEEEE"
SEP = " · "
Scale = Literal["env", "unit"]

Key = tuple[Hashable, ...]


def _as_axes(axes: Sequence[str] | str, name: str) -> list[str]:
    out = [axes] if isinstance(axes, str) else list(axes)
    if not out:
        raise ValueError(f"{name} must name at least one axis")
    return out


def _is_expert(rec: Mapping[str, Any]) -> bool:
    return rec.get("agent") == EXPERT or rec.get("role") == ROLE_EXPERT


@dataclass
class _Grid:
    row_axes: list[str]
    col_axes: list[str]
    rows: list[Key] = field(default_factory=list)
    columns: list[Key] = field(default_factory=list)
    cells: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    expert_rows: set[int] = field(default_factory=set)


def _clash(a: Mapping[str, Any], b: Mapping[str, Any], axes: Sequence[str]) -> ValueError:
    differ = [x for x in axes if a.get(x) != b.get(x)]
    return ValueError(
        f"runs {a.get('run')!r} and {b.get('run')!r} fall into the same pivot cell; they "
        f"differ on {differ}: add those axes to rows or columns, or filter the summary"
    )


def _grid(summary: pd.DataFrame, rows: Sequence[str] | str, columns: Sequence[str] | str) -> _Grid:
    """Place each run in a (row, column) cell; keys ordered level by level, first appearance."""
    row_axes, col_axes = _as_axes(rows, "rows"), _as_axes(columns, "columns")
    missing = [a for a in row_axes + col_axes if a not in summary.columns]
    if missing:
        raise ValueError(f"pivot axes not in the summary: {missing}")
    both = sorted(set(row_axes) & set(col_axes))
    if both or len(set(row_axes)) < len(row_axes) or len(set(col_axes)) < len(col_axes):
        raise ValueError(f"pivot axes repeated: rows={row_axes}, columns={col_axes}")
    all_axes = list(summary.attrs.get("axes") or row_axes + col_axes)
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in r.items()} for r in summary.to_dict("records")
    ]
    normal = [r for r in records if not _is_expert(r)]
    experts = [r for r in records if _is_expert(r)]
    rank: dict[str, dict[Hashable, float]] = {
        a: {v: float(i) for i, v in enumerate(dict.fromkeys(r[a] for r in normal))}
        for a in row_axes + col_axes
    }
    placed: dict[tuple[Key, Key], dict[str, Any]] = {}
    row_rank: dict[Key, tuple[float, ...]] = {}
    col_rank: dict[Key, tuple[float, ...]] = {}
    for r in normal:
        rk = tuple(r[a] for a in row_axes)
        ck = tuple(r[a] for a in col_axes)
        if (rk, ck) in placed:
            raise _clash(placed[(rk, ck)], r, all_axes)
        placed[(rk, ck)] = r
        row_rank[rk] = tuple(rank[a][v] for a, v in zip(row_axes, rk, strict=True))
        col_rank[ck] = tuple(rank[a][v] for a, v in zip(col_axes, ck, strict=True))
    normal_cols = list(col_rank)
    expert_keys: set[Key] = set()
    for r in experts:
        rk, rr = _expert_row(r, row_axes, rank)
        matches = [
            ck
            for ck in normal_cols
            if all(
                r[a] == v or (a != HEAT_GROUP_AXIS and r[a] not in rank[a])
                for a, v in zip(col_axes, ck, strict=True)
            )
        ]
        if not matches:  # an env with expert runs only: a column of its own
            ck = tuple(r[a] for a in col_axes)
            col_rank.setdefault(ck, tuple(rank[a].get(r[a], math.inf) for a in col_axes))
            matches = [ck]
        for ck in matches:
            if (rk, ck) in placed:
                raise _clash(placed[(rk, ck)], r, all_axes)
            placed[(rk, ck)] = r
        row_rank[rk] = rr
        expert_keys.add(rk)
    grid = _Grid(row_axes, col_axes)
    grid.rows = sorted(row_rank, key=lambda k: row_rank[k])
    grid.columns = sorted(col_rank, key=lambda k: col_rank[k])
    r_index = {k: i for i, k in enumerate(grid.rows)}
    c_index = {k: i for i, k in enumerate(grid.columns)}
    grid.cells = {(r_index[rk], c_index[ck]): rec for (rk, ck), rec in placed.items()}
    grid.expert_rows = {r_index[k] for k in expert_keys}
    return grid


def _expert_row(
    rec: Mapping[str, Any], row_axes: Sequence[str], rank: Mapping[str, Mapping[Hashable, float]]
) -> tuple[Key, tuple[float, ...]]:
    """An expert run's row: values no other run has (model "-") become "privileged expert",
    ranked last, except an env's name; when none is replaced (e.g. rows=["env"]), the last
    value becomes "<value> (privileged expert)"."""
    key: list[Hashable] = []
    ranks: list[float] = []
    replaced = False
    for a in row_axes:
        v = rec[a]
        if v in rank[a] or a == HEAT_GROUP_AXIS:  # an env keeps its name
            key.append(v)
            ranks.append(rank[a].get(v, math.inf))
        else:
            key.append(EXPERT_LABEL)
            ranks.append(math.inf)
            replaced = True
    if not replaced:
        key[-1] = f"{key[-1]} ({EXPERT_LABEL})"
        ranks[-1] += 0.5
    return tuple(key), tuple(ranks)


def _texts(grid: _Grid) -> list[list[str]]:
    out = [[""] * len(grid.columns) for _ in grid.rows]
    for (ri, ci), rec in grid.cells.items():
        out[ri][ci] = score_cell(rec)
    return out


def pivot(
    summary: pd.DataFrame, rows: Sequence[str] | str, columns: Sequence[str] | str
) -> pd.DataFrame:
    """The runs of ``summary`` laid out as a table of ``"0.46 (0.12)*"`` strings.

    The index holds the ``rows`` axes' values (a MultiIndex when several), the columns are a
    MultiIndex over the ``columns`` axes; both in first-appearance order level by level (so the
    baseline value comes first). ``*`` marks a significant difference from the baseline.
    Expert runs form a row labelled "privileged expert" (their cell repeated under every
    column of their env). Combinations without a run are ``""``; a run without finished
    episodes is "–".
    Raises ``ValueError`` when two runs fall into one cell (an axis is missing from the layout).
    """
    grid = _grid(summary, rows, columns)
    return _frame(grid, _texts(grid))


def _frame(grid: _Grid, data: list[list[str]]) -> pd.DataFrame:
    if len(grid.row_axes) == 1:
        index: pd.Index = pd.Index([k[0] for k in grid.rows], name=grid.row_axes[0], dtype=object)
    else:
        index = pd.MultiIndex.from_tuples(grid.rows, names=grid.row_axes)
    cols = pd.MultiIndex.from_tuples(grid.columns, names=grid.col_axes)
    return pd.DataFrame(data, index=index, columns=cols, dtype=object)


def column_label(key: Sequence[Hashable]) -> str:
    """A flattened column header: ``("hanoi", "full")`` -> ``"hanoi · full"``."""
    return SEP.join(str(v) for v in key)


def pivot_records(
    summary: pd.DataFrame, rows: Sequence[str] | str, columns: Sequence[str] | str
) -> list[dict[str, str]]:
    """The pivot as JSON-ready rows: row-axis values, then flattened column label -> cell."""
    grid = _grid(summary, rows, columns)
    texts = _texts(grid)
    labels = [column_label(k) for k in grid.columns]
    return [
        {
            **{a: str(v) for a, v in zip(grid.row_axes, key, strict=True)},
            **dict(zip(labels, texts[i], strict=True)),
        }
        for i, key in enumerate(grid.rows)
    ]


def pivot_legend(summary: pd.DataFrame, baseline: Mapping[str, str] | None = None) -> str:
    """What the pivot's cells and ``*`` mean, and which baseline and test are used."""
    if baseline is None:
        baseline = summary.attrs.get("baseline")
    text = (
        "Cells: mean normalised score (sample SD; – for one seed) over seeds, scores in "
        "[0, 1]; empty: no such run."
    )
    if _is_expert_present(summary):
        text += f" Row {EXPERT_NOTE}."
    if not baseline:
        return text + " No baseline given, so no significance tests."
    return (
        f"{text} Baseline: {describe_baseline(baseline)}, every other axis equal. "
        f"{describe_test(summary.attrs)} p and the number of pairs: the per-run table."
    )


def _is_expert_present(summary: pd.DataFrame) -> bool:
    return "agent" in summary.columns and bool((summary["agent"] == EXPERT).any())


def pivot_markdown(
    summary: pd.DataFrame,
    rows: Sequence[str] | str,
    columns: Sequence[str] | str,
    title: str,
    *,
    baseline: Mapping[str, str] | None = None,
) -> str:
    """:func:`pivot` as a Markdown table (column levels flattened as "hanoi · full"), with a
    bold caption above and a legend line (baseline, test, ``*``) below."""
    grid = _grid(summary, rows, columns)
    texts = _texts(grid)
    header = [a.capitalize() for a in grid.row_axes] + [
        _cell(column_label(k)) for k in grid.columns
    ]
    n_row = len(grid.row_axes)
    lines = [
        f"**{_cell(title)}**",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * n_row + [":---:"] * len(grid.columns)) + "|",
    ]
    for key, cells in zip(grid.rows, texts, strict=True):
        lines.append("| " + " | ".join([_cell(v) for v in key] + cells) + " |")
    lines += ["", pivot_legend(summary, baseline), ""]
    return "\n".join(lines)


# --- heat shading -------------------------------------------------------------------------


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


def _positions(grid: _Grid, scale: Scale) -> dict[tuple[int, int], float]:
    """Colour-scale position of every shaded cell (non-expert runs with a mean)."""
    if scale not in ("env", "unit"):
        raise ValueError(f"scale must be 'env' or 'unit', got {scale!r}")
    means: dict[tuple[int, int], tuple[Hashable, float]] = {}
    for pos, rec in grid.cells.items():
        if not _is_expert(rec) and not _missing(rec["mean"]):
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
    grid = _grid(summary, rows, columns)
    return _frame(grid, _colour_grid(grid, scale))


def _colour_grid(grid: _Grid, scale: Scale) -> list[list[str]]:
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
    grid = _grid(summary, rows, columns)
    texts = _texts(grid)
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


def _notes(summary: pd.DataFrame, grid: _Grid, scale: Scale) -> list[str]:
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
