"""Seed 004's derail rule and how an episode ended (its authors' base envs).

Each env step is one of :data:`~statelab.core.MOVED`, :data:`~statelab.core.NO_OP` or
:data:`~statelab.core.FORMAT_ERROR` (:meth:`statelab.core.Env.outcome`; a reply with no action
is a format error on any env). With a world model's ``derail_limit`` (``none:derail`` and every
belief-family model: 10) the episode ends after that many no-ops in a row or that many format
errors in a row; a world model's queries in a row end it too (the episode counts those). Under
the rule, the last step's ``meta["ended"]`` says how the episode ended, in the authors' words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statelab.core import FORMAT_ERROR, NO_OP


class Derail:
    """Seed 004's derail rule (its authors' base envs): the episode ends after ``limit``
    no-ops in a row or ``limit`` format errors in a row, two counters. A format error ends
    a run of no-ops; any step that ran ends a run of format errors."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.noops = self.errors = 0

    def see(self, kind: str) -> str:
        """Count one step's outcome; the reason to stop now, else ""."""
        self.errors = self.errors + 1 if kind == FORMAT_ERROR else 0
        self.noops = self.noops + 1 if kind == NO_OP else 0
        if not self.limit:
            return ""
        if self.noops >= self.limit:
            return f"{self.limit} consecutive no-ops"
        if self.errors >= self.limit:
            return f"{self.limit} consecutive format errors"
        return ""


#: how an episode ended (``meta["ended"]`` of its last step), in its authors' words
ENDINGS = {
    "no-ops": "noop_loop",
    "format errors": "format_error_limit",
    "world-model queries": "query_loop",
}


def ended(stopped: str, info: Mapping[str, Any], terminated: bool) -> str:
    """``success``, ``env_done`` (the env ended it otherwise), ``max_steps``, or the derail
    rule's ``noop_loop`` / ``format_error_limit`` / ``query_loop``."""
    if info.get("success"):
        return "success"
    if stopped:
        return next((v for k, v in ENDINGS.items() if stopped.endswith(k)), stopped)
    return "env_done" if terminated else "max_steps"


__all__ = ["ENDINGS", "Derail", "ended"]
