"""Seed 003's κ contrasts (``statelab seed003 tables``, through :mod:`~statelab_seed003.analysis.
lagtables`): Appendix G's round-by-round contrasts (the relative κ change of one writer over
another at F′ = 0 and pooled over the long lags, game-paired) and Appendix F's F = 40 minus
F = 0 κ difference per writer (game-clustered), from a store's audit rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from statelab.analysis._md import md_cell
from statelab.analysis.stats import BOOT_SEED, RESAMPLES, Interval, clustered_bootstrap

_NAN = Interval(math.nan, math.nan, math.nan, 0, 0)


# -- round-by-round κ contrasts (Appendix G) ------------------------------------------------
def game_kappa(
    audit: Sequence[Mapping[str, Any]],
    spellings: Sequence[str],
    lags: Sequence[int],
    budget: int | None,
    runs: Mapping[str, Mapping[str, Any]] | None = None,
    model: str | None = None,
) -> dict[int, list[float]]:
    """Per game: the κ of every audited point of ``spellings`` at ``lags`` and ``budget``
    (reader ``model`` when given; ``runs``: run -> its cell, for the model)."""
    by: dict[int, list[float]] = {}
    for r in audit:
        if r["history"] not in spellings or r["lag"] not in lags or r["kappa"] is None:
            continue
        if budget is not None and r["budget"] != budget:
            continue
        if model is not None and (runs or {}).get(str(r["run"]), {}).get("model") != model:
            continue
        by.setdefault(int(r["seed"]), []).append(float(r["kappa"]))
    return by


def relative_change(
    a: Mapping[int, Sequence[float]],
    b: Mapping[int, Sequence[float]],
    *,
    resamples: int = RESAMPLES,
    seed: int = BOOT_SEED,
) -> Interval:
    """100 × (mean κ of ``a`` / mean κ of ``b`` − 1) over the games both have (each side's
    mean over its points), with a game-paired percentile bootstrap (the same games drawn for
    both sides). NaN when ``b``'s mean is 0 or no game is shared."""
    games = sorted(g for g in a if a[g] and g in b and b[g])
    if not games:
        return _NAN
    sa = np.array([float(np.sum(a[g])) for g in games])
    na = np.array([len(a[g]) for g in games], dtype=float)
    sb = np.array([float(np.sum(b[g])) for g in games])
    nb = np.array([len(b[g]) for g in games], dtype=float)
    mb = sb.sum() / nb.sum()
    if mb == 0:
        return _NAN
    mean = 100.0 * ((sa.sum() / na.sum()) / mb - 1.0)
    idx = np.random.default_rng(seed).integers(0, len(games), size=(resamples, len(games)))
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = 100.0 * ((sa[idx].sum(1) / na[idx].sum(1)) / (sb[idx].sum(1) / nb[idx].sum(1)) - 1)
    draws = draws[np.isfinite(draws)]
    lo, hi = (float(x) for x in np.percentile(draws, [2.5, 97.5])) if draws.size else (mean, mean)
    return Interval(float(mean), lo, hi, len(games), int(na.sum() + nb.sum()))


def kappa_contrasts(
    audit: Sequence[Mapping[str, Any]],
    writers: Mapping[str, Sequence[str]],
    pairs: Sequence[tuple[str, str]],
    budget: int | None,
    pooled: Sequence[int] = (20, 40),
    runs: Mapping[str, Mapping[str, Any]] | None = None,
    model: str | None = None,
) -> list[str]:
    """Each pair's relative κ change (%) at F′ = 0 and pooled over ``pooled``."""
    tag = "{" + ", ".join(str(f) for f in pooled) + "}"
    md = [
        f"### Round-by-round κ contrasts (B = {budget}): relative change of mean κ (%)",
        "",
        "100 × (κ of a / κ of b − 1), each side's mean over its audited points, game-paired"
        f" bootstrap; the lag contrast pools F′ ∈ {tag}. Negative: a has the lower regret.",
        "",
        f"| a vs b | F′=0 | F′ ∈ {tag} |",
        "|---|---|---|",
    ]
    for a, b in pairs:
        cells = []
        for lags in ([0], list(pooled)):
            ka = game_kappa(audit, writers[a], lags, budget, runs, model)
            kb = game_kappa(audit, writers[b], lags, budget, runs, model)
            i = relative_change(ka, kb)
            cells.append(f"{i.text(0)}% ({i.games} games)" if i.games else "–")
        md.append(f"| {md_cell(a)} vs {md_cell(b)} | " + " | ".join(cells) + " |")
    return [*md, ""]


def filler_kappa(
    audit: Sequence[Mapping[str, Any]],
    writers: Mapping[str, Sequence[str]],
    rows: Sequence[str],
    lags: tuple[int, int],
    budget: int | None,
    runs: Mapping[str, Mapping[str, Any]] | None = None,
    model: str | None = None,
) -> list[str]:
    """Appendix F: each writer's mean κ at F = ``lags[1]`` minus at F = ``lags[0]`` (nats),
    game-clustered over the games audited at both (each side's mean over its points)."""
    lo, hi = lags
    md = [
        f"### Appendix F: κ at F = {hi} minus F = {lo} (B = {budget}), nats",
        "",
        "Mean κ over the audited points; game-clustered 95% intervals (the difference over the"
        " games audited at both).",
        "",
        f"| writer | κ at F={lo} | κ at F={hi} | F={hi} − F={lo} |",
        "|---|---|---|---|",
    ]
    for w in rows:
        a = game_kappa(audit, writers[w], [hi], budget, runs, model)
        b = game_kappa(audit, writers[w], [lo], budget, runs, model)
        d = clustered_bootstrap(a, b)
        md.append(
            f"| {md_cell(w)} | {clustered_bootstrap(b).text(2)} | {clustered_bootstrap(a).text(2)}"
            f" | {d.text(2)}" + (f" ({d.games} games)" if d.games else "") + " |"
        )
    return [*md, ""]


__all__ = ["filler_kappa", "game_kappa", "kappa_contrasts", "relative_change"]
