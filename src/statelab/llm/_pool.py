"""The models of a run, by spec: built once by the run's factory, closed together.

A runner puts its :class:`ModelPool` in use (:func:`use_models`) while it plays; a
component that needs a model of its own (a trained DSSR writer names its adapter) asks
:func:`shared_model` for it and gets the run's model for that spec, with the run's cache,
retries and timeouts, closed when the run closes its models. Outside a run, a process-wide
pool of uncached models (:func:`statelab.llm.make_llm` defaults) answers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from statelab.core import LLM
from statelab.llm._model import Role

__all__ = ["ModelPool", "resolve_role", "role_model", "serving", "shared_model", "use_models"]


class ModelPool:
    """Models by spec, each built once by ``factory`` (default: :func:`make_llm` without
    a cache) into ``models`` (a dict the caller may share and close itself)."""

    def __init__(
        self,
        factory: Callable[[str], LLM] | None = None,
        models: dict[str, LLM] | None = None,
    ) -> None:
        self.factory = factory
        self.models: dict[str, LLM] = models if models is not None else {}
        self.roles: dict[str, set[Role]] = {}
        #: episodes are built on worker threads: a model is built once, not once a thread
        self._lock = threading.RLock()

    def get(self, spec: str, role: Role = Role.ACTING) -> LLM:
        """The model for ``spec`` (built on first use); ``role`` is recorded with it."""
        with self._lock:
            return self._get(spec, role)

    def _get(self, spec: str, role: Role) -> LLM:
        if spec not in self.models:
            if self.factory is not None:
                self.models[spec] = self.factory(spec)
            else:
                from statelab.llm import make_llm

                self.models[spec] = make_llm(spec)
        self.roles.setdefault(spec, set()).add(role)
        return self.models[spec]

    async def aclose(self) -> None:
        """Close every model built (and forget them)."""
        models, self.models = self.models, {}
        for llm in models.values():
            await llm.aclose()


_IN_USE: ContextVar[ModelPool | None] = ContextVar("statelab_models", default=None)
_PROCESS = ModelPool()


@contextmanager
def use_models(pool: ModelPool) -> Iterator[ModelPool]:
    """``pool`` answers :func:`shared_model` in this context (and the tasks it starts)."""
    token = _IN_USE.set(pool)
    try:
        yield pool
    finally:
        _IN_USE.reset(token)


def shared_model(spec: str, role: Role = Role.ACTING) -> LLM:
    """The model for ``spec`` from the pool in use (the run's), else the process's."""
    pool = _IN_USE.get()
    return (pool if pool is not None else _PROCESS).get(spec, role)


# -- the models of an episode's roles -------------------------------------------------------
_SERVING: ContextVar[Mapping[Role, LLM] | None] = ContextVar("statelab_roles", default=None)


@contextmanager
def serving(roles: Mapping[Role, LLM]) -> Iterator[Mapping[Role, LLM]]:
    """``roles`` answer :func:`role_model` in this context (an episode, while it plays)."""
    token = _SERVING.set(dict(roles))
    try:
        yield roles
    finally:
        _SERVING.reset(token)


def role_model(role: Role, default: LLM | None) -> LLM | None:
    """The model serving ``role`` in the episode playing now; ``default`` outside one (a
    replay, a training roll-forward: the model the caller was given) or where the episode
    names none for it."""
    roles = _SERVING.get()
    got = roles.get(role) if roles is not None else None
    return got if got is not None else default


def resolve_role(value: str, role: Role, named: Mapping[str, LLM | None]) -> LLM | None:
    """The model a role axis names: another role's model (``value`` a key of ``named``, e.g.
    ``acting``, ``writer``) or the run's model for a spec (:func:`shared_model`)."""
    if value in named:
        return named[value]
    return shared_model(value, role)
