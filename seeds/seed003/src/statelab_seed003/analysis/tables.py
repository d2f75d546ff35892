"""Seed 003's test-split tables and figures from stored episodes and audits: Table 2 (the
writers under R1 and R2 by F′, with paired contrasts at F′ = 0 and pooled over F′ ∈ {20, 40}),
Table 14 (the budget frontier: FULL, ORACLE-B and every writer at B = 64/128/256 by F′),
Figures 9 and 10 (κ against F′ for groups of writers) and Figure 4 (the share of post-reveal
write points where no candidate holds a recipe directive, and how often the recursive score
prefers the more complete of two candidates that differ in coverage).

A writer label names one or more history spellings (:mod:`~statelab_seed003.analysis.plan`):
a game's success is the mean over them, and a game counts only where every spelling has a
finished episode of it (a failed episode drops that game from the group and every contrast
with it). Rollouts other than 0 are never games (:mod:`~statelab_seed003.analysis.episodes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from statelab.analysis._md import md_cell
from statelab.analysis.audit.measures import form_of
from statelab.analysis.stats import Interval, clustered_bootstrap, paired_bootstrap


# -- per-game values ------------------------------------------------------------------------
def group_success(
    eps: Sequence[Mapping[str, Any]], spellings: Sequence[str], lag: int, model: str | None = None
) -> dict[int, float]:
    """Per game: the mean success over ``spellings`` at F′ = ``lag`` (reader ``model`` when
    given), for the games every spelling has."""
    per: list[dict[int, float]] = []
    for h in spellings:
        per.append(
            {
                int(e["seed"]): float(e["success"])
                for e in eps
                if e["history"] == h and e["lag"] == lag and (model is None or e["model"] == model)
            }
        )
    if not per or not all(per):
        return {}
    games = set.intersection(*(set(p) for p in per))
    return {g: float(np.mean([p[g] for p in per])) for g in sorted(games)}


def pooled_success(
    eps: Sequence[Mapping[str, Any]],
    spellings: Sequence[str],
    lags: Sequence[int],
    model: str | None = None,
) -> dict[int, float]:
    """Per game: the mean over ``lags`` of :func:`group_success` (games present at every lag)."""
    by = [group_success(eps, spellings, f, model) for f in lags]
    if not by or not all(by):
        return {}
    games = set.intersection(*(set(b) for b in by))
    return {g: float(np.mean([b[g] for b in by])) for g in sorted(games)}


def gain_slope(
    eps: Sequence[Mapping[str, Any]],
    a: Sequence[str],
    b: Sequence[str],
    lags: Sequence[int],
    model: str | None = None,
) -> dict[int, float]:
    """Per game: the least-squares slope over F′ of the gain (``a`` − ``b``) at ``lags``."""
    gains = []
    for f in lags:
        x, y = group_success(eps, a, f, model), group_success(eps, b, f, model)
        gains.append({g: x[g] - y[g] for g in set(x) & set(y)})
    if not gains or not all(gains):
        return {}
    games = sorted(set.intersection(*(set(d) for d in gains)))
    xs = np.array(lags, dtype=float) - float(np.mean(lags))
    return {g: float(np.dot(xs, [d[g] for d in gains]) / np.dot(xs, xs)) for g in games}


def group_kappa(
    audit: Sequence[Mapping[str, Any]],
    spellings: Sequence[str],
    lag: int,
    models: Mapping[str, str] | None = None,
    model: str | None = None,
) -> Interval:
    """Mean κ over the audited points of ``spellings`` at F′ = ``lag``, game-clustered (a
    game brings its points of every spelling); ``models``: run -> reader model."""
    by: dict[int, list[float]] = {}
    for r in audit:
        if r["history"] not in spellings or r["lag"] != lag or r["kappa"] is None:
            continue
        if model is not None and (models or {}).get(str(r["run"])) != model:
            continue
        by.setdefault(int(r["seed"]), []).append(float(r["kappa"]))
    return clustered_bootstrap(by)


# -- Table 2 --------------------------------------------------------------------------------
def table2(
    eps: Sequence[Mapping[str, Any]],
    writers: Mapping[str, Sequence[str]],
    rows: Sequence[str],
    readers: Mapping[str, str],
    contrasts: Sequence[tuple[str, str]],
    pooled: Sequence[int] = (20, 40),
) -> list[str]:
    """Success (%) per writer and reader by F′, then each contrast (points) at F′ = 0 and
    pooled over ``pooled``, paired by game."""
    lags = sorted({int(e["lag"]) for e in eps})
    readers = readers or {"": ""}
    md = [
        "### Table 2: test success (%) by writer and reader",
        "",
        "| writer | reader | " + " | ".join(f"F′={f}" for f in lags) + " |",
        "|" + "---|" * (2 + len(lags)),
    ]
    for rl, model in readers.items():
        for w in rows:
            cells = [
                paired_bootstrap(group_success(eps, writers[w], f, model or None)).text(1, 100)
                for f in lags
            ]
            md.append(f"| {md_cell(w)} | {md_cell(rl or '–')} | " + " | ".join(cells) + " |")
    if contrasts:
        tag = "{" + ", ".join(str(f) for f in pooled) + "}"
        md += [
            "",
            "Contrasts (points, paired bootstrap over games): at F′ = 0, and pooled over "
            f"F′ ∈ {tag} (each game's mean over those lags).",
            "",
            "| contrast | reader | F′=0 | F′ ∈ " + tag + " |",
            "|---|---|---|---|",
        ]
        for rl, model in readers.items():
            m = model or None
            for a, b in contrasts:
                zero = paired_bootstrap(
                    group_success(eps, writers[a], 0, m), group_success(eps, writers[b], 0, m)
                )
                pool = paired_bootstrap(
                    pooled_success(eps, writers[a], pooled, m),
                    pooled_success(eps, writers[b], pooled, m),
                )
                md.append(
                    f"| {md_cell(a)} − {md_cell(b)} | {md_cell(rl or '–')} | "
                    f"{zero.text(1, 100)} | {pool.text(1, 100)} |"
                )
    return [*md, ""]


# -- Table 14 -------------------------------------------------------------------------------
def _mean_cells(
    mine: Sequence[Mapping[str, Any]], forms: Sequence[str], b: int, lag: int
) -> dict[int, float]:
    """Per game: the mean success over ``forms`` at B = ``b`` and F′ = ``lag``, for the games
    every form has (a form with no episode there: no game)."""
    per = [
        {int(e["seed"]): float(e["success"]) for e in mine
         if e["form"] == f and e["budget"] == b and e["lag"] == lag}
        for f in forms
    ]  # fmt: skip
    if not per or not all(per):
        return {}
    games = set.intersection(*(set(p) for p in per))
    return {g: float(np.mean([p[g] for p in per])) for g in sorted(games)}


def table14(
    eps: Sequence[Mapping[str, Any]],
    budgets: Sequence[int],
    model: str | None = None,
    means: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The budget frontier: success (%) by F′ for FULL, then every budgeted form (ORACLE-B
    first) at each of ``budgets``. ``means``: label -> history spellings (the three DSSR
    seeds) whose forms make one row per budget instead of a row each: a game's success is
    the mean over them, and a game counts only where every one has a finished episode at
    that B and F′ (as Table 2's DSSR row)."""
    lags = sorted({int(e["lag"]) for e in eps})
    mine = [e for e in eps if model is None or e["model"] == model]
    grouped = {label: list(dict.fromkeys(form_of(s) for s in sp))
               for label, sp in (means or {}).items()}  # fmt: skip
    pooled = {f for fs in grouped.values() for f in fs}
    forms = sorted({e["form"] for e in mine if e["budget"] is not None and e["form"] not in pooled},
                   key=lambda f: (f != "oracle-bounded", f))  # fmt: skip
    md = [
        "### Table 14: test budget frontier, success (%)",
        "",
        "| history | B | " + " | ".join(f"F′={f}" for f in lags) + " |",
        "|" + "---|" * (2 + len(lags)),
    ]

    def row(name: str, b: int | None, keep: Any) -> None:
        cells = []
        for f in lags:
            got = {int(e["seed"]): float(e["success"]) for e in mine if keep(e) and e["lag"] == f}
            cells.append(paired_bootstrap(got).text(1, 100))
        md.append(f"| {md_cell(name)} | {b or '–'} | " + " | ".join(cells) + " |")

    if any(e["form"] == "full" for e in mine):
        row("full", None, lambda e: e["form"] == "full")
    for form in forms:
        for b in budgets:
            if any(e["form"] == form and e["budget"] == b for e in mine):
                row(form, b, lambda e, form=form, b=b: e["form"] == form and e["budget"] == b)
    notes = []
    for label, fs in grouped.items():
        shown = False
        for b in budgets:
            if not any(e["form"] in fs and e["budget"] == b for e in mine):
                continue
            cells = [paired_bootstrap(_mean_cells(mine, fs, b, f)).text(1, 100) for f in lags]
            md.append(f"| {md_cell(label)} | {b} | " + " | ".join(cells) + " |")
            shown = True
        if shown:
            notes.append(f"{label}: each game's mean over {len(fs)} writers ({', '.join(fs)}), "
                         "games where every one finished")  # fmt: skip
    return [*md, *(["", *notes] if notes else []), ""]


# -- Figures 9 and 10 -----------------------------------------------------------------------
def kappa_lines(
    audit: Sequence[Mapping[str, Any]],
    lines: Mapping[str, Sequence[str]],
    lags: Sequence[int],
    models: Mapping[str, str] | None = None,
    model: str | None = None,
) -> dict[str, dict[int, Interval]]:
    """κ by F′ for each line (a label and its spellings)."""
    return {
        name: {f: group_kappa(audit, sp, f, models, model) for f in lags}
        for name, sp in lines.items()
    }


def plot_lines(lines: Mapping[str, Mapping[int, Interval]], path: Path, title: str) -> bool:
    """A κ-against-F′ figure with 95% intervals; False when no line has a point."""
    pts = {k: {f: i for f, i in v.items() if i.games} for k, v in lines.items()}
    if not any(pts.values()):
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, by in pts.items():
        xs = sorted(by)
        if not xs:
            continue
        ys = [by[x].mean for x in xs]
        err = [[by[x].mean - by[x].low for x in xs], [by[x].high - by[x].mean for x in xs]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=name)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("F′ (post-reveal filler steps)")
    ax.set_ylabel("mean κ (nats)")
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def lines_md(lines: Mapping[str, Mapping[int, Interval]], caption: str) -> list[str]:
    """The numbers behind a κ figure, as a table."""
    lags = sorted({f for v in lines.values() for f in v})
    md = [caption, "", "| line | " + " | ".join(f"F′={f}" for f in lags) + " |"]
    md.append("|" + "---|" * (1 + len(lags)))
    for name, by in lines.items():
        md.append(f"| {md_cell(name)} | " + " | ".join(by[f].text(2) for f in lags) + " |")
    return [*md, ""]


# -- Figure 4 -------------------------------------------------------------------------------
def fig4(records: Sequence[Mapping[str, Any]]) -> dict[int, dict[str, int]]:
    """Per F′, from scored write points (``lag``, ``post_reveal``, each candidate's
    ``coverage`` (recipe directives it holds) and ``score`` (recursive, nats; lower is better)):
    ``post_reveal`` points, ``none_hold`` (no candidate holds a directive), ``pairs`` (pairs of
    candidates differing in coverage) and ``prefer_complete`` (of those, the pairs where the
    more complete one scores strictly better)."""
    out: dict[int, dict[str, int]] = {}
    for r in records:
        if not r["post_reveal"]:
            continue
        c = out.setdefault(int(r["lag"]), dict.fromkeys(
            ("post_reveal", "none_hold", "pairs", "prefer_complete"), 0))  # fmt: skip
        cov, score = list(r["coverage"]), list(r["score"])
        c["post_reveal"] += 1
        c["none_hold"] += int(max(cov, default=0) == 0)
        for i in range(len(cov)):
            for j in range(i + 1, len(cov)):
                if cov[i] == cov[j]:
                    continue
                more, less = (i, j) if cov[i] > cov[j] else (j, i)
                c["pairs"] += 1
                c["prefer_complete"] += int(score[more] < score[less])
    return dict(sorted(out.items()))


def fig4_md(counts: Mapping[int, Mapping[str, int]]) -> list[str]:
    """Figure 4's numbers (the share of points where no candidate holds a directive, and the
    share of coverage-differing pairs where the score prefers the more complete one)."""
    md = [
        "### Figure 4: post-reveal write points",
        "",
        "| F′ | post-reveal points | no candidate holds a directive | pairs differing in "
        "coverage | the score prefers the more complete |",
        "|---:|---:|---:|---:|---:|",
    ]
    for f, c in counts.items():
        none = 100 * c["none_hold"] / c["post_reveal"] if c["post_reveal"] else float("nan")
        pref = 100 * c["prefer_complete"] / c["pairs"] if c["pairs"] else float("nan")
        md.append(
            f"| {f} | {c['post_reveal']} | {c['none_hold']} ({none:.1f}%) | {c['pairs']} | "
            + (f"{c['prefer_complete']} ({pref:.1f}%)" if c["pairs"] else "–")
            + " |"
        )
    return [*md, ""]


__all__ = [
    "fig4",
    "fig4_md",
    "gain_slope",
    "group_kappa",
    "group_success",
    "kappa_lines",
    "lines_md",
    "plot_lines",
    "pooled_success",
    "table2",
    "table14",
]
