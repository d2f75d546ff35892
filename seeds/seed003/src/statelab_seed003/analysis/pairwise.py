"""Seed 003's §5.5 ablations from stored episodes (``statelab seed003 tables``): every pairwise
success difference among the trained writers (points, paired percentile bootstrap over games) at
F′ = 0 and pooled over the long lags ("no significant pairwise differences among trained
writers on 90 games"), each DSSR seed's zero-lag success ("the zero-lag test seed spread is
3.3–15.6%"), and the highest success of any LLM-written state at B = 64 ("at B = 64 no LLM
writer wins more than 2.2%").

A writer label is one or more spellings (:mod:`~statelab_seed003.analysis.plan`): a game's
success is their mean, a game counts where every spelling has a finished episode of it, and
a pair is compared on the games both sides have (:func:`~statelab_seed003.analysis.tables.
group_success`). Inputs are a store's cells (rollout 0, failed episodes left out).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from statelab.analysis._md import md_cell
from statelab.analysis.stats import Interval, paired_bootstrap
from statelab_seed003.analysis.plan import Pairwise
from statelab_seed003.analysis.tables import group_success, pooled_success


def excludes_zero(i: Interval) -> bool:
    """Whether a 95% interval lies wholly on one side of 0 (a difference called significant)."""
    return bool(i.games) and (i.low > 0 or i.high < 0)


def pair_differences(
    eps: Sequence[Mapping[str, Any]],
    writers: Mapping[str, Sequence[str]],
    rows: Sequence[str],
    pooled: Sequence[int],
    model: str | None = None,
) -> list[tuple[str, str, Interval, Interval]]:
    """Every pair (a, b) of ``rows`` in their order: a − b at F′ = 0 and pooled over
    ``pooled`` (each game's mean over those lags), paired over games."""
    out = []
    for a, b in combinations(rows, 2):
        zero = paired_bootstrap(
            group_success(eps, writers[a], 0, model), group_success(eps, writers[b], 0, model)
        )
        pool = paired_bootstrap(
            pooled_success(eps, writers[a], pooled, model),
            pooled_success(eps, writers[b], pooled, model),
        )
        out.append((a, b, zero, pool))
    return out


def seed_spread(
    eps: Sequence[Mapping[str, Any]], spellings: Sequence[str], model: str | None = None
) -> list[tuple[str, float, int]]:
    """Each spelling's success at F′ = 0 over its own finished games: (spelling, mean,
    games)."""
    out = []
    for h in spellings:
        per = group_success(eps, [h], 0, model)
        out.append((h, float(np.mean(list(per.values()))) if per else math.nan, len(per)))
    return out


def llm_ceiling(
    eps: Sequence[Mapping[str, Any]], budget: int, model: str | None = None
) -> tuple[str, int, float, int] | None:
    """The highest success of any LLM-written state (``llm_written``) at ``budget``, over every
    history spelling and F′: (history, F′, mean success, games); None when there is none
    (ties: the first spelling, then the smaller F′)."""
    cells: dict[tuple[str, int], list[float]] = {}
    for e in eps:
        if not e.get("llm_written") or e["budget"] != budget:
            continue
        if model is None or e["model"] == model:
            cells.setdefault((str(e["history"]), int(e["lag"])), []).append(float(e["success"]))
    if not cells:
        return None
    best = max(sorted(cells), key=lambda k: float(np.mean(cells[k])))
    return best[0], best[1], float(np.mean(cells[best])), len(cells[best])


def _cell(i: Interval) -> str:
    if not i.games:
        return "–"
    return f"{i.text(1, 100)}{' *' if excludes_zero(i) else ''} ({i.games} games)"


def pairwise_md(
    eps: Sequence[Mapping[str, Any]],
    writers: Mapping[str, Sequence[str]],
    cfg: Pairwise,
    readers: Mapping[str, str],
) -> list[str]:
    """The §5.5 section: the pairwise table per reader (``readers``: label -> model; one
    entry or all of the plan's), how many intervals exclude 0, the seeds' spread and the
    LLM-writer ceiling."""
    mine = [e for e in eps if e["budget"] == cfg.budget]
    tag = "{" + ", ".join(str(f) for f in cfg.pooled_lags) + "}"
    md = [
        f"### §5.5: pairwise differences among trained writers (B = {cfg.budget})",
        "",
        "Success of a minus b (points), paired percentile bootstrap over games (95%), at"
        f" F′ = 0 and pooled over F′ ∈ {tag} (each game's mean over those lags); *: the"
        " interval excludes 0.",
        "",
        f"| a − b | reader | F′=0 | F′ ∈ {tag} |",
        "|---|---|---|---|",
    ]
    notes = []
    for rl, model in (readers or {"": ""}).items():
        who = md_cell(rl or "–")
        pairs = pair_differences(mine, writers, cfg.rows, cfg.pooled_lags, model or None)
        for a, b, zero, pool in pairs:
            md.append(f"| {md_cell(a)} − {md_cell(b)} | {who} | {_cell(zero)} | {_cell(pool)} |")
        sig = [sum(excludes_zero(p[2]) for p in pairs), sum(excludes_zero(p[3]) for p in pairs)]
        notes.append(
            f"Reader {who}: {sig[0]} of {len(pairs)} pairwise intervals exclude 0 at F′ = 0,"
            f" {sig[1]} of {len(pairs)} pooled over F′ ∈ {tag}."
        )
        if cfg.spread:
            notes.append(_spread_line(mine, writers, cfg.spread, who, model or None))
        if cfg.ceiling_budget is not None:
            notes.append(_ceiling_line(eps, cfg.ceiling_budget, who, model or None))
    return [*md, "", *notes, ""]


def _spread_line(
    eps: Sequence[Mapping[str, Any]],
    writers: Mapping[str, Sequence[str]],
    label: str,
    who: str,
    model: str | None,
) -> str:
    got = seed_spread(eps, writers[label], model)
    vals = [m for _, m, n in got if n]
    each = "; ".join(
        f"{md_cell(h)}: " + (f"{100 * m:.1f}% ({n} games)" if n else "–") for h, m, n in got
    )
    span = f"{100 * min(vals):.1f}–{100 * max(vals):.1f}%" if vals else "–"
    return (
        f"Zero-lag success of each {md_cell(label)} spelling, reader {who}: {each}; spread {span}."
    )


def _ceiling_line(
    eps: Sequence[Mapping[str, Any]], budget: int, who: str, model: str | None
) -> str:
    top = llm_ceiling(eps, budget, model)
    head = (
        f"At B = {budget}, reader {who}, the highest success of an LLM-written state over every F′:"
    )
    if top is None:
        return f"{head} none (no LLM-written state at that budget)."
    return f"{head} {100 * top[2]:.1f}% ({md_cell(top[0])} at F′ = {top[1]}, {top[3]} games)."


__all__ = ["excludes_zero", "llm_ceiling", "pair_differences", "pairwise_md", "seed_spread"]
