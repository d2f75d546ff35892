"""The belief-query interface (seed 004, A.5 / C.4): parsing a query and the answers' wording.

Queries come on the action channel, ``Action: query <q>``; :func:`query_text` finds them.
:func:`parse` reads ``<q>`` into a :class:`Query` (kind and argument):

- ``where is <obj>`` (also ``where are``, with an article), ``what is in <x>`` (``what's in``),
  ``searched <x>`` (``have I searched``), ``state`` (``status``);
- BabyAI's ``map``, ``what is at <place>``, ``what have I seen``.

The wording of the answers follows the anchor's (``wm/query.py`` of
skumar-ml/belief-world-models, FACTS.md "Belief world model replies"):

- belief: "<X> is most likely at: r1 (0.42), r2 (0.31), and other receptacles (27%)." --
  locations by decreasing probability until their running total reaches 0.90, the rest
  summarised (:func:`ranking`);
- memory only: "<X> has been observed at: r1, r2." / "<X> has not been observed yet. Search
  receptacles to find it.";
- no probabilities: "<X> may be at: r3, r1, r2." -- the same support, in an order shuffled by
  the episode's seeded generator, no numbers.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: running total at which a where-is answer stops listing locations
MASS_THRESHOLD = 0.90
#: the prefix of a query on the action channel
PREFIX = "query"

_QUERY = re.compile(r"^\s*>?\s*(?:action\s*:\s*)?query\b[\s:]*(.*)$", re.IGNORECASE | re.DOTALL)
_ARTICLE = r"(?:a |an |some |the )?"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("seen", re.compile(r"^what (?:have|did) i (?:seen|see)$")),
    ("where", re.compile(rf"^where (?:is|are)\s+{_ARTICLE}(.+)$")),
    ("at", re.compile(rf"^what(?:'s| is)? at\s+{_ARTICLE}(.+)$")),
    ("in", re.compile(rf"^what(?:'s| is| are)?\s+in\s+{_ARTICLE}(.+)$")),
    ("searched", re.compile(rf"^(?:have i )?searched\s+{_ARTICLE}(.+)$")),
    ("state", re.compile(r"^(?:state|status)$")),
    ("map", re.compile(r"^map$")),
)


@dataclass(frozen=True)
class Query:
    kind: str  # where, in, searched, state, map, at, seen, unknown
    arg: str = ""
    text: str = ""


def query_text(action: str) -> str | None:
    """The ``<q>`` of an action ``query <q>`` (None: the action is no query)."""
    m = _QUERY.match(action)
    return m.group(1).strip() if m else None


def parse(q: str) -> Query:
    """A query's kind and argument (lower-cased, without a trailing '?' or '.')."""
    text = " ".join(q.strip().lower().rstrip("?.!").split())
    text = text.removeprefix(f"{PREFIX} ").strip()
    for kind, pat in _PATTERNS:
        m = pat.match(text)
        if m:
            return Query(kind, m.group(1).strip() if m.groups() else "", text)
    return Query("unknown", "", text)


def ranking(ranked: Sequence[tuple[str, float]], other: str = "receptacles") -> str:
    """'r1 (0.42), r2 (0.31), and other receptacles (27%)': best first until the running
    total reaches :data:`MASS_THRESHOLD`; the rest summarised when anything is left."""
    shown: list[str] = []
    total = 0.0
    for i, (atom, p) in enumerate(ranked):
        shown.append(f"{atom} ({p:.2f})")
        total += p
        if total >= MASS_THRESHOLD and i + 1 < len(ranked):
            break
    text = ", ".join(shown)
    rest = len(ranked) - len(shown)
    if rest > 0 and 1.0 - total > 1e-9:
        text += f", and other {other} ({(1.0 - total) * 100:.0f}%)"
    return text


def most_likely(name: str, ranked: Sequence[tuple[str, float]], other: str) -> str:
    return f"{name} is most likely at: {ranking(ranked, other)}."


def may_be(name: str, atoms: Sequence[str], rng: random.Random) -> str:
    """The support without numbers, in a shuffled order (Belief-NoProb)."""
    order = list(atoms)
    rng.shuffle(order)
    return f"{name} may be at: {', '.join(order)}."


def observed_at(name: str, places: Sequence[str]) -> str:
    return f"{name} has been observed at: {', '.join(places)}."


def not_observed(name: str, where: str = "receptacles") -> str:
    return f"{name} has not been observed yet. Search {where} to find it."


def no_candidates(name: str, where: str = "receptacles") -> str:
    return f"No candidate locations remain for {name} (all likely {where} searched)."


def contents(place: str, names: Sequence[str] | None) -> str:
    if names is None:
        return f"{place} has not been searched yet."
    return f"{place} contains: {', '.join(sorted(names)) or 'nothing'}."


def searched(place: str, done: bool) -> str:
    return f"{place}: {'searched' if done else 'not searched yet'}."


def help_text(forms: Sequence[str]) -> str:
    return "Unrecognized query. Try: " + ", ".join(f"'query {f}'" for f in forms) + "."


__all__ = [
    "MASS_THRESHOLD",
    "Query",
    "contents",
    "help_text",
    "may_be",
    "most_likely",
    "no_candidates",
    "not_observed",
    "observed_at",
    "parse",
    "query_text",
    "ranking",
    "searched",
]
