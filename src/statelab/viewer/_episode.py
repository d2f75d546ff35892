"""One episode as the page loads it: its steps, every call's messages, queries, rejections,
and its loops (a step that repeats the action before it, or returns to an earlier state).

Rows come from :meth:`statelab.run.store.Store.episode_rows` (one episode at a time, so the
memory of ``statelab view`` does not grow with the store); every text goes into the
episode's :class:`~statelab.viewer._text.TextTable` and a step refers to it by id.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from statelab.run.store import Store
from statelab.viewer._text import TextTable, clean, clean_data

#: the text columns of a step, in the order the page shows them
STEP_TEXTS = ("action", "reply", "view", "grounding", "observation", "memory", "gold")
#: a line of a reply or memory longer than this is indexed for search by its start only
MAX_INDEXED_LINE = 400


def _content(content: Any) -> str:
    """A message's content as text (a non-text part, an image, is named, not embedded)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
            else:
                kind = p.get("type", "part") if isinstance(p, dict) else type(p).__name__
                parts.append(f"[{kind} not shown]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, default=str)


def _calls(rows: list[dict[str, Any]], texts: TextTable) -> list[dict[str, Any]]:
    out = []
    nth: dict[str, int] = defaultdict(int)
    for c in rows:
        kind = str(c.get("kind") or "")
        k = nth[kind]
        nth[kind] += 1
        msgs = []
        for j, m in enumerate(c["messages"]):
            role = m.get("role", "") if isinstance(m, dict) else ""
            body = _content(m.get("content") if isinstance(m, dict) else m)
            msgs.append([clean(role), texts.add(body, f"m/{kind}/{k}/{j}")])
        out.append(
            {
                "kind": clean(kind),
                "text": texts.add(c.get("text"), f"c/{kind}/{k}"),
                "i": int(c.get("i") or 0),
                "in": c.get("input_tokens") or 0,
                "out": c.get("output_tokens") or 0,
                "cached": bool(c.get("cached")),
                # model seconds (0 for a cache hit), how the reply was decoded ("" where the
                # store predates the column), dollars (None: no price known)
                "latency": _number(c.get("latency")) or 0.0,
                "decoding": clean(c.get("decoding") or ""),
                "cost": _number(c.get("cost")),
                "messages": msgs,
            }
        )
    return out


def _number(x: Any) -> float | None:
    """``x`` as a float, ``None`` for a missing (NULL, NaN) value."""
    if x is None:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return None if f != f else f


def loops(
    steps: list[dict[str, Any]], start_state: str | None = None
) -> list[tuple[int, int | None, str]]:
    """For each stored step: how many steps in a row up to it played its action (1: not a
    repeat), the step whose state it returns to (``0``: the start; ``None``: a new one), and
    what that return compares (``"state"``: the env's state fingerprints, where the store
    has them; else ``"observation"``: the observation after the step, the same text as
    after an earlier step). The latest earlier match is named (a loop's length is
    ``t - back``); a step that changes nothing returns to the step before it."""
    by_state = any(s.get("env_state") for s in steps)
    basis = "state" if by_state else "observation"
    seen: dict[str, int] = {}
    if by_state and start_state:
        seen[str(start_state)] = 0
    out: list[tuple[int, int | None, str]] = []
    run, prev = 0, None
    for s in steps:
        t, action = int(s["t"]), s.get("action")
        run = run + 1 if out and action == prev else 1
        prev = action
        key = s.get("env_state") if by_state else s.get("observation")
        back = None
        if key:
            back = seen.get(str(key))
            seen[str(key)] = t
        out.append((run, back, basis))
    return out


def _meta(raw: Any) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        got = json.loads(raw)
    except (TypeError, ValueError):
        return {"meta": clean(raw)}
    return clean_data(got) if isinstance(got, dict) else {"meta": clean_data(got)}


def episode_data(
    store: Store, run: str, seed: int, rollout: int, start_state: str | None = None
) -> tuple[dict[str, Any], TextTable]:
    """The page's data for one episode, and its text table. ``start_state`` is the env's
    state fingerprint at reset (the episode's ``start_state``): a step that returns to it
    is marked as a return to the start."""
    key = (run, seed, rollout)
    steps = store.episode_rows("steps", *key)
    calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for c in store.episode_rows("calls", *key):
        calls[int(c["t"])].append(c)
    queries: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for q in store.episode_rows("queries", *key):
        queries[int(q["t"])].append(q)
    texts = TextTable()
    out = []
    for s, (repeat, back, basis) in zip(steps, loops(steps, start_state), strict=True):
        t = int(s["t"])
        row: dict[str, Any] = {f: texts.add(s.get(f), f) for f in STEP_TEXTS}
        row.update(
            t=t,
            valid=bool(s["valid"]),
            parsed=bool(s["parsed"]),
            reward=float(s["reward"] or 0.0),
            tokens=[int(s.get(c) or 0) for c in ("agent_in", "agent_out", "aux_in", "aux_out")],
            agent_calls=int(s.get("agent_calls") or 0),
            latency=_number(s.get("latency")) or 0.0,
            repeat=repeat,
            back=back,
            back_by=basis,
            meta=_meta(s.get("meta")),
            queries=[[texts.add(q["query"], "q"), texts.add(q["answer"], "a")] for q in queries[t]],
            calls=_calls(calls[t], texts),
        )
        out.append(row)
    return {"key": episode_key(*key), "texts": texts.items, "steps": out}, texts


def episode_key(run: str, seed: int, rollout: int) -> str:
    """The key a data file names its episode by (the page checks it)."""
    return f"{run}|{seed}|{rollout}"


class TextIndex:
    """Every distinct line of the replies and memories, and the episodes it occurs in: the
    page's text filter loads it (``text.js``) only when it is used."""

    FIELDS = ("reply", "memory")

    def __init__(self) -> None:
        self._ids: dict[str, dict[str, int]] = {f: {} for f in self.FIELDS}
        self._eps: dict[str, list[list[int]]] = {f: [] for f in self.FIELDS}

    def add(self, episode: int, data: dict[str, Any], texts: TextTable) -> None:
        """Index the lines of episode number ``episode`` (its data and text table)."""
        for f in self.FIELDS:
            ids, eps = self._ids[f], self._eps[f]
            raw: set[str] = set()
            for s in {s[f] for s in data["steps"]}:  # each distinct text once
                raw.update(texts.text(s).splitlines())
            lines = {line.strip()[:MAX_INDEXED_LINE] for line in raw}
            lines.discard("")
            for line in sorted(lines):
                i = ids.setdefault(line, len(ids))
                if i == len(eps):
                    eps.append([])
                eps[i].append(episode)

    def data(self) -> dict[str, Any]:
        """``{field: {"lines": [...], "eps": [[episode numbers]...]}}``."""
        return {f: {"lines": list(self._ids[f]), "eps": self._eps[f]} for f in self.FIELDS}
