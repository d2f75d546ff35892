"""How an episode's records become the store's rows: every text made storable
(:func:`stored_text`), cells of the text-table layout stored in ``texts`` (:class:`Cells`)."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from statelab.llm import storable
from statelab.run._schema import REF_COLUMNS
from statelab.run._texts import TextRef, TextWriter
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


EPISODE_COLS = [f.name for f in fields(EpisodeRecord) if f.name != "trajectory"]
_STEP_COLS = [f.name for f in fields(StepRecord) if f.name not in ("calls", "queries")]


def cell(v: Any) -> Any:
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
        #: the columns of :attr:`step_sql` after the key, and those of :attr:`call_sql`
        self.step_cols = tuple(cols)
        self.step_sql = (
            f"INSERT INTO steps(run, seed, rollout, {', '.join(cols)}) "
            f"VALUES ({', '.join('?' * (len(_STEP_COLS) + 3))})"
        )
        # by name: a store that gained a column later (decoding, cost) has it at the end
        calls = [f"{c}_ref" if refs and c == "messages" else c for c in _CALL_COLS]
        self.call_cols = tuple(calls)
        self.call_sql = (
            f"INSERT INTO calls({', '.join(calls)}) VALUES ({', '.join('?' * len(calls))})"
        )

    def step(self, s: StepRecord) -> tuple[Any, ...]:
        cells = [cell(getattr(s, c)) for c in _STEP_COLS]
        if not self.refs and any(isinstance(getattr(s, c), TextRef) for c in _STEP_REFS):
            raise ValueError("a step whose texts are another store's keys (TextRef)")
        if self.refs:
            for j, c in enumerate(_STEP_COLS):
                if c in _STEP_REFS:
                    cells[j] = self._ref(getattr(s, c), c)
        return (*self.key, *cells)

    def _ref(self, text: str, slot: Any) -> str:
        """The key of ``text`` (a :class:`TextRef` already is one), stored when new."""
        if isinstance(text, TextRef):
            return str(text)
        return self.texts.put(cell(text), slot)

    def spill(self, s: StepRecord) -> tuple[dict[str, TextRef], list[TextRef]]:
        """Put the step's texts (views, memories, messages) into ``texts`` now: their keys,
        by step column and by call, for the record to hold in their place once the texts
        are committed (:meth:`refer`). The text-table layout only (the inline layout keeps
        texts in the rows)."""
        assert self.refs, "an inline store keeps its texts in the rows"
        cols = {c: TextRef(self._ref(getattr(s, c), c)) for c in _STEP_REFS}
        return cols, [TextRef(self.messages(call)) for call in s.calls]

    def forget(self) -> None:
        """Forget the texts put since the last commit (their transaction rolled back):
        no later text is stored as the rest of one that is not there."""
        self.texts = TextWriter(self.texts.db)

    @staticmethod
    def refer(s: StepRecord, keys: tuple[dict[str, TextRef], list[TextRef]]) -> None:
        """Leave the keys of :meth:`spill` in the record in place of its texts."""
        cols, calls = keys
        for c, key in cols.items():
            setattr(s, c, key)
        for call, key in zip(s.calls, calls, strict=True):
            call["messages"] = key

    def messages(self, c: dict[str, Any]) -> str:
        if isinstance(c["messages"], TextRef):
            return str(c["messages"])
        each = _message_texts(c["messages"])
        if not self.refs:
            return "[" + ", ".join(each) + "]"
        return ",".join(self.texts.put(m, ("msg", c["kind"], j)) for j, m in enumerate(each))

    def calls(self, s: StepRecord) -> list[tuple[Any, ...]]:
        return [
            (*self.key, s.t, i, cell(c["kind"]), self.messages(c), cell(c["text"]),
             c["input_tokens"], c["output_tokens"], c["latency"], int(c["cached"]),
             c.get("decoding") or "free", c.get("cost"), c.get("original_latency"))
            for i, c in enumerate(s.calls)
        ]  # fmt: skip

    def queries(self, s: StepRecord) -> list[tuple[Any, ...]]:
        return [
            (*self.key, s.t, i, cell(q.get("query")), cell(q.get("answer")))
            for i, q in enumerate(s.queries)
        ]
