"""How many requests a server answers at once, learned from the server, and the gate that
keeps the rest waiting here, before their deadline starts.

A server that answers fewer requests at once than are sent queues the others, and a
request's timeout counts the time it waits in that queue: llama-cpp-python's server answers
one request at a time, so ``concurrency: 2`` against it timed every second request out
(``ReadTimeout after 60 s``) however fast the model was. Where the server says how many it
takes, statelab sends no more than that (:func:`admitted`); a request waiting for a slot
waits here, and its deadline starts when it is sent.

Where the server says it (:func:`slots_from`):

- llama.cpp's server (``llama-server -np N``): ``GET /props`` gives ``total_slots``;
- llama-cpp-python's server (``python -m llama_cpp.server``): one request at a time (one lock
  around its model); it names itself by ``owned_by: "me"`` in ``GET /v1/models`` (answered
  under the same lock: after the request it is generating);
- vLLM and Ollama do not say (vLLM batches up to its ``--max-num-seqs``, Ollama answers
  ``OLLAMA_NUM_PARALLEL`` at once): nothing is capped; ``concurrency`` is what is sent.

A spec's ``slots=N`` is the server's slot count, taken as said, without asking. The server is
asked once per process, the first time a second request would be in flight on it at once
(one request after another never waits, whatever the server takes), and every backend of
the process on that server (its URL) shares one gate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Learn", "admitted", "forget", "slots_from"]

log = logging.getLogger(__name__)

#: asks the server how many requests it answers at once: (slots or None, where it said so)
Learn = Callable[[], Awaitable[tuple[int | None, str]]]

#: what each server (by URL) was found to take, for the process
_learned: dict[str, int | None] = {}


@dataclass
class _Server:
    """One server's requests in flight, on one event loop."""

    slots: int | None = None
    active: int = 0
    asked: bool = False
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    turn: asyncio.Condition = field(default_factory=asyncio.Condition)


_servers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Server]] = (
    weakref.WeakKeyDictionary()
)


def _server(key: str) -> _Server:
    on_loop = _servers.setdefault(asyncio.get_running_loop(), {})
    if key not in on_loop:
        on_loop[key] = _Server()
        if key in _learned:
            on_loop[key].slots, on_loop[key].asked = _learned[key], True
            on_loop[key].ready.set()
    return on_loop[key]


def slots_from(props: Any, models: Any) -> tuple[int | None, str]:
    """The slots a server's ``/props`` (llama.cpp's server) or ``/v1/models`` (llama-cpp-
    python's) reply says it has, and where it said so; ``(None, "")`` where neither says."""
    if isinstance(props, dict):
        n = props.get("total_slots")
        if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
            return n, "its /props: total_slots"
    data = models.get("data") if isinstance(models, dict) else None
    if isinstance(data, list) and any(
        isinstance(m, dict) and m.get("owned_by") == "me" for m in data
    ):
        return 1, "llama-cpp-python's server answers one request at a time"
    return None, ""


@contextlib.asynccontextmanager
async def admitted(
    key: str, learn: Learn, *, given: int | None = None, sending: int = 1
) -> AsyncIterator[None]:
    """Hold one of the server ``key``'s slots while the block runs (the server's slots:
    ``given``, else asked with ``learn`` the first time a second request would be in flight;
    unknown: no limit). ``sending`` is how many requests the caller may send at once (for
    the one warning that it is more than the server takes)."""
    s = _server(key)
    if not s.asked and (given is not None or s.active >= 1):
        s.asked = True
        try:
            n, where = (given, "the spec's slots") if given is not None else await learn()
        finally:
            s.ready.set()
        s.slots = _learned[key] = n
        if n is not None and n < sending:
            log.warning(
                "%s answers %d request(s) at a time (%s): %d are sent at once, the others "
                "wait here for a slot, their timeout not started", key, n, where, n,
            )  # fmt: skip
    elif s.asked and not s.ready.is_set():
        await s.ready.wait()
    async with s.turn:
        while s.slots is not None and s.active >= s.slots:
            await s.turn.wait()
        s.active += 1
    try:
        yield
    finally:
        s.active -= 1
        if s.slots is not None:
            async with s.turn:
                s.turn.notify()


def forget(key: str | None = None) -> None:
    """Drop what this process learned of one server's (or every server's) slots."""
    if key is None:
        _learned.clear()
        _servers.clear()
    else:
        _learned.pop(key, None)
        for on_loop in _servers.values():
            on_loop.pop(key, None)
