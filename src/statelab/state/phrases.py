"""The command-phrase fraction of a written state (seed 003, section 5.3: NO-HINT "retains the
zero-lag gain with a lower command-phrase fraction").

A trained writer can learn to write instructions for the reader ("take carrot", "slice the
carrot") instead of facts about the world ("the carrot is in the fridge"). The fraction measures
that: a state is split into clauses (at line breaks, ``.``, ``;``, ``!``, ``?`` and ``,``
followed by a space), each clause cleaned of list marks (``-``, ``*``, ``1.``, ``1)``), a
BELIEF confidence tag (``[high]``), a SLOTS label (``TASK:``) and a leading ``then`` / ``next``
/ ``now`` / ``to do:``; a clause is a **command phrase** when its first word is a verb of the
text game's command language (:data:`COMMAND_VERBS`: TextWorld's verbs and the recipe's
preparations, in the imperative). The fraction is command clauses over all clauses; ``None``
for a state with no clause.

*Choices* (the seed defines the measure nowhere): clauses, not tokens, so that a long fact is
one unit like a short command; the imperative test is the first word only ("you took the
carrot" and "the carrot was sliced" are facts; "slice the carrot" is a command).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: verbs of TextWorld's cooking command language, as the first word of an imperative
COMMAND_VERBS = frozenset(
    {
        "go", "take", "drop", "put", "insert", "open", "close", "examine", "look", "inventory",
        "eat", "drink", "cook", "slice", "dice", "chop", "fry", "roast", "grill", "prepare",
        "unlock", "lock", "get", "grab", "pick", "walk", "move", "use", "read", "check", "find",
        "return", "head", "enter", "exit",
    }
)  # fmt: skip
_SPLIT = re.compile(r"\n+|[.;!?](?:\s+|$)|,\s+")
_MARK = re.compile(
    r"^(?:[-*\u2022]\s*|\d+[.)]\s*|\[(?:high|medium|low)\]\s*|[A-Z][A-Z ]{1,20}:\s*"
    r"|(?:then|next|now|to do:?)\s+)+",
    re.IGNORECASE,
)


def clauses(text: str) -> list[str]:
    """The clauses of ``text``, cleaned of list marks, tags and labels (empty ones dropped)."""
    out = []
    for part in _SPLIT.split(text):
        part = _MARK.sub("", part.strip()).strip(" :-")
        if re.search(r"[A-Za-z]", part):
            out.append(part)
    return out


def is_command(clause: str) -> bool:
    """Whether ``clause`` is an imperative of the command language (its first word a verb)."""
    first = re.match(r"[A-Za-z]+", clause)
    return first is not None and first.group(0).lower() in COMMAND_VERBS


def command_fraction(text: str) -> float | None:
    """Command clauses over all clauses of a state; ``None`` when it has none."""
    parts = clauses(text)
    if not parts:
        return None
    return sum(map(is_command, parts)) / len(parts)


def state_text(memory: str) -> str:
    """A stored memory rendering without its header line (``Your state (at most B tokens):``)."""
    head, sep, body = memory.partition("\n")
    return body if sep and head.rstrip().endswith("):") else memory


def mean_command_fraction(memories: Iterable[str]) -> tuple[float | None, int]:
    """The mean command fraction over stored memory renderings (states with no clause left
    out) and how many states it averages."""
    got = [f for m in memories if m and (f := command_fraction(state_text(m))) is not None]
    return (sum(got) / len(got) if got else None), len(got)
