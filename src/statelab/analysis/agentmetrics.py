"""Agent metrics (seed 002's) from the store's tables: success, steps, length buckets, state.

- :func:`success_rate` and :func:`avg_steps_solved` (Table 5: mean steps of the solved
  episodes only, so a variant is not credited for failing fast). ``avg_steps`` counts env
  steps; ``avg_calls`` counts the agent's model calls (``agent_calls``: ReAct's thoughts, a
  stopping output and every call of a step included), which is what the anchor's code calls
  steps (StateAct's ``num_of_steps`` is its model-call counter), so Table 5 compares with
  ``avg_calls``. Every finished episode is one row (rollouts too).
- :func:`length_buckets` (Fig. 5): success by episode length, where an episode's length is the
  number of steps the agent itself took (seed 002, section 6.2: "ReAct has 24/134 examples in
  the bucket 40-50 and solves 0, while StateAct has 6/134 and solves 4": the counts differ by
  agent, so the bucket is the agent's own length, not a gold one). Buckets are right-closed
  (0, 10], (10, 20], ... (top - 10, top]; an episode past ``top`` falls in ``top+``.
- :func:`state_accuracy` (Fig. 6, Appendix F): the state the agent wrote in each reply
  (``current location``, ``current inventory``, ``locations visited``; text or JSON) against
  the gold tracked state. A reply is written after observing the result of the previous step,
  so the reply of step t is compared with the gold stored after step t-1; the first reply has
  no stored gold and is not scored. Location: exact match after normalisation (case,
  punctuation, leading articles; None/nothing/starting location are "no location");
  inventory: as a set; visited: as a set, the current location left out of both sides (the
  seed's agent lists it under current location, a tracker may list it as visited too). A
  field an agent variant should write and did not counts as wrong. Per episode, each field's
  accuracy is its mean over scored steps and ``accuracy`` the mean over every scored (step,
  field); per run, the mean over episodes.

Every function takes DataFrames (``episodes`` as ``Store.episodes_frame()`` gives it, with the
run key in ``run``; ``steps`` with ``run, seed, t, reply, gold``) and returns DataFrames.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from statelab.agents._turn import parse_turn
from statelab.analysis._components import description
from statelab.run.records import FINISHED

STATE_FIELDS = {
    "location": "current location",
    "inventory": "current inventory",
    "visited": "locations visited",
}
_NO_PLACE = {"", "none", "null", "nothing", "empty", "n/a", "unknown", "starting location",
             "middle of room", "middle of the room"}  # fmt: skip
_ARTICLE = re.compile(r"^(a|an|the|some)\s+")


def describe_agent(spelling: Any, stored: Any = None) -> dict[str, Any]:
    """An agent's description (spelling, label, tags): the one stored with its run, else the
    one the component gives when built. Rows are chosen and ordered by these, never by
    parsing spellings."""
    return description("agent", spelling, stored)


def group_keys(by: Sequence[str] | str) -> list[str]:
    return [by] if isinstance(by, str) else list(by)


def _done(episodes: pd.DataFrame) -> pd.DataFrame:
    return episodes[episodes["status"].isin(FINISHED)] if "status" in episodes else episodes


def success_rate(episodes: pd.DataFrame, by: Sequence[str] | str = "run") -> pd.DataFrame:
    """``n`` finished episodes and their ``success`` rate per group."""
    keys = group_keys(by)
    g = _done(episodes).assign(success=lambda d: d["success"].astype(float)).groupby(keys)
    return g.agg(n=("success", "size"), success=("success", "mean")).reset_index()


def avg_steps_solved(episodes: pd.DataFrame, by: Sequence[str] | str = "run") -> pd.DataFrame:
    """``solved`` episodes and their mean ``avg_steps`` (env steps) per group (Table 5), and
    ``avg_calls`` (model calls, the anchor's steps) when the frame has ``agent_calls``."""
    keys = group_keys(by)
    done = _done(episodes)
    solved = done[done["success"].astype(bool)]
    agg: dict[str, tuple[str, str]] = {"solved": ("steps", "size"), "avg_steps": ("steps", "mean")}
    if "agent_calls" in solved:
        solved = solved.assign(agent_calls=pd.to_numeric(solved["agent_calls"], errors="coerce"))
        agg["avg_calls"] = ("agent_calls", "mean")
    out = solved.groupby(keys).agg(**agg)
    base = done[keys].drop_duplicates()
    merged = base.merge(out.reset_index(), on=keys, how="left")
    return merged.fillna({"solved": 0}).astype({"solved": int})


def bucket_of(steps: int, width: int = 10, top: int = 50) -> str:
    """The right-closed length bucket of ``steps`` ("0-10", "10-20", ..., "50+")."""
    if steps > top:
        return f"{top}+"
    hi = max(width, math.ceil(steps / width) * width)
    return f"{hi - width}-{hi}"


def length_buckets(
    episodes: pd.DataFrame, by: Sequence[str] | str = "run", width: int = 10, top: int = 50
) -> pd.DataFrame:
    """Fig. 5: per group and length bucket, ``n`` episodes, ``solved`` and ``success``."""
    keys = group_keys(by)
    done = _done(episodes).assign(
        bucket=lambda d: [bucket_of(int(s), width, top) for s in d["steps"]],
        solved=lambda d: d["success"].astype(int),
    )
    labels = [f"{lo}-{lo + width}" for lo in range(0, top, width)]
    if (done["bucket"] == f"{top}+").any():
        labels.append(f"{top}+")
    rows = []
    for key, grp in done.groupby(keys, sort=False):
        key_t = key if isinstance(key, tuple) else (key,)
        for label in labels:
            sub = grp[grp["bucket"] == label]
            n, solved = len(sub), int(sub["solved"].sum())
            rows.append((*key_t, label, n, solved, solved / n if n else float("nan")))
    return pd.DataFrame(rows, columns=[*keys, "bucket", "n", "solved", "success"])


# -- state-tracking accuracy --------------------------------------------------------------
def _norm(text: Any) -> str:
    s = re.sub(r"[^a-z0-9 ]+", " ", str(text).lower())
    return _ARTICLE.sub("", " ".join(s.split()))


def norm_location(value: Any) -> str | None:
    if value is None:
        return None
    s = _norm(value)
    return None if s in _NO_PLACE else s


def norm_set(value: Any) -> frozenset[str]:
    items = value if isinstance(value, list | tuple | set) else re.split(r",|\band\b", str(value))
    return frozenset(s for s in (_norm(x) for x in items) if s and s not in _NO_PLACE)


def parse_state(reply: str) -> dict[str, Any]:
    """The state fields a reply wrote (text or JSON), normalised; absent keys left out."""
    values = parse_turn(reply or "").values
    out: dict[str, Any] = {}
    for name, key in STATE_FIELDS.items():
        if key in values:
            raw = values[key]
            out[name] = norm_location(raw) if name == "location" else norm_set(raw)
    return out


def score_state(written: dict[str, Any], gold: dict[str, Any], fields: Sequence[str]) -> dict:
    """1.0/0.0 per field of ``fields`` (missing = wrong) for one reply against one gold."""
    loc = norm_location(gold.get("location"))
    drop = {loc} if loc else set()
    want = {
        "location": loc,
        "inventory": norm_set(gold.get("inventory") or []),
        "visited": norm_set(gold.get("visited") or []) - drop,
    }
    out = {}
    for f in fields:
        if f not in written:
            out[f] = 0.0
            continue
        got = written[f] - drop if f == "visited" else written[f]
        out[f] = float(got == want[f])
    return out


def tracks_state(spelling: Any, stored: Any = None) -> bool | None:
    """Whether an agent writes state (its ``tracks-state`` tag); None when it is not a
    seed-002 agent (no ``structured-turns`` tag): then the fields it wrote are scored."""
    if not isinstance(spelling, str):
        return None
    tags = set(describe_agent(spelling, stored)["tags"])
    if "tracks-state" in tags:
        return True
    return False if "structured-turns" in tags else None


def _expected(
    agent: Any, stored: Any, written: list[dict[str, Any]], golds: list[dict]
) -> list[str]:
    tracks = tracks_state(agent, stored)
    if tracks is False:
        return []
    if tracks is None:
        return [f for f in STATE_FIELDS if any(f in w for w in written)]
    places = any(norm_location(g.get("location")) for g in golds)
    return [f for f in STATE_FIELDS if places or f == "inventory"]


def state_accuracy(episodes: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6 per episode: ``scored`` steps, accuracy per field and overall (NaN: none)."""
    agents: dict[tuple[Any, int], Any] = {}
    if "agent" in episodes:
        agents = {
            (r, int(s)): a for r, s, a in episodes[["run", "seed", "agent"]].itertuples(False)
        }
    rows = []
    cols = list(STATE_FIELDS)
    stored = stored_by_agent(episodes)
    for (run, seed), grp in steps.sort_values("t").groupby(["run", "seed"], sort=False):
        golds = [json.loads(g) if isinstance(g, str) else None for g in grp["gold"]]
        replies = list(grp["reply"].fillna(""))
        written = [parse_state(r) for r in replies]
        agent = agents.get((run, int(seed)))
        fields = _expected(agent, stored.get(str(agent)), written, [g for g in golds if g])
        cells: dict[str, list[float]] = {f: [] for f in cols}
        scored = 0
        for i in range(1, len(replies)):
            gold = golds[i - 1]
            if gold is None or not fields:
                continue
            scored += 1
            for f, v in score_state(written[i], gold, fields).items():
                cells[f].append(v)
        means = [float(np.mean(cells[f])) if cells[f] else float("nan") for f in cols]
        every = [v for f in cols for v in cells[f]]
        overall = float(np.mean(every)) if every else float("nan")
        rows.append((run, int(seed), scored, *means, overall))
    return pd.DataFrame(rows, columns=["run", "seed", "scored", *cols, "accuracy"])


def state_accuracy_by(
    episodes: pd.DataFrame, steps: pd.DataFrame, by: Sequence[str] | str = "run"
) -> pd.DataFrame:
    """Per-run (or per-group) state accuracy: the mean over episodes of each field."""
    keys = group_keys(by)
    per_ep = state_accuracy(episodes, steps)
    extra = [k for k in keys if k not in ("run", "seed")]
    merged = per_ep.merge(episodes[["run", "seed", *extra]], on=["run", "seed"], how="left")
    value_cols = [*STATE_FIELDS, "accuracy"]
    return merged.groupby(keys, sort=False)[value_cols].mean().reset_index()


# -- the ablation table ---------------------------------------------------------------------
def stored_by_agent(episodes: pd.DataFrame) -> dict[str, Any]:
    """The stored component descriptions by agent spelling, when the frame carries them."""
    if "components" not in episodes or "agent" not in episodes:
        return {}
    return dict(zip(episodes["agent"].astype(str), episodes["components"], strict=True))


__all__ = [
    "avg_steps_solved",
    "bucket_of",
    "describe_agent",
    "group_keys",
    "length_buckets",
    "parse_state",
    "score_state",
    "state_accuracy",
    "state_accuracy_by",
    "stored_by_agent",
    "success_rate",
    "tracks_state",
]
