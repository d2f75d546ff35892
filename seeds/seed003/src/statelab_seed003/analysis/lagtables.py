"""Seed 003's lag tables beside Tables 2 and 14 (``statelab seed003 tables``): Table 7 (κ, β and
δ_full by relevance-lag bin, with how often the cookbook chunk was the most consequential),
the κ contrasts (:mod:`~statelab_seed003.analysis.kappas`: Appendix G's round by round,
Appendix F's F = 40 minus F = 0), Appendix I's exploratory validation lag
grid (success and gain over a baseline by F′ at one budget, and the same split by whether the
reader's first decision is in the kitchen), and Appendix F's a*-tie check (of sampled steps
where the reader's action is not a*, how often it still shortened the oracle plan).

Inputs are a store's cells (:mod:`~statelab_seed003.analysis.episodes`: rollout 0, failed
episodes left out) and its audit rows. The lag grid's start rooms and the tie check's plans
are privileged, so they come from re-simulating stored episodes
(:func:`start_rooms`, :func:`tie_records`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from statelab.analysis._md import md_cell
from statelab.analysis.stats import Interval, clustered_bootstrap, paired_bootstrap
from statelab.core import ConfigError
from statelab_seed003.analysis.episodes import Cells, by_protocol, tag_headers
from statelab_seed003.analysis.kappas import (
    filler_kappa,
    kappa_contrasts,
)
from statelab_seed003.analysis.plan import Plan
from statelab_seed003.analysis.tables import group_success


# -- Table 7 --------------------------------------------------------------------------------
def lag_bin(lag: int | None, edges: Sequence[int]) -> str | None:
    """The bin label of a relevance lag: ``edges`` [0, 5, 10] give ``0–4``, ``5–9``, ``≥10``;
    None below the first edge or for an undefined lag."""
    if lag is None or lag < edges[0]:
        return None
    for lo, hi in pairwise(edges):
        if lo <= lag < hi:
            return f"{lo}–{hi - 1}"
    return f"≥{edges[-1]}"


def bin_labels(edges: Sequence[int]) -> list[str]:
    """Every bin's label, in order."""
    return [f"{lo}–{hi - 1}" for lo, hi in pairwise(edges)] + [f"≥{edges[-1]}"]


def _clustered(rows: Iterable[Mapping[str, Any]], key: str) -> Interval:
    by: dict[int, list[float]] = {}
    for r in rows:
        if r.get(key) is not None:
            by.setdefault(int(r["seed"]), []).append(float(r[key]))
    return clustered_bootstrap(by)


def table7_cells(
    audit: Sequence[Mapping[str, Any]], edges: Sequence[int], budget: int | None
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per row (form · reader · writer), per relevance-lag bin (and ``undefined``: the lag was
    tried and no chunk cost 0.5 nats): the points, their κ, β and δ_full (game-clustered) and
    how many named the cookbook chunk. Only points where the lag was tried (``rel_gain``
    stored) count; budgeted rows at ``budget`` only, unbudgeted rows at any."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    tried = [r for r in audit if r.get("rel_gain") is not None]
    for row in sorted({str(r["row"]) for r in tried}):
        mine = [r for r in tried if r["row"] == row and r["budget"] in (budget, None)]
        if not mine:
            continue
        cells: dict[str, dict[str, Any]] = {}
        for label in [*bin_labels(edges), "undefined"]:
            pts = [r for r in mine if (lag_bin(r.get("rel_lag"), edges) or "undefined") == label]
            cells[label] = {
                "points": len(pts),
                "kappa": _clustered(pts, "kappa"),
                "beta": _clustered(pts, "beta"),
                "full": _clustered(pts, "nll_full"),
                "cookbook": sum(int(r.get("rel_is_reveal") or 0) for r in pts),
            }
        out[row] = cells
    return out


def table7(
    audit: Sequence[Mapping[str, Any]], edges: Sequence[int], budget: int | None
) -> list[str]:
    """Table 7's markdown: κ, β and δ_full (nats) by relevance-lag bin for every audited row."""
    cells = table7_cells(audit, edges, budget)
    md = [
        f"### Table 7: κ, β and δ_full (nats) by relevance-lag bin (B = {budget})",
        "",
        "Relevance lag: leave-one-chunk-out on the full history (`statelab audit --relevance`);"
        " game-clustered 95% intervals; cookbook: points whose most consequential chunk is the"
        " reveal.",
        "",
        "| history | lag bin | points | κ | β | δ_full | cookbook |",
        "|---|---|---:|---|---|---|---:|",
    ]
    for row, by in cells.items():
        for label, c in by.items():
            if not c["points"]:
                continue
            md.append(
                f"| {md_cell(row)} | {label} | {c['points']} | {c['kappa'].text(2)} | "
                f"{c['beta'].text(2)} | {c['full'].text(2)} | {c['cookbook']} |"
            )
    defined = [c for by in cells.values() for k, c in by.items() if k != "undefined"]
    n = sum(c["points"] for c in defined)
    book = sum(c["cookbook"] for c in defined)
    if n:
        md += ["", f"The cookbook chunk was the most consequential at {book} of {n} points with"
               f" a defined lag ({100 * book / n:.1f}%)."]  # fmt: skip
    return [*md, ""]


# -- Appendix I: the exploratory lag grid ---------------------------------------------------
def lag_grid(
    eps: Sequence[Mapping[str, Any]],
    writers: Mapping[str, Sequence[str]],
    rows: Sequence[str],
    baseline: str,
    budget: int,
    model: str | None = None,
    rooms: Mapping[tuple[str, int], str] | None = None,
) -> list[str]:
    """Success (%) of ``rows`` and of ``baseline`` by F′ at ``budget``, each row's gain over
    the baseline (points, paired over games); with ``rooms`` ((run, game) -> the room of the
    reader's first decision) the same split by whether that room is the kitchen."""
    mine = [e for e in eps if e["budget"] == budget]
    lags = sorted({int(e["lag"]) for e in mine})
    head = "| writer | " + " | ".join(f"F′={f}" for f in lags) + " |"
    md = [f"### Appendix I: validation lag grid at B = {budget}", ""]
    splits: list[tuple[str, Any]] = [("all episodes", None)]
    if rooms is not None:
        splits += [("first decision in the kitchen", True), ("elsewhere", False)]
    for title, kitchen in splits:
        sub = [e for e in mine if _in_split(e, rooms, kitchen)]
        md += [f"Success (%), {title}:", "", head, "|" + "---|" * (1 + len(lags))]
        for w in [baseline, *rows]:
            cells = [paired_bootstrap(group_success(sub, writers[w], f, model)).text(1, 100)
                     for f in lags]  # fmt: skip
            md.append(f"| {md_cell(w)} | " + " | ".join(cells) + " |")
        for w in rows:
            cells = []
            for f in lags:
                a = group_success(sub, writers[w], f, model)
                b = group_success(sub, writers[baseline], f, model)
                cells.append(paired_bootstrap(a, b).text(1, 100))
            md.append(f"| {md_cell(w)} − {md_cell(baseline)} | " + " | ".join(cells) + " |")
        md.append("")
    return md


def _in_split(
    e: Mapping[str, Any], rooms: Mapping[tuple[str, int], str] | None, kitchen: bool | None
) -> bool:
    if kitchen is None:
        return True
    room = (rooms or {}).get((str(e["run"]), int(e["seed"])))
    return room is not None and (room.lower() == "kitchen") == kitchen


def start_rooms(store: Path, episodes: Iterable[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """The room of the reader's first decision of each stored (run, game), re-simulated
    (the env's privileged ``room``; episodes whose env has none are left out)."""
    from statelab.run.replay import replay

    out: dict[tuple[str, int], str] = {}
    for run, seed in episodes:
        first = next(iter(replay(store, run, seed, history="full")), None)
        room = first.privileged.get("room") if first is not None else None
        if isinstance(room, str):
            out[(run, seed)] = room
    return out


# -- Appendix F: the a*-tie check -----------------------------------------------------------
def tie_records(
    store: Path, episodes: Sequence[tuple[str, int]], sample: int, seed: int = 0
) -> list[dict[str, Any]]:
    """Up to ``sample`` steps where the reader's action was not a*, from the stored episodes
    taken in a seeded random order and re-simulated: each step's action, a* and the oracle
    plan's length before and after it. The last step of an episode has no plan after it and
    is not sampled."""
    from statelab.run.replay import replay

    order = list(episodes)
    random.Random(f"seed003-ties:{seed}").shuffle(order)
    out: list[dict[str, Any]] = []
    for run, game in order:
        steps = list(replay(store, run, game, history="full"))
        for s, nxt in pairwise(steps):
            a_star = s.privileged.get("a_star")
            before, after = s.privileged.get("policy"), nxt.privileged.get("policy")
            if a_star is None or s.action == a_star or before is None or after is None:
                continue
            out.append({"run": run, "seed": game, "t": s.t, "action": s.action,
                        "a_star": a_star, "before": len(before), "after": len(after)})  # fmt: skip
            if len(out) >= sample:
                return out
    return out


def tie_check(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Of the steps where the reader's action was not a*: how many shortened the oracle plan
    (a tie with a*), left it as long, or lengthened it."""
    out = {"steps": len(records), "shortened": 0, "same": 0, "longer": 0}
    for r in records:
        d = int(r["after"]) - int(r["before"])
        out["shortened" if d < 0 else "same" if d == 0 else "longer"] += 1
    return out


def tie_md(counts: Mapping[str, int]) -> list[str]:
    """The tie check as one paragraph."""
    n = counts["steps"]
    if not n:
        return ["a*-tie check: no step where the reader's action differed from a*.", ""]
    pct = {k: 100 * counts[k] / n for k in ("shortened", "same", "longer")}
    return [
        "### a*-tie check (Appendix F)",
        "",
        f"Of {n} sampled steps where the reader's action differed from a*, it shortened the"
        f" oracle plan in {counts['shortened']} ({pct['shortened']:.1f}%), left it as long in"
        f" {counts['same']} ({pct['same']:.1f}%) and lengthened it in {counts['longer']}"
        f" ({pct['longer']:.1f}%).",
        "",
    ]


# -- the plan's lag tables (``statelab seed003 tables``) ----------------------------------
def lag_sections(
    plan: Plan,
    read_store: Callable[[str], tuple[Cells, list[dict[str, Any]], int]],
    store_path: Callable[[str], Path],
) -> list[str]:
    """Table 7, the κ contrasts, the lag grid and the tie check, as far as the plan names
    them, each from its store (``read_store``: cells, audit rows, openings; ``store_path``:
    the store of an experiment config or a store path; :mod:`~statelab_seed003.analysis.
    gates` passes its own), once per filler protocol when the store holds several."""
    md: list[str] = []
    for key in ("table7", "kappa_contrasts", "filler_kappa", "lag_grid", "tie_check"):
        cfg = getattr(plan, key)
        if cfg is None:
            continue
        where = cfg.experiment or getattr(plan, cfg.split)
        if where is None:
            raise ConfigError(
                f"{plan.name}: {key} on {cfg.split} needs `{cfg.split}:` or `experiment:`"
            )
        cells, audit, _ = read_store(where)
        md += [f"Store ({key}, {cfg.split}): {store_path(where)}.", ""]
        for protocol, mine, rows in by_protocol(cells, audit):
            got = _section(key, cfg, plan, mine, rows, store_path(where))
            md += tag_headers(got, protocol)
    return md


def _section(
    key: str, cfg: Any, plan: Plan, cells: Cells, audit: list[dict[str, Any]], store: Path
) -> list[str]:
    model = plan.readers[cfg.reader] if getattr(cfg, "reader", None) else None
    if key == "table7":
        return table7(audit, cfg.bins, cfg.budget)
    if key == "kappa_contrasts":
        return kappa_contrasts(audit, plan.writers, cfg.pairs, cfg.budget, cfg.pooled_lags,
                               cells.runs, model)  # fmt: skip
    if key == "filler_kappa":
        return filler_kappa(audit, plan.writers, cfg.rows, cfg.lags, cfg.budget, cells.runs, model)
    if key == "lag_grid":
        eps = [e for e in cells.eps if model is None or e["model"] == model]
        named = {h for w in [cfg.baseline, *cfg.rows] for h in plan.writers[w]}
        mine = sorted({(e["run"], e["seed"]) for e in eps if e["history"] in named
                       and e["budget"] == cfg.budget})  # fmt: skip
        rooms = start_rooms(store, mine) if cfg.by_start_room else None
        return lag_grid(eps, plan.writers, cfg.rows, cfg.baseline, cfg.budget, model, rooms)
    pool = sorted({(e["run"], e["seed"]) for e in cells.eps if e["form"] != "expert"
                   and (model is None or e["model"] == model)})  # fmt: skip
    return tie_md(tie_check(tie_records(store, pool, cfg.sample, cfg.seed)))


__all__ = [
    "bin_labels",
    "lag_bin",
    "lag_grid",
    "lag_sections",
    "start_rooms",
    "table7",
    "table7_cells",
    "tie_check",
    "tie_md",
    "tie_records",
]
