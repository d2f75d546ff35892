"""Episodes as whole trajectories, one JSON object per line (``statelab export --format jsonl``).

A line holds one episode: its run (``run``, ``label``, ``axes``, ``tags``), its outcome
(``status``, ``error``, ``score``, ``success``, ``steps``, ``reward``, ``finished`` as ISO
8601 UTC), ``messages`` and ``trajectory``.

``messages`` is the episode as one chat, the shape supervised fine-tuning tools read (a
``messages`` list of ``role``/``content``): the first acting prompt as the agent saw it (its
system and user messages), then each step's reply as an ``assistant`` turn and the
observation that followed as the next ``user`` turn (the last observation is left out: no
reply follows it). Episodes without model calls (the expert, the random floor) start from
the first step's prompt state as a ``user`` turn and take each step's action as the reply.
``trajectory`` keeps every step as stored (the prompt state ``view``, ``reply``, ``action``,
``valid``, ``reward``, ``observation``, ``memory``, token counts), for whoever needs the
exact prompt of a later step (with a full history that prompt repeats the earlier ones, which
``messages`` does not).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.run.store import Store

#: the columns of a step kept in ``trajectory`` (the rest are timings and metadata)
STEP_FIELDS = (
    "t",
    "view",
    "reply",
    "action",
    "parsed",
    "valid",
    "reward",
    "observation",
    "memory",
    "agent_in",
    "agent_out",
    "gold",
)
#: the episode columns copied onto a line
EPISODE_FIELDS = (
    "seed",
    "rollout",
    "env_seed",
    "status",
    "error",
    "score",
    "success",
    "steps",
    "reward",
    "agent_calls",
    "agent_in",
    "agent_out",
    "model_calls",
    "wall_s",
)
_UNIX_EPOCH_JD = 2440587.5


def _plain(value: Any) -> Any:
    """A JSON-ready value: numpy scalars as Python numbers, NaN as null."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _iso(julian: Any) -> str | None:
    if julian is None or pd.isna(julian):
        return None
    t = pd.Timestamp((float(julian) - _UNIX_EPOCH_JD) * 86400.0, unit="s", tz="UTC")
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def chat(
    steps: list[dict[str, Any]], first_prompt: list[dict[str, Any]] | None
) -> list[dict[str, str]]:
    """The episode as one chat (see the module's text)."""
    if first_prompt:
        messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in first_prompt]
    elif steps:
        messages = [{"role": "user", "content": str(steps[0].get("view") or "")}]
    else:
        return []
    model = first_prompt is not None
    for k, step in enumerate(steps):
        said = step.get("reply") if model else step.get("action")
        messages.append({"role": "assistant", "content": str(said if said is not None else "")})
        if k + 1 < len(steps):
            messages.append({"role": "user", "content": str(step.get("observation") or "")})
    return messages


def trajectory(
    episode: dict[str, Any], axes: dict[str, Any], steps: pd.DataFrame, calls: pd.DataFrame
) -> dict[str, Any]:
    """One episode's line: ``episode`` (a row of the store's episodes with ``label`` and
    ``tags``), its run's ``axes``, its ``steps`` and ``calls`` rows."""
    rows = [
        {f: _plain(r.get(f)) for f in STEP_FIELDS if f in steps.columns}
        for r in steps.sort_values("t").to_dict("records")
    ]
    acting = calls[calls["kind"] == "act"].sort_values(["t", "i"]) if len(calls) else calls
    first = json.loads(acting.iloc[0]["messages"]) if len(acting) else None
    tags = episode.get("tags")
    line: dict[str, Any] = {
        "run": episode["run"],
        "label": episode.get("label"),
        "axes": axes,
        "tags": list(json.loads(tags)) if isinstance(tags, str) and tags else list(tags or []),
        **{f: _plain(episode.get(f)) for f in EPISODE_FIELDS},
        "finished": _iso(episode.get("finished")),
        "messages": chat(rows, first),
        "trajectory": rows,
    }
    return line


def write_trajectories(st: Store, path: Path) -> int:
    """Write every episode of ``st`` to ``path``, one JSON line each; returns how many."""
    runs = st.runs_frame()
    axes = {r["run"]: {a: _plain(r[a]) for a in st.axes} for r in runs.to_dict("records")}
    labels = dict(zip(runs["run"], runs["label"], strict=True))
    tags = dict(zip(runs["run"], runs["tags"], strict=True))
    episodes = st.table("episodes", order="rowid")
    n = 0
    with path.open("w", encoding="utf-8") as f:
        for ep in episodes.to_dict("records"):
            key = {"run": ep["run"], "seed": ep["seed"], "rollout": ep["rollout"]}
            ep = {**ep, "label": labels.get(ep["run"]), "tags": tags.get(ep["run"], ())}
            line = trajectory(
                ep,
                axes.get(ep["run"], {}),
                st.table("steps", where=key),
                st.table("calls", where=key),
            )
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
            n += 1
    return n
