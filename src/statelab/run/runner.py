"""Runs an experiment: every (run, seed) episode, concurrently, resumable, with progress."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sqlite3
import sys
import time
import traceback
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from statelab.core import ACTING, LLM, ConfigError, ModelError
from statelab.envs import env_class, missing_needs
from statelab.llm import (
    CachedLLM,
    ModelPool,
    make_llm,
    spec_concurrency,
    use_models,
)
from statelab.run._envcall import EnvCallError
from statelab.run._live import Progress, cancel_pending
from statelab.run._rows import stored_text
from statelab.run.axes import NAMES
from statelab.run.components import describe_run, spec_dict
from statelab.run.config import Experiment
from statelab.run.episode import attempt_episode
from statelab.run.provenance import guard, record_provenance
from statelab.run.records import DONE, FAILED, FINISHED, TRUNCATED, EpisodeRecord, StepRecord
from statelab.run.seeding import RESUME_COLUMNS, EpisodeSeeds, check_resume
from statelab.run.spec import RunSpec
from statelab.run.store import Store, writable


@dataclass
class RunResult:
    total: int = 0
    skipped: int = 0
    #: episodes played to their end, cut by a per-episode limit, ended by an error
    done: int = 0
    truncated: int = 0
    failed: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    #: seconds finished episodes waited for their write to the store, summed over episodes
    #: (the writes run on worker threads, off the event loop, one at a time)
    store_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    #: how many episodes failed with each reason
    reasons: Counter[str] = field(default_factory=Counter)
    #: episodes not started because the circuit breaker stopped the run
    not_started: int = 0
    #: why the run stopped early (None: it did not)
    stopped: str | None = None
    #: Ctrl-C stopped the run: the episodes in flight then, lost (None: it was not stopped)
    lost: int | None = None

    @property
    def ok(self) -> bool:
        return not self.failed and not self.not_started

    def interrupted_line(self) -> str:
        """What a Ctrl-C left: the episodes done of all, those lost, what a rerun plays."""
        kept = self.skipped + self.done + self.truncated
        return (
            f"interrupted: {kept} of {self.total} episodes done"
            + (f" ({self.skipped} before this run)" if self.skipped else "")
            + f", {self.lost or 0} in flight lost"
            + (f", {self.failed} failed" if self.failed else "")
            + f"; a rerun resumes with the {self.total - kept} left"
        )


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run (:func:`run_sync`): ``result`` is what it had done, and the
    exception's text its :meth:`RunResult.interrupted_line`."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(result.interrupted_line())
        self.result = result


#: where :func:`prepare` leaves each run's result, for :func:`sync` to report a Ctrl-C by
_RESULTS: contextvars.ContextVar[list[RunResult] | None] = contextvars.ContextVar(
    "statelab_run_results", default=None
)


def sync(main: Coroutine[Any, Any, RunResult]) -> RunResult:
    """``asyncio.run(main)`` (a run); a Ctrl-C that stopped it raises :class:`Interrupted`
    with what the run had done (a plain ``KeyboardInterrupt`` before it began playing)."""
    seen: list[RunResult] = []
    token = _RESULTS.set(seen)
    try:
        return asyncio.run(main)
    except KeyboardInterrupt:
        if seen and seen[-1].lost is not None:
            raise Interrupted(seen[-1]) from None
        raise
    finally:
        _RESULTS.reset(token)


class Breaker:
    """Stops a run when one cause fails ``limit`` episodes in a row with the same reason (a
    server that is down, a model name it does not know, a full disk): every episode left
    would fail the same way, each after its retries. ``limit`` 0 never stops."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.tripped: str | None = None
        self._last: dict[str, tuple[str, int]] = {}

    def record(self, cause: str, reason: str | None) -> None:
        """One finished episode of ``cause``: ``reason`` it failed, or None (it worked)."""
        if reason is None:
            self._last.pop(cause, None)
            return
        last, n = self._last.get(cause, ("", 0))
        n = n + 1 if last == reason else 1
        self._last[cause] = (reason, n)
        if self.limit and n >= self.limit and self.tripped is None:
            self.tripped = f"{n} episodes in a row of {cause} failed with: {reason}"


def short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return stored_text(f"{type(e).__name__}: {text[0] if text else ''}".strip(), 500)


def open_store(exp: Experiment) -> Store:
    """The experiment's store, claimed for this runner (a second runner gets one line)."""
    path = exp.out_dir / "store.sqlite"
    writable(path, "out")
    try:
        store = Store(path, axes=NAMES)
    except ConfigError as e:
        raise ConfigError(f"out: {e}") from None
    try:
        store.lock()
    except ConfigError:
        store.close()
        raise
    except OSError as e:
        store.close()
        raise ConfigError(f"out: cannot lock {path} ({e.strerror or e})") from None
    return store


def _commit(store: Store, ep: EpisodeRecord, caches: tuple[Any, ...] = ()) -> str | None:
    """Write ``ep``; when that fails, write it as failed with the reason (or, when even that
    fails, leave the store as it was: the transaction rolls back). Returns why the write
    failed, or None (the failed record keeps no steps: they may be what could not be
    stored). Runs on a worker thread (the store serialises its writers); the episode
    is durable when it returns (a committed WAL transaction survives the process's death),
    and so are its answers in the response ``caches`` (flushed first: a finished episode
    replays from the cache even after a SIGKILL)."""
    try:
        for cache in caches:
            cache.flush()
        store.commit_episode(ep)
        return None
    except Exception as e:  # a full disk, a value SQLite cannot hold, a malformed record
        why = short(e)
    ep.status, ep.error, ep.trajectory = FAILED, f"cannot store the episode: {why}", []
    ep.reason = "store"
    with contextlib.suppress(Exception):
        store.commit_episode(ep)
    return why


async def run_experiment(
    exp: Experiment,
    *,
    progress: TextIO | None = sys.stderr,
    llm_factory: Callable[[str], LLM] | None = None,
    debug: bool = False,
    open_test: bool = False,
    on_stored: Callable[[EpisodeRecord], None] | None = None,
) -> RunResult:
    """Run every missing episode of ``exp`` into ``<out>/<name>/store.sqlite``.

    Whatever goes wrong with one episode, its write included, fails that episode with the
    reason and the run goes on, until :class:`Breaker` sees the same failure
    ``exp.max_consecutive_failures`` times in a row: then the episodes not yet started are
    left for a rerun. ``debug`` prints the traceback of an unexpected failure. An experiment
    touching a sealed split (seed 003's test split) is refused unless ``open_test``
    (:mod:`statelab.run.provenance`: only ``statelab open-test`` sets it). ``on_stored``
    is called (on a worker thread) with every episode once it is stored as finished (done
    or truncated).
    """
    if not open_test:
        guard(exp)
    started = time.perf_counter()
    store = open_store(exp)
    try:
        return await _run(exp, store, started, progress, llm_factory, debug, on_stored)
    finally:
        store.close()


async def _run(
    exp: Experiment,
    store: Store,
    started: float,
    progress: TextIO | None,
    llm_factory: Callable[[str], LLM] | None,
    debug: bool,
    on_stored: Callable[[EpisodeRecord], None] | None = None,
) -> RunResult:
    todo, result = prepare(exp, store, progress)
    for env in sorted({s.env for s, _, _ in todo}):  # an env not installed: one line, not N
        why = missing_needs(env)
        if why:
            raise ConfigError(why)
    if llm_factory is None and exp.cache is not None and any(s.uses_model for s, _, _ in todo):
        check_cache(exp.cache)
    llms: dict[str, LLM] = {}
    try:
        await _play(exp, store, todo, result, llms, progress, llm_factory, debug, on_stored)
    finally:
        for llm in llms.values():
            await llm.aclose()
    result.seconds = time.perf_counter() - started
    return result


Todo = list[tuple[RunSpec, int, int]]


def prepare(exp: Experiment, store: Store, progress: TextIO | None) -> tuple[Todo, RunResult]:
    """Save the experiment and its runs into ``store``; the episodes not yet finished there
    (every (run, seed, rollout) whose status is not done or truncated: a failed one is played
    again, its stored steps replaced)."""
    store.save_experiment(exp.name, exp.public_dump())
    store.rekey_runs(RunSpec.from_stored)  # a store written before canonical spellings
    runs = exp.runs()
    for spec in runs:
        store.save_run(spec.key, spec.label, spec.axes(), spec_dict(spec), describe_run(spec))
    record_provenance(store, runs)  # model, writer and adapter hashes of every run
    finished = store.done()
    everything = [(s, seed, i) for s in runs for seed, i in exp.episodes(s.env)]
    todo = [(s, seed, i) for s, seed, i in everything if (s.key, seed, i) not in finished]
    done = store.rows("episodes", list(RESUME_COLUMNS), {"status": FINISHED})
    check_resume(done, {s.key: (s.label, exp.seeding(s.env)) for s, _, _ in todo})
    result = RunResult(total=len(everything), skipped=len(everything) - len(todo))
    seen = _RESULTS.get()
    if seen is not None:
        seen.append(result)
    if progress is not None and result.skipped:
        print(
            f"resuming {exp.name}: {result.skipped} episodes already done, {len(todo)} to go",
            file=progress,
            flush=True,
        )
    return todo, result


async def play_episode(
    spec: RunSpec,
    seed: int,
    rollout: int,
    llm: LLM | None,
    writer: LLM | None,
    debug_out: TextIO | None = None,
    seeds: EpisodeSeeds | None = None,
    texts: Callable[[StepRecord], None] | None = None,
) -> tuple[EpisodeRecord, str | None]:
    """The one per-episode function, locally and on Ray: the episode, or a failed record
    with the reason (whatever went wrong) and the steps played before it; and the model
    error that failed it, if one did. ``debug_out`` gets the traceback of an unexpected
    failure; ``seeds`` are the episode's (:meth:`Experiment.seeding`; default: those of a
    run of ``seed`` alone); ``texts`` (:meth:`Store.text_sink`) stores each step's texts as
    it is made."""
    ep, e = await attempt_episode(
        spec, seed, llm, writer=writer, rollout=rollout, seeds=seeds, texts=texts
    )
    if e is None:
        return ep, None
    ep.error = short(e)
    ep.reason = failure_reason(e)
    if isinstance(e, ModelError):
        return ep, ep.error
    if debug_out is not None:
        traceback.print_exception(e, limit=5, file=debug_out)
    return ep, None


def failure_reason(e: BaseException) -> str:
    """A failed episode's ``reason``: whose error ended it (``model``, ``env``, else
    ``error``; the runner's write gives ``store``)."""
    if isinstance(e, ModelError):
        return "model"
    return "env" if isinstance(e, EnvCallError) else "error"


#: plays one (run, seed, rollout): the episode, the model error that failed it (or None),
#: and the response caches to flush before the episode is stored
Player = Callable[[RunSpec, int, int], Awaitable[tuple[EpisodeRecord, str | None, tuple[Any, ...]]]]


async def _play(
    exp: Experiment,
    store: Store,
    todo: Todo,
    result: RunResult,
    llms: dict[str, LLM],
    progress: TextIO | None,
    llm_factory: Callable[[str], LLM] | None,
    debug: bool,
    on_stored: Callable[[EpisodeRecord], None] | None = None,
) -> None:
    """Play ``todo`` concurrently into ``store``, building the models into ``llms``."""
    factory = llm_factory or (
        lambda spec: make_llm(
            spec,
            cache=exp.cache,
            timeout=exp.timeout,
            retries=exp.retries,
            concurrency=exp.concurrency,
        )
    )
    gates: dict[str, int] = {}
    for spec, _, _ in todo:
        if not spec.uses_model:
            continue
        for m in {spec.model, spec.writer} - {ACTING}:
            if m not in llms:
                llms[m] = factory(m)
        if spec.model not in gates:
            gates[spec.model] = gate_size(exp, spec.model, llms[spec.model])
    debug_out = progress if debug else None
    # a component's own model (a trained DSSR writer) comes from the same factory, into
    # ``llms``: cached, retried and closed with the run's other models
    pool = ModelPool(factory, llms)

    async def local(
        spec: RunSpec, seed: int, rollout: int
    ) -> tuple[EpisodeRecord, str | None, tuple[Any, ...]]:
        llm = llms[spec.model] if spec.uses_model else None
        writer = llms.get(spec.writer) if llm is not None else None
        seeds = exp.seeding(spec.env).of(seed, rollout)
        texts = store.text_sink(spec.key, seed, rollout)  # an episode in flight holds keys
        ep, model_error = await play_episode(
            spec, seed, rollout, llm, writer, debug_out, seeds, texts
        )
        caches = tuple(
            {id(m.cache): m.cache for m in (llm, writer) if isinstance(m, CachedLLM)}.values()
        )
        return ep, model_error, caches

    with use_models(pool):
        await drive(exp, store, todo, result, gates, local, progress, on_stored)


async def drive(
    exp: Experiment,
    store: Store,
    todo: Todo,
    result: RunResult,
    gates: dict[str, int],
    player: Player,
    progress: TextIO | None,
    on_stored: Callable[[EpisodeRecord], None] | None = None,
) -> None:
    """Play ``todo`` through ``player`` (here, or on Ray) with at most ``gates[model]``
    episodes of each model in flight (``exp.concurrency`` model-free ones), writing each
    finished episode into ``store`` off the event loop (then ``on_stored(ep)`` there, when it
    is stored as finished); the circuit breaker stops the run.
    Each model's episodes go through as many lanes as its gate, in the order of ``todo``: the
    tasks alive are the lanes, however many episodes there are (memory stays flat)."""
    lanes: dict[str | None, deque[tuple[RunSpec, int, int]]] = {}
    for item in todo:
        lanes.setdefault(item[0].model if item[0].uses_model else None, deque()).append(item)
    totals = Counter(s.label for s, _, _ in todo)
    bar = Progress(
        totals,
        sum(s.uses_model for s, _, _ in todo),
        progress,
        budgets={s.label: _budget(s) for s, _, _ in todo},
        model_runs={s.label for s, _, _ in todo if s.uses_model},
    )
    breaker = Breaker(exp.max_consecutive_failures)

    def stored(spec: RunSpec, ep: EpisodeRecord, handle: int | None, why: str | None,
               model_error: str | None) -> None:  # fmt: skip
        breaker.record("the store", why)
        if spec.uses_model:
            breaker.record(f"model {spec.model}", model_error)
        if model_error is None:  # an env that fails every episode stops the run too
            breaker.record(f"env {spec.env}", _env_error(ep))
        _count(result, spec, ep)
        bar.episode(handle, spec.label, ep, spec.uses_model)

    async def one(spec: RunSpec, seed: int, rollout: int) -> None:
        if breaker.tripped:
            result.not_started += 1
            return
        with bar.playing(spec.label, seed, rollout) as handle:
            ep, model_error, caches = await player(spec, seed, rollout)
        # recorded before the lane takes the next episode, so none starts after the
        # failure that trips the breaker; written off the event loop, so the other
        # episodes' calls go on meanwhile; a Ctrl-C during the write waits for it (the
        # episode is stored, and counted so)
        t0 = time.perf_counter()
        write = asyncio.ensure_future(asyncio.to_thread(_commit, store, ep, caches))
        try:
            why = await asyncio.shield(write)
        except asyncio.CancelledError:
            why = await write
            stored(spec, ep, handle[0], why, model_error)
            if why is None and ep.status in FINISHED and on_stored is not None:
                on_stored(ep)
            raise
        result.store_seconds += time.perf_counter() - t0
        stored(spec, ep, handle[0], why, model_error)
        if why is None and ep.status in FINISHED and on_stored is not None:
            await asyncio.to_thread(on_stored, ep)

    async def lane(queue: deque[tuple[RunSpec, int, int]]) -> None:
        while queue:
            if cancel_pending():  # a Ctrl-C the last episode's env call swallowed
                raise asyncio.CancelledError
            await one(*queue.popleft())

    width = {m: gates.get(m, exp.concurrency) if m is not None else exp.concurrency for m in lanes}
    beat = asyncio.create_task(bar.beat())
    interrupted = False
    try:
        await asyncio.gather(*(lane(q) for m, q in lanes.items() for _ in range(width[m])))
    except asyncio.CancelledError:  # Ctrl-C (asyncio.run cancels the run): one summary
        interrupted = True
        raise
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        if interrupted:
            result.lost = bar.in_flight
            bar.say(result.interrupted_line())
        bar.close()
    if breaker.tripped:
        result.stopped = f"stopped early: {breaker.tripped}"


def _budget(spec: RunSpec) -> int | None:
    """The steps an episode of ``spec`` may play at most (its ``max_steps``, else its
    env's own), or None where the env cannot say."""
    if spec.max_steps:
        return spec.max_steps
    try:
        own = getattr(env_class(spec.env), "max_steps", None)
    except Exception:  # an env spelling the registry cannot resolve here (a Ray-only one)
        return None
    return own if isinstance(own, int) and own > 0 else None


def _env_error(ep: EpisodeRecord) -> str | None:
    """Why ``ep`` failed when its env failed it (an :class:`EnvCallError`), else None."""
    error = ep.error or ""
    return error if ep.status == FAILED and error.startswith(f"{EnvCallError.__name__}:") else None


def gate_size(exp: Experiment, model: str, llm: LLM) -> int:
    """Episodes of ``model`` in flight at once: the spec's own ``?concurrency=n`` when it sets
    one, else the experiment's ``concurrency`` bounded by what the backend serves at once (a
    local CPU model: 1; an HTTP backend is built with the experiment's concurrency)."""
    own = spec_concurrency(model)
    return own if own is not None else max(1, min(exp.concurrency, llm.max_concurrency))


def _count(result: RunResult, spec: RunSpec, ep: EpisodeRecord) -> None:
    if ep.status == DONE:
        result.done += 1
    elif ep.status == TRUNCATED:
        result.truncated += 1
    else:
        result.failed += 1
        result.reasons[ep.error or "unknown"] += 1
        result.failures.append(f"{spec.label} seed={ep.seed}/{ep.rollout}: {ep.error}")
    result.model_calls += ep.model_calls
    result.cached_calls += ep.cached_calls
    result.tokens_in += ep.agent_in + ep.aux_in
    result.tokens_out += ep.agent_out + ep.aux_out


def check_cache(path: str) -> None:
    """The response cache opens (a path under a file, or unwritable, is one line)."""
    from statelab.llm import ResponseCache

    writable(Path(path), "cache")
    try:
        ResponseCache(path).close()
    except (OSError, sqlite3.Error) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise ConfigError(f"cache: cannot open {path} ({reason})") from None


def run_sync(exp: Experiment, **kw: Any) -> RunResult:
    """:func:`run_experiment` to its end; Ctrl-C raises :class:`Interrupted` (see :func:`sync`)."""
    return sync(run_experiment(exp, **kw))
