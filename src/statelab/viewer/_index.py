"""What the page lists: the chosen episodes, their runs, and one strip cell per step.

The choice is read from the ``episodes`` and ``runs`` tables alone; the strips come from
each episode's data as it is written. A run is chosen by its id, its label, ``axis=value``
or a whole part of its label (``--run summary`` is not ``oracle-summary``); a run or seed
the store does not have is refused with one line listing what it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from statelab.core import ConfigError
from statelab.run.store import Store
from statelab.viewer._text import clean

#: the bits of one strip cell (a step); the page reads them with the same names
INVALID, UNPARSED, REWARD, QUERY, REJECTED, PENALTY = 1, 2, 4, 8, 16, 32
#: the bits of one step's loop mark (the index's second strip, one character per step): the
#: step plays the action of the step before it; it returns to an earlier state (observation)
REPEAT, REVISIT = 1, 2
#: 64 printable characters, one per cell value (a step's bits)
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"


@dataclass
class Chosen:
    """The episodes a page shows, with the counts it states."""

    runs: pd.DataFrame
    episodes: pd.DataFrame
    #: episodes in the store, and those the run and seed filters kept (before ``limit``)
    total: int = 0
    selected: int = 0
    axes: tuple[str, ...] = ()
    name: str = ""
    notes: list[str] = field(default_factory=list)


def _listing(values: Sequence[str], most: int = 30) -> str:
    shown = ", ".join(values[:most])
    return shown + (f" and {len(values) - most} more" if len(values) > most else "")


def _runs_named(runs: pd.DataFrame, wanted: Sequence[str], axes: Sequence[str]) -> list[str]:
    """The run ids ``wanted`` names: each an id, a label, ``axis=value``, or one part of a
    label (``summary`` is the run whose history is ``summary``, never ``oracle-summary``);
    one that names no run is refused, listing the runs."""
    out: list[str] = []
    for w in wanted:
        axis, eq, value = w.partition("=")
        if w in set(runs["run"]):
            hit = [w]
        elif eq and axis in axes:
            hit = list(runs.loc[runs[axis] == value, "run"])
        else:
            hit = [
                r["run"]
                for r in runs.to_dict("records")
                if w == r["label"] or w in (p.strip() for p in str(r["label"]).split("|"))
            ]
        if not hit:
            raise ConfigError(
                f"--run {w!r}: no such run in this experiment; its runs: "
                + _listing([str(label) for label in runs["label"]])
            )
        out += [h for h in hit if h not in out]
    return out


def choose(
    store: Store, runs: Sequence[str] = (), seeds: Sequence[int] = (), limit: int | None = None
) -> Chosen:
    """The episodes of ``runs`` and ``seeds`` (all when empty), the first ``limit`` of them
    in the store's order (run, seed, rollout)."""
    run_df = store.runs_frame()
    eps = store.episodes_frame()
    total = len(eps)
    if runs:
        keep = _runs_named(run_df, runs, store.axes)
        eps = eps[eps["run"].isin(keep)]
    if seeds:
        have = sorted({int(s) for s in eps["seed"]})
        missing = [s for s in seeds if s not in have]
        if missing:
            raise ConfigError(
                f"--seed {missing[0]}: no episode of "
                + ("the chosen runs" if runs else "this experiment")
                + " has this seed; seeds: "
                + _listing([str(s) for s in have])
            )
        eps = eps[eps["seed"].isin(list(seeds))]
    selected = len(eps)
    if limit is not None:
        eps = eps.head(limit)
    exp = store.experiment()
    return Chosen(
        runs=run_df[run_df["run"].isin(set(eps["run"]))],
        episodes=eps.reset_index(drop=True),
        total=total,
        selected=selected,
        axes=store.axes,
        name=exp[0] if exp else store.path.parent.name,
    )


def strip_of(steps: Sequence[dict[str, Any]]) -> str:
    """One character per step (a step of :func:`~statelab.viewer._episode.episode_data`):
    its bits (invalid, unparsed, reward, world-model query, rejected proposal, negative
    reward) in :data:`ALPHABET`."""
    out = []
    for st in steps:
        reward = st["reward"]
        bits = (
            (0 if st["valid"] else INVALID)
            | (0 if st["parsed"] else UNPARSED)
            | (REWARD if reward > 0 else 0)
            | (PENALTY if reward < 0 else 0)
            | (QUERY if st["queries"] else 0)
            | (REJECTED if st["meta"].get("rejected") else 0)
        )
        out.append(ALPHABET[bits])
    return "".join(out)


def marks_of(steps: Sequence[dict[str, Any]]) -> str:
    """One character per step: its loop bits (:data:`REPEAT`: the same action as the step
    before; :data:`REVISIT`: back to an earlier state) in :data:`ALPHABET`."""
    return "".join(
        ALPHABET[(REPEAT if st["repeat"] > 1 else 0) | (REVISIT if st["back"] is not None else 0)]
        for st in steps
    )


def stats_of(steps: Sequence[dict[str, Any]]) -> list[Any]:
    """An episode's figures from its steps' calls, as the index row holds them: tokens in,
    tokens out, dollars (``None`` while no call has a price; a cache hit costs nothing),
    model seconds (a cache hit spent none), decoding (its calls' distinct decodings, the most
    used first, joined by ``+``; ``""`` where the store did not record them), decoding by
    call kind (``"acting: trie 4; summary: free 4"``), calls, calls from the cache, the
    longest run of one action, and the steps that return to an earlier state."""
    calls = [c for st in steps for c in st["calls"]]
    priced = [c for c in calls if c["cost"] is not None]
    cost = round(sum(c["cost"] for c in priced if not c["cached"]), 8) if priced else None
    kinds: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    for c in calls:
        d = c["decoding"]
        by = kinds.setdefault(c["kind"], {})
        by[d] = by.get(d, 0) + 1
        if d:
            totals[d] = totals.get(d, 0) + 1
    order = sorted(totals, key=lambda d: (-totals[d], d))
    detail = "; ".join(
        f"{k}: " + ", ".join(f"{d or 'not recorded'} {n}" for d, n in sorted(by.items()))
        for k, by in kinds.items()
    )
    return [
        sum(int(c["in"]) for c in calls),
        sum(int(c["out"]) for c in calls),
        cost,
        round(sum(float(c["latency"]) for c in calls), 4),
        "+".join(order),
        detail,
        len(calls),
        sum(bool(c["cached"]) for c in calls),
        max((int(st["repeat"]) for st in steps), default=0),
        sum(st["back"] is not None for st in steps),
    ]


def short_labels(labels: Sequence[str]) -> list[str]:
    """Each label (``a | b | c``) cut to what tells it apart: among labels with as many
    parts, the parts that vary; alone, the parts not in every label. A cut that two labels
    share leaves both whole."""
    parts = [[p.strip() for p in str(label).split("|")] for label in labels]
    if len(parts) < 2:
        return [str(label) for label in labels]
    common = set.intersection(*(set(p) for p in parts))
    out = []
    for p in parts:
        peers = [q for q in parts if len(q) == len(p)]
        if len(peers) > 1:
            kept = [x for i, x in enumerate(p) if len({q[i] for q in peers}) > 1]
        else:
            kept = [x for x in p if x not in common]
        out.append(" | ".join(kept or p))
    return [
        short if out.count(short) == 1 else str(label)
        for short, label in zip(out, labels, strict=True)
    ]


def index_data(
    chosen: Chosen,
    strip: dict[tuple[str, int, int], str],
    files: list[str],
    marks: dict[tuple[str, int, int], str] | None = None,
    stats: dict[tuple[str, int, int], list[Any]] | None = None,
) -> dict[str, Any]:
    """The page's index: runs, seeds, and one row per episode (``files[i]`` its data file):
    run, seed, rollout, status (``done``, ``truncated``, ``failed``), score, success, steps,
    strip, data file, error, why it ended (``reason``), its loop marks (:func:`marks_of`)
    and its figures (:func:`stats_of`; ``[]`` when not given)."""
    marks, stats = marks or {}, stats or {}
    runs = chosen.runs
    run_pos = {r: i for i, r in enumerate(runs["run"])}
    seeds = sorted({int(s) for s in chosen.episodes["seed"]})
    rows = []
    for i, ep in enumerate(chosen.episodes.itertuples(index=False)):
        key = (ep.run, int(ep.seed), int(ep.rollout))
        rows.append(
            [
                run_pos[ep.run],
                str(int(ep.seed)),  # a seed may exceed 2**53: JavaScript numbers cannot hold it
                int(ep.rollout),
                clean(ep.status),
                round(float(ep.score or 0.0), 4),
                bool(ep.success),
                int(ep.steps or 0),
                strip.get(key, ""),
                files[i],
                clean(ep.error) if isinstance(ep.error, str) else "",
                # why it ended (a truncated episode's limit; "" in a store without reasons)
                clean(reason) if isinstance(reason := getattr(ep, "reason", None), str) else "",
                marks.get(key, ""),
                stats.get(key, []),
            ]
        )
    return {
        "name": clean(chosen.name),
        "total": chosen.total,
        "selected": chosen.selected,
        "shown": len(rows),
        "axes": [clean(a) for a in chosen.axes],
        "runs": [
            {
                "id": clean(r["run"]),
                "label": clean(r["label"]),
                "short": clean(short),
                "axes": {clean(a): clean(r.get(a)) for a in chosen.axes if r.get(a) is not None},
            }
            for r, short in zip(
                runs.to_dict("records"), short_labels(list(runs["label"])), strict=True
            )
        ],
        "seeds": [str(s) for s in seeds],
        "rollouts": int(chosen.episodes["rollout"].max()) + 1 if rows else 0,
        "episodes": rows,
        "bits": {
            "invalid": INVALID,
            "unparsed": UNPARSED,
            "reward": REWARD,
            "query": QUERY,
            "rejected": REJECTED,
            "penalty": PENALTY,
        },
        "marks": {"repeat": REPEAT, "revisit": REVISIT},
        "alphabet": ALPHABET,
    }
