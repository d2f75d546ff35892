"""Env adapters of the belief world models: each turns one env's observations into memory
and belief updates, answers the query kinds that env has, and checks actions by its rules.

An adapter is chosen by the world family the env declares (``Env.kind``: ``"household"``,
``"scienceworld"``, ``"babyai"``), never by the env's name or its text:
:func:`register_adapter` claims a kind, :func:`adapter_for` makes the adapter of an env's kind
(None for an env that declares none, or one no adapter claims). Adapters read observations
only.
"""

from __future__ import annotations

import abc
import importlib
import pkgutil
import random
from collections.abc import Callable

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


Maker = Callable[[Observation, str], Adapter]
#: env kind -> the adapter that claims it
_ADAPTERS: dict[str, Maker] = {}


def register_adapter(kind: str, make: Maker) -> None:
    """Claim the envs that declare ``kind`` (``Env.kind``) for the adapter ``make``."""
    if not kind:
        raise ValueError("an adapter claims a non-empty env kind")
    if kind in _ADAPTERS and _ADAPTERS[kind] is not make:
        raise ValueError(f"env kind {kind!r} is claimed twice")
    _ADAPTERS[kind] = make


def claimed_kinds() -> tuple[str, ...]:
    """The env kinds some adapter claims."""
    _load_builtin()
    return tuple(_ADAPTERS)


def adapter_for(kind: str, obs: Observation, prior: str = "uniform") -> Adapter | None:
    """The adapter of env kind ``kind`` for an episode starting at ``obs`` (None: the env
    declares no kind, or no adapter claims it)."""
    _load_builtin()
    make = _ADAPTERS.get(kind) if kind else None
    return make(obs, prior) if make is not None else None


_loaded: list[str] = []


def _load_builtin() -> None:
    """Import every adapter module of this package (each claims its kind on import)."""
    if not _loaded:
        _loaded.append(__name__)
        for mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
            if not mod.startswith("_"):
                importlib.import_module(f"{__name__}.{mod}")


__all__ = ["MODES", "Adapter", "adapter_for", "claimed_kinds", "register_adapter"]
