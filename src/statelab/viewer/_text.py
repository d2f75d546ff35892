"""Text as the viewer ships it: neutralised, and stored once per episode.

* :func:`clean`: a stored text made safe to show as text: lone surrogates and NUL become
  U+FFFD (:func:`statelab.llm.storable`) and every bidirectional control (U+202E and its
  kin, which make a line read other than it is) is replaced by its visible name,
  ``[U+202E]``. The page never parses text as HTML (no ``innerHTML``); this is the part
  that escaping alone does not cover.
* :class:`TextTable`: the texts of one episode, each distinct text once; a text that shares
  most of itself with the previous text of its slot (a growing history, the same prompt
  with one more step) is kept as ``[ref, prefix, middle, suffix]``: the first ``prefix``
  and last ``suffix`` UTF-16 units of text ``ref`` around ``middle``. A 30-step
  full-history episode so costs its steps, not their square. The page's ``decodeTexts``
  undoes it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from statelab.llm import storable

#: the bidirectional formatting characters (embeddings, overrides, isolates, marks)
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: a shared prefix and suffix shorter than this is not worth a reference
MIN_SHARED = 48


def clean(text: object) -> str:
    """``text`` as a string safe to show: storable, bidi controls shown by name."""
    s = "" if text is None else str(text)
    if s.isascii() and "\x00" not in s:  # the common case, checked at C speed
        return s
    return BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", storable(s))


def clean_data(value: Any) -> Any:
    """A JSON value with every string in it (keys too) passed through :func:`clean`."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(k): clean_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_data(v) for v in value]
    return value


def utf16_len(s: str) -> int:
    """Length in UTF-16 code units (what a JavaScript string's indexes count)."""
    return len(s) if s.isascii() else len(s.encode("utf-16-le")) // 2


def _shared_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (bisected: each probe
    compares only the part not yet known to match)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _shared_suffix(a: str, b: str, most: int) -> int:
    """The length of the longest common suffix of ``a`` and ``b``, at most ``most``."""
    la, lb = len(a), len(b)
    lo, hi = 0, min(most, la, lb)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class TextTable:
    """The distinct texts of one episode, in order; :meth:`add` gives a text's id."""

    def __init__(self) -> None:
        self.items: list[str | list[Any]] = []
        self._texts: list[str] = []
        self._ids: dict[str, int] = {}
        self._last: dict[str, int] = {}

    def add(self, text: object, slot: str) -> int:
        """The id of ``text`` (cleaned), coded against the last text of ``slot``."""
        s = clean(text)
        got = self._ids.get(s)
        if got is None:
            got = len(self._texts)
            self.items.append(self._code(s, self._last.get(slot)))
            self._texts.append(s)
            self._ids[s] = got
        self._last[slot] = got
        return got

    def _code(self, s: str, ref: int | None) -> str | list[Any]:
        if ref is None or len(s) < MIN_SHARED:
            return s
        prev = self._texts[ref]
        p = _shared_prefix(s, prev)
        q = _shared_suffix(s, prev, min(len(s), len(prev)) - p)
        if p + q < MIN_SHARED:
            return s
        return [ref, utf16_len(s[:p]), s[p : len(s) - q], utf16_len(s[len(s) - q :])]

    def text(self, i: int) -> str:
        """The text of id ``i``."""
        return self._texts[i]


def js_call(function: str, *args: Any) -> str:
    """``window.<function>(<args as JSON>);``: a data file the page loads with a script tag
    (``fetch`` of ``file://`` is blocked). ASCII only; ``<`` and U+2028 never appear raw."""
    body = ",".join(json.dumps(a, ensure_ascii=True, separators=(",", ":")) for a in args)
    return "window." + function + "(" + body.replace("<", "\\u003c") + ");\n"


def json_for_html(value: Any) -> str:
    """JSON that can sit inside ``<script type="application/json">``: no ``<``, ``>``, ``&``."""
    s = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
