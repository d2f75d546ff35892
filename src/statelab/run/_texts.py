"""The store's ``texts`` table: each distinct text once, keyed by its hash.

A text that begins as the text written before it in the same *slot* of an episode (a step's
view after the previous step's view: a full history only grows) is stored as a reference to
that text, the length of the prefix they share, and the rest; a body worth compressing is
zlib-compressed. So an episode's views, memories and prompts cost bytes in proportion to
what each step adds, not to all it repeats. A chain of such references is at most
:data:`MAX_DEPTH` deep (then a text is stored whole), so one text reads in a few rows.

A running episode hands each text to the store as it is made (:meth:`statelab.run.store.Store.
text_sink`): its step records then hold :class:`TextRef` keys, not texts, so an episode in flight
holds memory for its current texts only, whatever its length. Those texts are committed before
the episode's rows; a killed episode leaves texts no row refers to, which are harmless (a text
is stored once under its key, and a rerun of the episode finds them and stores nothing again).

The texts are content-addressed, so every text read is checked against its key: a flipped
byte (which SQLite's ``quick_check`` does not see inside a blob) is refused in one line
(:class:`DamagedText`), never shown or replayed as if it were what was written.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from collections import OrderedDict
from typing import Any

#: references below one text at most (a deeper text is stored whole)
MAX_DEPTH = 64
#: the shortest shared prefix worth a reference (characters)
MIN_SHARED = 64
#: bodies shorter than this are kept uncompressed (bytes)
MIN_COMPRESS = 200
#: texts a reader keeps in memory (the last ones read: a base is read just before)
MEMO = 2048


class TextRef(str):
    """The key of a text already in the store's ``texts`` table, standing for the text in a
    record (a step's ``view`` or ``memory``, a call's ``messages``: the keys of its messages,
    comma-separated); the episode's commit writes it as the key it is."""

    __slots__ = ()


class DamagedText(sqlite3.DatabaseError):
    """A text of the store does not match its key (or cannot be decoded): the file is damaged."""


def text_hash(text: str) -> str:
    """The key of ``text`` in the ``texts`` table: 32 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def shared_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    lo, step = 0, 4096
    while step:
        while lo + step <= n and a[lo : lo + step] == b[lo : lo + step]:
            lo += step
        step //= 8
    while lo < n and a[lo] == b[lo]:
        lo += 1
    return lo


class TextWriter:
    """Puts texts into ``texts`` during one episode's transaction; remembers, per slot, the
    last text put (the base the next one may extend)."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self._last: dict[Any, tuple[str, str, int]] = {}  # slot -> (hash, text, depth)

    def put(self, text: str, slot: Any) -> str:
        """The hash of ``text``, stored when new (as the rest of the slot's last text when
        they share a prefix of at least :data:`MIN_SHARED` characters)."""
        h = text_hash(text)
        row = self.db.execute("SELECT depth FROM texts WHERE h=?", (h,)).fetchone()
        if row is not None:
            self._last[slot] = (h, text, int(row[0]))
            return h
        base, keep, depth = None, 0, 0
        last = self._last.get(slot)
        if last is not None and last[2] < MAX_DEPTH:
            shared = shared_prefix(last[1], text)
            if shared >= MIN_SHARED:
                base, keep, depth = last[0], shared, last[2] + 1
        raw = text[keep:].encode("utf-8", "surrogatepass")
        z = 0
        if len(raw) >= MIN_COMPRESS:
            packed = zlib.compress(raw, 6)
            if len(packed) < len(raw):
                raw, z = packed, 1
        self.db.execute(
            "INSERT INTO texts(h, base, keep, depth, z, body) VALUES (?,?,?,?,?,?)",
            (h, base, keep, depth, z, raw),
        )
        self._last[slot] = (h, text, depth)
        return h


class TextReader:
    """Reads texts back by hash (the last :data:`MEMO` read are kept in memory)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._memo: OrderedDict[str, str] = OrderedDict()

    def get(self, h: str | None) -> str | None:
        """The text stored under ``h`` (None for None)."""
        if h is None:
            return None
        hit = self._memo.get(h)
        if hit is not None:
            self._memo.move_to_end(h)
            return hit
        chain: list[tuple[str, int, int, bytes]] = []
        key: str | None = h
        text = ""
        while key is not None:
            known = self._memo.get(key)
            if known is not None:
                text = known
                break
            row = self.db.execute(
                "SELECT base, keep, z, body FROM texts WHERE h=?", (key,)
            ).fetchone()
            if row is None:
                raise DamagedText(f"the store is damaged: it has no text {key}; restore a copy")
            base, keep, z, body = row
            chain.append((key, int(keep), int(z), bytes(body)))
            key = base
        for k, keep, z, body in reversed(chain):
            try:
                rest = (zlib.decompress(body) if z else body).decode("utf-8", "surrogatepass")
            except (zlib.error, UnicodeDecodeError) as e:
                raise DamagedText(
                    f"the store is damaged: text {k} cannot be read ({type(e).__name__});"
                    " restore a copy"
                ) from None
            text = text[:keep] + rest
            if text_hash(text) != k:
                raise DamagedText(
                    f"the store is damaged: text {k} does not match its key; restore a copy"
                )
            self._remember(k, text)
        return text

    def _remember(self, h: str, text: str) -> None:
        self._memo[h] = text
        if len(self._memo) > MEMO:
            self._memo.popitem(last=False)
