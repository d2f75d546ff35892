"""Env calls off the event loop, each with a deadline.

An env's ``reset``, ``step``, action oracle and ``close`` are ordinary blocking calls; some
wait on another process (ScienceWorld's JVM over a socket). Called on the event loop, one slow
or stopped env would freeze every episode of the run. :func:`env_call` runs the call on a
worker thread and waits for it at most ``timeout`` seconds: past that, or when the call
raises, the episode fails with one :class:`EnvCallError` line while the other episodes go on.

The workers are daemon threads: a call that never returns holds its thread, never the
process's exit (``concurrent.futures`` and asyncio's default executor join their threads at
exit, so one hung env would hang the whole command after its last episode).

An env class that declares ``thread_safe = False`` (a library it plays through keeps
process-wide state: TextWorld parses every game's logic with one module-level parser) has
its calls made one at a time: each holds ``statelab.core.SERIAL`` on its worker thread, one
lock for every such env, since two of them may share the library (cooking and household share
TextWorld). The wait for the lock counts against the call's deadline; a call past its
deadline keeps the lock until it returns (the lock guards the library, which that call may
still be in). ``benchmarks/env_threads.py`` measured the lock against a process of its own
per env on cooking: the lock was the faster (see its docstring).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from statelab.core import serial_for

T = TypeVar("T")

#: seconds one env call may take before its episode fails (an env class may set its own
#: ``call_timeout``); generous, since a first reset may build a game or an expert's plan
ENV_CALL_TIMEOUT = 300.0


class EnvCallError(RuntimeError):
    """An env call raised or passed its deadline: its episode fails with this one line."""


class _Workers:
    """Daemon threads taking calls from one queue; a thread idle for ``idle_s`` exits.

    ``_idle`` counts waiting threads no submitted call has claimed yet: a call either claims
    one or starts a new thread, so a call never waits behind a busy (or hung) one."""

    def __init__(self, idle_s: float = 30.0) -> None:
        self._q: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._idle_s = idle_s

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        fut: Future[T] = Future()
        self._q.put((fut, fn))
        with self._lock:
            if self._idle:
                self._idle -= 1
                return fut
        threading.Thread(target=self._work, name="statelab-env", daemon=True).start()
        return fut

    def _work(self) -> None:
        while True:
            try:
                fut, fn = self._q.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # not claimed: leave
                        self._idle -= 1
                        return
                continue  # claimed by a call now on its way through the queue
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn())
                except BaseException as e:
                    fut.set_exception(e)
            del fut, fn
            with self._lock:
                self._idle += 1


_WORKERS = _Workers()

def _held(lock: contextlib.AbstractContextManager[Any], fn: Callable[[], T]) -> T:
    with lock:
        return fn()


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0].strip()}" if lines else type(e).__name__


async def env_call(
    what: str, fn: Callable[[], T], timeout: float, *, blame: bool = True, env: Any = None
) -> T:
    """``fn()`` on a worker thread, awaited at most ``timeout`` seconds; holding
    :func:`serial_for` ``env`` (the env or env class called) while it runs.

    Past the deadline raises :class:`EnvCallError` (the call itself runs on; the env's
    ``close`` is then what stops it: ScienceWorld's kills a simulator with a call in
    flight). With ``blame`` any exception of ``fn`` becomes an :class:`EnvCallError` naming
    ``what``; without, only the deadline does (a stage that runs components' code too)."""
    # in a copy of the caller's context, as ``asyncio.to_thread`` runs it (the run's model
    # pool is a context variable that an episode's construction reads)
    call = functools.partial(_held, serial_for(env), fn)
    fut = _WORKERS.submit(functools.partial(contextvars.copy_context().run, call))
    try:
        return await asyncio.wait_for(asyncio.wrap_future(fut), timeout)
    except TimeoutError:
        raise EnvCallError(f"env {what} took longer than {timeout:g} s") from None
    except EnvCallError:
        raise
    except Exception as e:
        if not blame:
            raise
        raise EnvCallError(f"env {what} failed: {_first_line(e)}") from e


def call_timeout(env: Any, what: str) -> float:
    """The deadline of ``env``'s call ``what`` (build, reset, step, validate, close): its
    class's ``<what>_timeout``, else its ``call_timeout``, else :data:`ENV_CALL_TIMEOUT`.
    ``env`` is an env or an env class (its construction, ``build``, has no env yet)."""
    cls = env if isinstance(env, type) else type(env)
    own = getattr(cls, f"{what}_timeout", None) or getattr(cls, "call_timeout", None)
    return float(own or ENV_CALL_TIMEOUT)


def blamed(oracle: Callable[[str], bool] | None) -> Callable[[str], bool] | None:
    """The env's action oracle, its errors as :class:`EnvCallError` (the env's, not the
    asking component's)."""
    if oracle is None:
        return None

    def ask(action: str) -> bool:
        try:
            return oracle(action)
        except EnvCallError:
            raise
        except Exception as e:
            why = f"{type(e).__name__}: {e}"
            raise EnvCallError(f"env validate (action oracle) failed: {why}") from e

    return ask


__all__ = [
    "ENV_CALL_TIMEOUT",
    "EnvCallError",
    "blamed",
    "call_timeout",
    "env_call",
]
