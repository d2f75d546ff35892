"""JSON read from what a model, a server or a file wrote: nesting past Python's recursion
limit is a decode error like any other malformed text, never a ``RecursionError`` that fails
the episode."""

from __future__ import annotations

import json
from typing import Any


def loads_json(text: str | bytes) -> Any:
    """``json.loads(text)``; text nested too deeply to read raises ``json.JSONDecodeError``
    (a ``ValueError``), as malformed JSON does."""
    try:
        return json.loads(text)
    except RecursionError:
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError("JSON nested too deeply to read", shown[:40], 0) from None
