"""Mapping a model's reply onto one admissible action, robustly but never by guesswork.

Every step here is linear in the reply's length, whatever the reply: a model's output is
untrusted input (a reply of 3,000 blank lines once took the old action pattern minutes to
scan, since two adjacent ``\\s*`` over the same characters backtrack cubically).
"""

from __future__ import annotations

import re

# An action line: optional spaces and one '>' on its own line, "action", a colon, the rest of
# the line. The lead is matched within one line ([^\S\n] is whitespace but the newline) and
# has one quantifier per character class, so a failed attempt costs one pass over its line;
# whitespace after the key may still cross newlines ("Action:\n go north" reads "go north").
_ACTION_LINE = re.compile(
    r"^[^\S\n]*(?:>[^\S\n]*)?action\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE
)
_PUNCT = re.compile(r"[\"'`*.!]")

# Reasoning blocks that models open their reply with (DeepSeek-R1 distills and Qwen3 write
# <think>...</think>; some open-thoughts models <|begin_of_thought|>...<|end_of_thought|>).
_REASONING_TAGS = (
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
)
#: the longest index read as "the n-th listed action" (int() refuses very long digit strings)
_MAX_INDEX_DIGITS = 6


def norm(s: str) -> str:
    return " ".join(_PUNCT.sub(" ", s).lower().split())


def split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, rest): a reasoning block the reply opens with, and what follows it.

    The block may follow leading whitespace; its tags are matched case-insensitively. An
    unclosed block is all reasoning (the model ran out of tokens, or a stop string cut it):
    the rest is then empty. A closing tag without an opening one (servers that put the
    opening tag in the prompt template, as Qwen3 and R1 distills do) ends the reasoning too.
    Replies without reasoning come back as ``("", text)``. Linear in ``len(text)``.
    """
    head = text.lstrip()
    lowered = head[:32].translate(_ASCII_LOWER)
    for open_tag, close_tag in _REASONING_TAGS:
        if lowered.startswith(open_tag):
            body = head[len(open_tag) :]
            end = _find_ci(body, close_tag)
            if end < 0:
                return body.strip(), ""
            return body[:end].strip(), body[end + len(close_tag) :].lstrip()
    for open_tag, close_tag in _REASONING_TAGS:
        end = _find_ci(head, close_tag)
        if end >= 0 and _find_ci(head[:end], open_tag) < 0:
            return head[:end].strip(), head[end + len(close_tag) :].lstrip()
    return "", text


def reasoning_open(text: str) -> bool:
    """Whether a reply opens a reasoning block that it has not closed (it was cut short)."""
    head = text.lstrip()[:32].translate(_ASCII_LOWER)
    return any(head.startswith(o) and _find_ci(text, c) < 0 for o, c in _REASONING_TAGS)


def _find_ci(text: str, tag: str) -> int:
    """Index of ``tag`` (ASCII) in ``text`` ignoring ASCII case, or -1."""
    # tags are ASCII: lowering only ASCII letters keeps indices aligned with the original
    # (str.lower() may change lengths: "İ".lower() is two characters)
    return text.translate(_ASCII_LOWER).find(tag)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def action_text(reply: str) -> str:
    """The text after the last 'Action:' line, else the first non-empty line.

    A reasoning block the reply opens with (``<think>...</think>``) is skipped first.
    """
    reply = split_reasoning(reply)[1]
    last = None
    for last in _ACTION_LINE.finditer(reply):  # noqa: B007 - only the last match counts
        pass
    if last is not None:
        return last.group(1).strip()
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
    by_norm = {norm(a): a for a in admissible}
    key = norm(text)
    if key in by_norm:
        return by_norm[key], True
    # the reply names exactly one admissible action verbatim (e.g. wrapped in prose)
    said = norm(split_reasoning(reply)[1])
    inside = [a for n, a in by_norm.items() if n and n in said]
    longest = max((len(norm(a)) for a in inside), default=0)
    inside = [a for a in inside if len(norm(a)) == longest]
    if len(inside) == 1:
        return inside[0], True
    # a bare 1-based index into the listed actions
    if text.isdecimal() and len(text) <= _MAX_INDEX_DIGITS and 1 <= int(text) <= len(admissible):
        return admissible[int(text) - 1], True
    return text, False


__all__ = ["action_text", "parse_action", "reasoning_open", "split_reasoning"]
