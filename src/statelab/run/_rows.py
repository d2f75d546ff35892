"""How an episode's records become the store's rows: every text made storable
(:func:`stored_text`), cells of the text-table layout stored in ``texts`` (:class:`Cells`)."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from statelab.llm import storable
from statelab.run._schema import REF_COLUMNS
from statelab.run._texts import TextWriter
from statelab.run.records import EpisodeRecord, StepRecord

#: the most characters one stored text keeps (a reply, observation, view, call text, message)
MAX_TEXT = 64 * 1024
_CUT = "\n[... {n:,} more characters not stored (statelab keeps {limit:,} per text)]"


def stored_text(text: str, limit: int | None = MAX_TEXT) -> str:
    """``text`` as the store keeps it: :func:`statelab.llm.storable` (lone surrogates and NUL
    become U+FFFD), then at most ``limit`` characters, and a marker saying how many were cut."""
    text = storable(text)
    if limit is not None and len(text) > limit:
        return text[:limit] + _CUT.format(n=len(text) - limit, limit=limit)
    return text


_EPISODE_COLS = [f.name for f in fields(EpisodeRecord) if f.name != "trajectory"]
_STEP_COLS = [f.name for f in fields(StepRecord) if f.name not in ("calls", "queries")]


def _cell(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, dict | list):
        return json.dumps(v, sort_keys=True, default=str)  # ASCII: surrogates are escaped
    if isinstance(v, str):
        return stored_text(v)
    return v


def _message_texts(messages: Any) -> list[str]:
    """Each message of a call as JSON, its text kept to :data:`MAX_TEXT` (images kept); the
    call's stored ``messages`` is their JSON list (``"[" + ", ".join(...) + "]"``)."""

    def part(p: Any) -> Any:
        if isinstance(p, dict) and isinstance(p.get("text"), str):
            return {**p, "text": stored_text(p["text"])}
        return p

    def message(m: Any) -> Any:
        if not isinstance(m, dict):
            return m
        c = m.get("content")
        if isinstance(c, str):
            return {**m, "content": stored_text(c)}
        if isinstance(c, list):
            return {**m, "content": [part(p) for p in c]}
        return m

    return [json.dumps(message(m), default=str) for m in messages or []]



_STEP_REFS = REF_COLUMNS["steps"]
#: a ``calls`` row's columns, in the order :meth:`Cells.calls` gives them
_CALL_COLS = (
    "run", "seed", "rollout", "t", "i", "kind", "messages", "text", "input_tokens",
    "output_tokens", "latency", "cached", "decoding", "cost", "original_latency",
)  # fmt: skip


class Cells:
    """One episode's rows as the store's layout keeps them: in the text-table layout, views,
    memories and messages go into ``texts`` (inside the episode's transaction) and the rows
    hold their hashes; in the inline layout, the texts themselves."""

    def __init__(self, db: Any, refs: bool, key: tuple[str, int, int]) -> None:
        self.refs, self.key, self.texts = refs, key, TextWriter(db)
        cols = [f"{c}_ref" if refs and c in _STEP_REFS else c for c in _STEP_COLS]
        self.step_sql = (
            f"INSERT INTO steps(run, seed, rollout, {', '.join(cols)}) "
            f"VALUES ({', '.join('?' * (len(_STEP_COLS) + 3))})"
        )
        # by name: a store that gained a column later (decoding, cost) has it at the end
        calls = [f"{c}_ref" if refs and c == "messages" else c for c in _CALL_COLS]
        self.call_sql = (
            f"INSERT INTO calls({', '.join(calls)}) VALUES ({', '.join('?' * len(calls))})"
        )

    def step(self, s: StepRecord) -> tuple[Any, ...]:
        cells = [_cell(getattr(s, c)) for c in _STEP_COLS]
        if self.refs:
            for j, c in enumerate(_STEP_COLS):
                if c in _STEP_REFS:
                    cells[j] = self.texts.put(cells[j], c)
        return (*self.key, *cells)

    def messages(self, c: dict[str, Any]) -> str:
        each = _message_texts(c["messages"])
        if not self.refs:
            return "[" + ", ".join(each) + "]"
        return ",".join(self.texts.put(m, ("msg", c["kind"], j)) for j, m in enumerate(each))

    def calls(self, s: StepRecord) -> list[tuple[Any, ...]]:
        return [
            (*self.key, s.t, i, _cell(c["kind"]), self.messages(c), _cell(c["text"]),
             c["input_tokens"], c["output_tokens"], c["latency"], int(c["cached"]),
             c.get("decoding") or "free", c.get("cost"), c.get("original_latency"))
            for i, c in enumerate(s.calls)
        ]  # fmt: skip

    def queries(self, s: StepRecord) -> list[tuple[Any, ...]]:
        return [
            (*self.key, s.t, i, _cell(q.get("query")), _cell(q.get("answer")))
            for i, q in enumerate(s.queries)
        ]
