"""One StateAct turn as text: what the agent writes and what few-shot examples show."""

from __future__ import annotations

import json


def json_key(key: str) -> str:
    return key.replace(" ", "_")


def render_turn(values: dict[str, str], keys: tuple[str, ...], fmt: str = "text") -> str:
    """One turn in the agent's output format; a missing or empty value is None (null)."""
    if fmt == "json":
        items = [f'"{json_key(k)}": {json.dumps(values.get(k) or None)}' for k in keys]
        return ">{" + ",\n".join(items) + "\n}"
    return ">" + "\n".join(f"{k}: {values.get(k) or 'None'}" for k in keys)
