"""Mapping a model's reply onto one admissible action, robustly but never by guesswork."""

from __future__ import annotations

import re

_ACTION_LINE = re.compile(r"^\s*>?\s*action\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE)


def _norm(s: str) -> str:
    return " ".join(re.sub(r"[\"'`*.!]", " ", s).lower().split())


def action_text(reply: str) -> str:
    """The text after the last 'Action:' line, else the first non-empty line."""
    found = _ACTION_LINE.findall(reply)
    if found:
        return found[-1].strip()
    for line in reply.splitlines():
        if line.strip():
            return line.strip()
    return ""


def parse_action(reply: str, admissible: tuple[str, ...] | None) -> tuple[str, bool]:
    """(action, parsed). ``parsed`` is False when nothing admissible could be read: the raw
    text is then returned as the action, and the env treats it as invalid by its own rules."""
    text = action_text(reply)
    if admissible is None:
        return text, bool(text)
    by_norm = {_norm(a): a for a in admissible}
    key = _norm(text)
    if key in by_norm:
        return by_norm[key], True
    # the reply names exactly one admissible action verbatim (e.g. wrapped in prose)
    inside = [a for n, a in by_norm.items() if n and n in _norm(reply)]
    longest = max((len(_norm(a)) for a in inside), default=0)
    inside = [a for a in inside if len(_norm(a)) == longest]
    if len(inside) == 1:
        return inside[0], True
    # a bare 1-based index into the listed actions
    if text.isdigit() and 1 <= int(text) <= len(admissible):
        return admissible[int(text) - 1], True
    return text, False
