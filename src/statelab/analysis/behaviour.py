"""Behaviour columns: what the agent did, beside what it scored (issue 22).

A score alone cannot tell a memory effect from a collapsed policy: a run that plays one
illegal move thirty times scores what Hanoi reads at its last step. Each report therefore
shows, per run, figures computed per episode from the stored steps and averaged exactly like
the scores (over a seed's scored episodes, then over seeds; see :mod:`statelab.analysis._seeds`):

- ``invalid_rate``: share of the episode's env steps whose action the env refused;
- ``distinct_actions``: distinct action strings the episode played;
- ``one_action``: 1 when the episode played a single distinct action (its mean is the share
  of such episodes: the collapse warning reads it);
- ``longest_repeat``: the longest run of one action repeated on consecutive steps;
- ``wm_queries`` / ``rejections``: world-model questions asked and proposals rejected by a
  validating component, per episode (shown when some run has any);
- ``same_memory``: share of memory writes (every step after the first) that left the memory
  state as it was (NaN for a run whose memory is always empty: it has none);
- ``looped`` (issue 33): 1 when the episode was not won and more than :data:`LOOP_SHARE` of
  its steps left the env in a state it had already been in (the env's own state
  fingerprints, :meth:`statelab.core.Env.fingerprint`: a loop, legal moves or not); NaN in a
  store written before the fingerprints;
- ``constant_memory``: 1 when the episode's memory says one thing over the whole episode,
  digits aside (at most :data:`CONSTANT_MEMORY` of its states, and at least one, hold
  distinct :func:`~statelab.run._store_behaviour.memory_content`: a step counter is no
  content); NaN for an episode of one step or without a memory.

``looped`` and ``constant_memory`` feed the warnings (:mod:`statelab.analysis.caveats`) and
are not table columns.

The counts come from :meth:`statelab.run.store.Store.behaviour_frames` (aggregated in SQL);
:func:`episode_behaviour` turns them into the per-episode figures and :func:`with_behaviour`
joins them to the episodes frame that :func:`statelab.analysis.summarise` reads.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the behaviour figures, in display order (each averaged like the scores)
BEHAVIOUR_FIGURES: tuple[str, ...] = (
    "invalid_rate",
    "distinct_actions",
    "one_action",
    "longest_repeat",
    "wm_queries",
    "rejections",
    "same_memory",
    "looped",
    "constant_memory",
)
#: the figures the warnings read and the table does not show
HIDDEN_FIGURES = ("one_action", "looped", "constant_memory")
#: an episode looped when more than this share of its steps returned to a state it had been in
LOOP_SHARE = 0.5
#: an episode's memory is constant at or below this share of distinct contents per state
CONSTANT_MEMORY = 0.1
#: what each figure is, for report.json's units and the table's legend
BEHAVIOUR_UNITS: dict[str, str] = {
    "invalid_rate": "share of env steps whose action the env refused (per episode, averaged)",
    "distinct_actions": "distinct actions played per episode (averaged)",
    "one_action": "share of episodes that played one distinct action",
    "longest_repeat": "longest run of one action on consecutive steps, per episode (averaged)",
    "wm_queries": "world-model questions asked per episode (averaged)",
    "rejections": "proposed actions rejected before the env ran them, per episode (averaged)",
    "same_memory": "share of memory writes that left the memory state unchanged (averaged)",
    "looped": "share of episodes, not won, where most steps returned to a state already visited",
    "constant_memory": "share of episodes whose memory says one thing throughout, digits aside",
}
KEY = ("run", "seed", "rollout")


def _ratio(num: pd.Series, den: pd.Series) -> np.ndarray:
    n = pd.to_numeric(num, errors="coerce").to_numpy(dtype=np.float64)
    d = pd.to_numeric(den, errors="coerce").to_numpy(dtype=np.float64)
    out = np.full(n.shape, np.nan)
    np.divide(n, d, out=out, where=np.isfinite(d) & (d > 0))
    return out


def episode_behaviour(counts: pd.DataFrame) -> pd.DataFrame:
    """Per-episode behaviour figures from the per-episode counts of
    :meth:`~statelab.run.store.Store.behaviour_frames`: ``run, seed, rollout`` and
    :data:`BEHAVIOUR_FIGURES`."""
    out = counts[list(KEY)].copy()
    num = {c: pd.to_numeric(counts[c], errors="coerce") for c in counts.columns if c not in KEY}
    out["invalid_rate"] = _ratio(num["invalid"], num["n_steps"])
    out["distinct_actions"] = num["distinct_actions"].astype(np.float64)
    out["one_action"] = (num["distinct_actions"] == 1).astype(np.float64)
    out["longest_repeat"] = num["longest_repeat"].astype(np.float64)
    out["wm_queries"] = num["wm_queries"].astype(np.float64)
    out["rejections"] = num["rejections"].astype(np.float64)
    same = _ratio(num["memory_same"], num["memory_writes"])
    has = num["has_memory"].to_numpy() > 0
    out["same_memory"] = np.where(has, same, np.nan)
    back = _ratio(num["revisits"], num["n_steps"])
    looped = ((back > LOOP_SHARE) & (num["won"].to_numpy() == 0)).astype(np.float64)
    out["looped"] = np.where(num["fingerprinted"].to_numpy() > 0, looped, np.nan)
    steps = num["n_steps"].to_numpy(dtype=np.float64)
    few = num["memory_kinds"].to_numpy() <= np.maximum(1.0, CONSTANT_MEMORY * steps)
    out["constant_memory"] = np.where(has & (steps >= 2), few.astype(np.float64), np.nan)
    return out


def with_behaviour(episodes: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    """``episodes`` (keyed by ``run, seed, rollout``) with the behaviour figures joined;
    an episode without stored steps gets NaN."""
    figures = episode_behaviour(counts)
    base = episodes.drop(columns=[c for c in BEHAVIOUR_FIGURES if c in episodes.columns])
    return base.merge(figures, on=list(KEY), how="left", validate="one_to_one")


def shown_behaviour(summary: pd.DataFrame) -> list[str]:
    """The behaviour columns a table shows: invalid rate, distinct actions and longest
    repeat when some run has them (a store's steps); queries and rejections when some run
    has any; the same-memory share when some run has a memory."""
    shown = []
    for name in BEHAVIOUR_FIGURES:
        if name in HIDDEN_FIGURES or name not in summary.columns:
            continue
        values = pd.to_numeric(summary[name], errors="coerce")
        if name in ("wm_queries", "rejections"):
            if bool((values.fillna(0) > 0).any()):
                shown.append(name)
        elif bool(values.notna().any()):
            shown.append(name)
    return shown
