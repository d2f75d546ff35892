"""State accuracy for every written state (issue 26, after seed 002's Fig. 6 / Appendix F).

A run writes a state when its agent writes state fields in its replies (StateAct: the
``tracks-state`` tag; scored by :func:`statelab.analysis.agentmetrics.state_accuracy`, the
seed's own rule), or when a model writes its memory (a history tagged ``needs-model`` and not
``reads-privileged``: ``summary``, ``bounded:*``) or its grounding (``vot``). Every written
state is scored against the env's privileged tracked state (:func:`statelab.core.tracked_of`,
stored per step as ``gold``) on envs that track one; the state shown at step t was written
after step t−1, so it is compared with the gold stored after step t−1.

A memory or a map is free text, so its fields are read by mention (our reading; the seed
scores only StateAct's labelled fields): the episode's *known* places are every gold location
and visited place, its known items every item it held. **location** is right iff the known
place the text names last is the gold location; **inventory** iff the known items it names are
exactly the gold inventory; **visited** iff the known places it names, less the current
location, are exactly the gold visited places less it. Fields the env never fills (no location
at all, as Textcraft's) are not scored. Per episode each field's accuracy is its mean over
scored steps, ``accuracy`` the mean over every scored (step, field); per run, over episodes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from statelab.analysis.agentmetrics import STATE_FIELDS, norm_location, norm_set, state_accuracy
from statelab.run.store import Store

FIELDS = tuple(STATE_FIELDS)


def _norm_text(text: str) -> str:
    return " " + " ".join(re.sub(r"[^a-z0-9 ]+", " ", str(text).lower()).split()) + " "


def _last_mention(text: str, names: Iterable[str]) -> str | None:
    """The name of ``names`` whose last mention in ``text`` ends last (None: none)."""
    best, at = None, -1
    for n in names:
        i = text.rfind(f" {n} ")
        if i >= 0 and i + len(n) > at:
            best, at = n, i + len(n)
    return best


def _mentioned(text: str, names: Iterable[str]) -> frozenset[str]:
    return frozenset(n for n in names if f" {n} " in text)


def score_text(text: str, gold: dict[str, Any], places: set[str], items: set[str]) -> dict:
    """1.0/0.0 for each scorable field of one free-text state against one gold (see the
    module docstring)."""
    t = _norm_text(text)
    loc = norm_location(gold.get("location"))
    out: dict[str, float] = {}
    if places:
        out["location"] = float(_last_mention(t, places) == loc)
        drop = {loc} if loc else set()
        want = norm_set(gold.get("visited") or []) - drop
        out["visited"] = float(_mentioned(t, places) - drop == want)
    out["inventory"] = float(_mentioned(t, items) == norm_set(gold.get("inventory") or []))
    return out


def text_accuracy(steps: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per episode of ``steps`` (``run, seed, t, gold`` and ``column``): scored steps, each
    field's accuracy and ``accuracy`` (NaN: nothing scored)."""
    rows = []
    for (run, seed), grp in steps.sort_values("t").groupby(["run", "seed"], sort=False):
        golds = [json.loads(g) if isinstance(g, str) else None for g in grp["gold"]]
        texts = list(grp[column].fillna(""))
        known = [g for g in golds if g]
        places = {p for g in known for p in [norm_location(g.get("location"))] if p}
        places |= {p for g in known for p in norm_set(g.get("visited") or [])}
        items = {i for g in known for i in norm_set(g.get("inventory") or [])}
        cells: dict[str, list[float]] = {f: [] for f in FIELDS}
        scored = 0
        for i in range(1, len(texts)):
            gold = golds[i - 1]
            if gold is None:
                continue
            scored += 1
            for f, v in score_text(texts[i], gold, places, items).items():
                cells[f].append(v)
        means = [float(np.mean(cells[f])) if cells[f] else math.nan for f in FIELDS]
        every = [v for f in FIELDS for v in cells[f]]
        rows.append((run, int(seed), scored, *means, float(np.mean(every)) if every else math.nan))
    return pd.DataFrame(rows, columns=["run", "seed", "scored", *FIELDS, "accuracy"])


def _writes(components: dict[str, Any], axis: str) -> bool:
    tags = set((components.get(axis) or {}).get("tags") or ())
    return "needs-model" in tags and "reads-privileged" not in tags


def written_state_accuracy(st: Store) -> pd.DataFrame:
    """One row per (run, source) that writes a state on an env that tracks one: the source
    (``reply``, ``memory``, ``grounding``), episodes, scored steps and the mean accuracies.
    The steps are read a few episodes at a time (:meth:`Store.episode_frames`), only those
    with a gold state and only the columns a source reads: never the whole table."""
    runs = st.runs_frame()
    wanted: dict[str, tuple[Any, list[tuple[str, str | None]]]] = {}
    for r in runs.itertuples(index=False):
        sources: list[tuple[str, str | None]] = (
            [("reply", None)] if "tracks-state" in set(r.tags) else []
        )
        sources += [(c, c) for c, axis in (("memory", "history"), ("grounding", "grounding"))
                    if _writes(r.components, axis)]  # fmt: skip
        if sources:
            wanted[r.run] = (r, sources)
    if not wanted:
        return pd.DataFrame([])
    read = {column or "reply" for _, sources in wanted.values() for _, column in sources}
    cols = ["run", "seed", "t", *sorted(read), "gold"]
    parts: dict[tuple[str, str], list[pd.DataFrame]] = {}
    where = {"rollout": 0, "run": tuple(wanted)}
    for frame in st.episode_frames("steps", cols, where, present=("gold",)):
        for run, mine in frame.groupby("run", sort=False):
            r, sources = wanted[str(run)]
            for source, column in sources:
                if column is None:
                    seeds = sorted(mine["seed"].unique())
                    episodes = pd.DataFrame({"run": r.run, "seed": seeds, "agent": r.agent})
                    got = state_accuracy(episodes, mine)
                else:
                    got = text_accuracy(mine, column)
                parts.setdefault((str(run), source), []).append(got)
    out = []
    for run, (r, sources) in wanted.items():
        for source, _ in sources:
            if (run, source) not in parts:
                continue
            per = pd.concat(parts[run, source], ignore_index=True)
            per = per[per["scored"] > 0]
            if per.empty:
                continue
            row = {"label": r.label, "env": r.env, "source": source, "episodes": len(per),
                   "scored": int(per["scored"].sum())}  # fmt: skip
            row.update({c: float(per[c].mean()) for c in (*FIELDS, "accuracy")})
            out.append(row)
    return pd.DataFrame(out)
