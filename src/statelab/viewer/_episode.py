"""One episode as the page loads it: its steps, every call's messages, queries, rejections.

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
                "in": c.get("input_tokens") or 0,
                "out": c.get("output_tokens") or 0,
                "cached": bool(c.get("cached")),
                "messages": msgs,
            }
        )
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
    store: Store, run: str, seed: int, rollout: int
) -> tuple[dict[str, Any], TextTable]:
    """The page's data for one episode, and its text table."""
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
    for s in steps:
        t = int(s["t"])
        row: dict[str, Any] = {f: texts.add(s.get(f), f) for f in STEP_TEXTS}
        row.update(
            t=t,
            valid=bool(s["valid"]),
            parsed=bool(s["parsed"]),
            reward=float(s["reward"] or 0.0),
            tokens=[int(s.get(c) or 0) for c in ("agent_in", "agent_out", "aux_in", "aux_out")],
            agent_calls=int(s.get("agent_calls") or 0),
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
