"""Env adapters of the belief world models: each turns one env's observations into memory
and belief updates, answers the query kinds that env has, and checks actions by its rules.

An adapter is chosen by what the first observation *is* (its facts kind, its text), never by
the env's name: :func:`register_adapter` adds ``(matches, make)``; :func:`adapter_for` takes
the first whose ``matches(observation)`` holds. Adapters read observations only.
"""

from __future__ import annotations

import abc
import random
from collections.abc import Callable
from typing import Any

from statelab.core import Observation
from statelab.worldmodels.belief import Belief

#: what a where-is answer may reveal: probabilities, the support only, or observed facts only
MODES = ("belief", "noprob", "memory")


class Adapter(abc.ABC):
    """Base of the env adapters. ``prior`` is ``"uniform"`` or ``"zipf"``."""

    #: the plural the where-is answers summarise the tail with
    other: str = "receptacles"

    def __init__(self, obs: Observation, prior: str = "uniform") -> None:
        self.prior = prior

    def update(self, action: str, obs: Observation, valid: bool) -> None:  # noqa: B027
        """The env stepped with ``action`` and showed ``obs``."""

    @abc.abstractmethod
    def answer(self, q: str, mode: str, rng: random.Random) -> str:
        """The answer to query ``q`` (the text after ``query``)."""

    def check(self, action: str, oracle: Callable[[str], bool] | None = None) -> str | None:
        """WALL-E: feedback when the rules say ``action`` would fail, else None. ``oracle``
        is the env's own validity check when it has one (validate stage only)."""
        return None

    def query_forms(self) -> tuple[str, ...]:
        """The queries worth offering as actions this episode (for constrained choice)."""
        return ("state",)

    def query_help(self, mode: str) -> tuple[tuple[str, str], ...]:
        """``(query, what it answers)`` for the instructions, every form the adapter answers
        (by default the offered ones, undescribed)."""
        return tuple((f, "") for f in self.query_forms())

    def beliefs(self) -> dict[str, Belief]:
        """The persistent beliefs, by tracked object (tests read them)."""
        return {}


Matcher = Callable[[Observation], bool]
Maker = Callable[[Observation, str], Adapter]
_ADAPTERS: list[tuple[Matcher, Maker]] = []


def register_adapter(matches: Matcher, make: Maker) -> None:
    _ADAPTERS.append((matches, make))


def adapter_for(obs: Observation, prior: str = "uniform") -> Adapter | None:
    """The adapter of the first registered kind that recognises ``obs`` (None: none does)."""
    _load_builtin()
    for matches, make in _ADAPTERS:
        if matches(obs):
            return make(obs, prior)
    return None


_loaded: list[Any] = []


def _load_builtin() -> None:
    if not _loaded:
        from statelab.worldmodels.adapters import babyai, household, scienceworld

        _loaded.extend((babyai, household, scienceworld))


__all__ = ["MODES", "Adapter", "adapter_for", "register_adapter"]
