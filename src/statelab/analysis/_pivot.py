"""Seed-style pivot tables of a :func:`summarise` table: text and Markdown (the heat-shaded
PNG is :mod:`statelab.analysis._heat`).

Rows are the values of some axes (e.g. model), columns a MultiIndex over others (e.g. env then
history), cells ``"0.46 (0.12)*"`` as in seed 000's Tables 3-8. Expert runs get their own row.
The PNG shades each cell by its mean on the seed's light-yellow -> orange -> purple scale
(#FCFDBF -> #FC8961 -> #B73779, piecewise linear), normalised within each env ("game family").
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from statelab.analysis._cells import cell_text, score_cell
from statelab.analysis._legend import describe_baseline, describe_test
from statelab.analysis._md import md_row
from statelab.analysis._roles import EXPERT_LABEL, EXPERT_NOTE, expert_rows, is_expert_row

HEAT_GROUP_AXIS = "env"
EXPERT_FILL = "#EEEEEE"
SEP = " · "

Key = tuple[Hashable, ...]


def _as_axes(axes: Sequence[str] | str, name: str) -> list[str]:
    out = [axes] if isinstance(axes, str) else list(axes)
    if not out:
        raise ValueError(f"{name} must name at least one axis")
    return out


def is_expert(rec: Mapping[str, Any]) -> bool:
    return is_expert_row(rec)


@dataclass
class Grid:
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


def pivot_grid(
    summary: pd.DataFrame, rows: Sequence[str] | str, columns: Sequence[str] | str
) -> Grid:
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
    normal = [r for r in records if not is_expert(r)]
    experts = [r for r in records if is_expert(r)]
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
    grid = Grid(row_axes, col_axes)
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


def pivot_texts(grid: Grid) -> list[list[str]]:
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
    grid = pivot_grid(summary, rows, columns)
    return frame(grid, pivot_texts(grid))


def frame(grid: Grid, data: list[list[str]]) -> pd.DataFrame:
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
    grid = pivot_grid(summary, rows, columns)
    texts = pivot_texts(grid)
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
    return bool(expert_rows(summary).any())


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
    grid = pivot_grid(summary, rows, columns)
    texts = pivot_texts(grid)
    header = [a.capitalize() for a in grid.row_axes] + [
        cell_text(column_label(k)) for k in grid.columns
    ]
    n_row = len(grid.row_axes)
    lines = [
        f"**{cell_text(title)}**",
        "",
        md_row(header),
        "|" + "|".join(["---"] * n_row + [":---:"] * len(grid.columns)) + "|",
    ]
    for key, cells in zip(grid.rows, texts, strict=True):
        lines.append(md_row([cell_text(v) for v in key] + cells))
    lines += ["", pivot_legend(summary, baseline), ""]
    return "\n".join(lines)
