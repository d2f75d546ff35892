"""One StateAct turn as text: what the agent writes, what few-shot examples show, and how a
reply is read back into fields and an action."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from statelab.agents._parse import parse_action
from statelab.core import loads_json

#: every output key, in the seed's order
KEY_ORDER = ("goal", "locations visited", "current location", "current inventory",
             "current state", "reflection", "thought", "action")  # fmt: skip
ALIASES = {"think": "thought", "reflect": "reflection", "location visited": "locations visited",
           "visited locations": "locations visited", "inventory": "current inventory",
           "location": "current location", "state": "current state"}  # fmt: skip
_KEYS_RE = "|".join(re.escape(k) for k in sorted({*KEY_ORDER, *ALIASES}, key=len, reverse=True))
_LINE = re.compile(rf"^\s*(?:>\s*)?({_KEYS_RE})\s*[:：]\s*(.*)$", re.IGNORECASE)
_EMPTY = {"", "none", "null", "nothing", "empty", "n/a"}


def json_key(key: str) -> str:
    return key.replace(" ", "_")


def render_turn(values: dict[str, str], keys: tuple[str, ...], fmt: str = "text") -> str:
    """One turn in the agent's output format; a missing or empty value is None (null)."""
    if fmt == "json":
        items = [f'"{json_key(k)}": {json.dumps(values.get(k) or None)}' for k in keys]
        return ">{" + ",\n".join(items) + "\n}"
    return ">" + "\n".join(f"{k}: {values.get(k) or 'None'}" for k in keys)


# -- one turn as text ---------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    """A parsed reply: field values by canonical key, the action (None when the reply has no
    action line) and whether any known key appeared at all."""

    values: dict[str, str]
    action: str | None
    formatted: bool


def _canon(key: str) -> str:
    k = " ".join(key.lower().replace("_", " ").split())
    return ALIASES.get(k, k)


def _parse_text(reply: str) -> Turn:
    values: dict[str, str] = {}
    current: str | None = None
    for line in reply.splitlines():
        m = _LINE.match(line)
        if m:
            current = _canon(m.group(1))
            values[current] = m.group(2).strip()
            if current == "action":
                break
        elif current is not None and current != "action" and line.strip():
            values[current] = f"{values[current]} {line.strip()}".strip()
    action = values.pop("action", None)
    return Turn(values, action, bool(values) or action is not None)


def _json_value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return str(v)


_JSON_PAIR = re.compile(
    r'"([a-zA-Z_ ]+)"\s*:\s*(null|None|"(?:[^"\\]|\\.)*"|\[[^\]]*\])', re.IGNORECASE
)


def parse_json_turn(reply: str) -> Turn | None:
    start = reply.find("{")
    if start < 0:
        return None
    end = reply.rfind("}")
    body = reply[start : end + 1] if end > start else reply[start:]
    data: dict[str, Any] = {}
    try:
        loaded = loads_json(re.sub(r":\s*None\b", ": null", body))
        data = loaded if isinstance(loaded, dict) else {}
    except json.JSONDecodeError:
        for key, raw in _JSON_PAIR.findall(body):
            try:
                data[key] = loads_json("null" if raw == "None" else raw)
            except json.JSONDecodeError:
                data[key] = raw.strip('"')
    values = {_canon(k): _json_value(v) for k, v in data.items()}
    if not values:
        return None
    action = values.pop("action", None)
    return Turn(values, action, True)


def parse_turn(reply: str, fmt: str = "text") -> Turn:
    """Parse a reply in either format (JSON first when ``fmt`` is json, falling back to lines)."""
    if fmt == "json" or reply.lstrip("> \n").startswith("{"):
        parsed = parse_json_turn(reply)
        if parsed is not None:
            return parsed
    return _parse_text(reply)


def truncate(reply: str, fmt: str = "text") -> str:
    """The reply up to the end of its action line (ReAct's stop, in a one-call step)."""
    if fmt == "json":
        m = re.search(r'"action"\s*:\s*("(?:[^"\\]|\\.)*"|null|None)[^}]*\}?', reply)
        return reply[: m.end()] if m else reply
    lines = reply.splitlines()
    for i, line in enumerate(lines):
        m = _LINE.match(line)
        if m and _canon(m.group(1)) == "action":
            return "\n".join(lines[: i + 1])
    return reply


def is_empty(value: str | None) -> bool:
    return value is None or value.strip().lower() in _EMPTY


def choose_action(reply: str, turn: Turn, actions: tuple[str, ...] | None) -> tuple[str, bool]:
    """(action, parsed): the action line mapped onto the admissible list; a reply that ignored
    the format entirely is read as ``act`` reads it; fields without an action line send the
    reply's last line, raw."""
    if turn.action is not None:
        return parse_action(f"action: {turn.action}", actions)
    if not turn.formatted:
        return parse_action(reply, actions)
    lines = [ln.strip() for ln in reply.splitlines() if ln.strip()]
    return (lines[-1] if lines else ""), False
