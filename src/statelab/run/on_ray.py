"""``statelab run CONFIG --ray auto|ADDRESS``: the episodes as Ray tasks.

A thin layer over the local runner (:mod:`statelab.run.runner`): the same episodes to play
(finished ones skipped: the same resume), the same per-model gates on episodes in flight,
the same circuit breaker and progress, and the same per-episode function
(:func:`statelab.run.runner.play_episode`). Only where an episode is played changes: each
is a task on one of a few :class:`EpisodeWorker` actors, which build the environment there
and call the model from there (an HTTP client to the configured endpoint, or a local model
of their own); the finished episode comes back to this process, the driver, which alone
writes the store, as each one finishes.

The response cache is opened by each worker at the configured path, made absolute on the
driver (on one machine, the same cache as a local run: the same seeds and cache give the
same episodes; on a cluster, each node's own file at that path). A worker flushes its cache
before it hands an episode back, so a stored episode's answers are on disk, as in a local
run.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from statelab.core import ACTING, LLM, ConfigError
from statelab.llm import (
    CachedLLM,
    ModelPool,
    make_llm,
    serves_remotely,
    spec_concurrency,
    use_models,
)
from statelab.run.config import Experiment
from statelab.run.provenance import guard
from statelab.run.records import FAILED, EpisodeRecord
from statelab.run.runner import (
    RunResult,
    check_cache,
    drive,
    gate_size,
    open_store,
    play_episode,
    prepare,
    short,
    sync,
)
from statelab.run.spec import RunSpec


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'statelab[ray]'") from None
    return ray


class EpisodeWorker:
    """One Ray actor (async: its episodes share its event loop, as a local run's do). It
    builds its models once, on first use, and plays the episodes it is given with them."""

    def __init__(self, exp: Experiment, llm_factory: Callable[[str], LLM] | None) -> None:
        self.exp = exp
        self.factory = llm_factory
        self.llms: dict[str, LLM] = {}
        self.gates: dict[str, asyncio.Semaphore] = {}

    def _llm(self, spec: str) -> LLM:
        if spec not in self.llms:
            exp = self.exp
            self.llms[spec] = (
                self.factory(spec)
                if self.factory is not None
                else make_llm(
                    spec,
                    cache=exp.cache,
                    timeout=exp.timeout,
                    retries=exp.retries,
                    concurrency=exp.concurrency,
                )
            )
        return self.llms[spec]

    async def play(
        self, spec: RunSpec, seed: int, rollout: int
    ) -> tuple[EpisodeRecord, str | None, str | None]:
        """The episode, the model error that failed it, and why flushing the response cache
        failed (None: it did not)."""
        seeds = self.exp.seeding(spec.env).of(seed, rollout)
        if not spec.uses_model:
            ep, model_error = await play_episode(spec, seed, rollout, None, None, seeds=seeds)
            return ep, model_error, None
        llm = self._llm(spec.model)
        writer = self._llm(spec.writer) if spec.writer != ACTING else None
        if spec.model not in self.gates:  # what this worker's own model serves at once
            self.gates[spec.model] = asyncio.Semaphore(gate_size(self.exp, spec.model, llm))
        async with self.gates[spec.model]:
            with use_models(ModelPool(self._llm, self.llms)):  # a component's own model too
                ep, model_error = await play_episode(spec, seed, rollout, llm, writer, seeds=seeds)
        caches = {id(m.cache): m.cache for m in (llm, writer) if isinstance(m, CachedLLM)}
        try:
            for cache in caches.values():
                await asyncio.to_thread(cache.flush)
        except Exception as e:
            return ep, model_error, short(e)
        return ep, model_error, None

    async def close(self) -> None:
        for llm in self.llms.values():
            await llm.aclose()
        for llm in self.llms.values():
            if isinstance(llm, CachedLLM):
                llm.cache.close()


class CacheFlushError(Exception):
    """A worker could not flush its response cache (the store records the episode failed)."""


class _FlushFailed:
    """A worker's failed cache flush, as the driver's commit sees it (it raises it there)."""

    def __init__(self, why: str) -> None:
        self.why = why

    def flush(self) -> None:
        raise CacheFlushError(self.why)


def ray_gate(exp: Experiment, model: str, workers: int) -> int:
    """Episodes of ``model`` in flight across the cluster: what :func:`gate_size` allows a
    local run against a server (the spec's ``?concurrency=``, else the experiment's); for a
    model each worker loads for itself, every worker's own (each gates its own model)."""
    own = spec_concurrency(model)
    if own is not None:
        return own
    if serves_remotely(model):  # a server elsewhere: the gate is the endpoint's
        return max(1, exp.concurrency)
    return workers


def _connect(ray: Any, address: str) -> bool:
    """Join ``address`` (``auto``: RAY_ADDRESS or the cluster started on this machine with
    ``ray start``, else a new local instance); True when this call started Ray."""
    if ray.is_initialized():
        return False
    try:
        ray.init(address=None if address == "auto" else address, log_to_driver=True)
    except (ConnectionError, ValueError, RuntimeError) as e:
        raise ConfigError(f"--ray {address}: cannot connect ({short(e)})") from None
    return True


async def run_on_ray(
    exp: Experiment,
    address: str = "auto",
    *,
    progress: TextIO | None = sys.stderr,
    llm_factory: Callable[[str], LLM] | None = None,
    debug: bool = False,
    workers: int | None = None,
) -> RunResult:
    """Run every missing episode of ``exp`` on the Ray cluster at ``address`` into the
    driver's ``<out>/<name>/store.sqlite``. ``workers``: how many episode actors (default:
    one per CPU of the cluster, at most one per episode that can be in flight).
    ``llm_factory`` travels to the workers (it must pickle: a module-level function). A sealed
    test split is refused here as in a local run (``statelab open-test`` runs it locally)."""
    guard(exp)
    ray = _ray()
    if exp.cache is not None and not Path(exp.cache).is_absolute():
        # the workers' working folder is not the driver's: they get the driver's absolute path
        exp = exp.model_copy(update={"cache": str(Path(exp.cache).resolve())})
    started = time.perf_counter()
    store = open_store(exp)
    ours = False
    actors: list[Any] = []
    try:
        todo, result = prepare(exp, store, progress)
        if not todo:
            result.seconds = time.perf_counter() - started
            return result
        if llm_factory is None and exp.cache is not None and any(s.uses_model for s, _, _ in todo):
            check_cache(exp.cache)
        ours = _connect(ray, address)
        models = {s.model for s, _, _ in todo if s.uses_model}
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        n = workers or cpus
        gates = {m: ray_gate(exp, m, n) for m in models}
        wanted = sum(gates.values()) + exp.concurrency * any(not s.uses_model for s, _, _ in todo)
        n = max(1, min(n, wanted, len(todo)))
        gates = {m: ray_gate(exp, m, n) for m in models}
        remote = ray.remote(num_cpus=1, max_restarts=2)(EpisodeWorker)
        actors = [remote.remote(exp, llm_factory) for _ in range(n)]
        load = [0] * n

        async def on_ray(
            spec: RunSpec, seed: int, rollout: int
        ) -> tuple[EpisodeRecord, str | None, tuple[Any, ...]]:
            i = min(range(n), key=load.__getitem__)
            load[i] += 1
            try:
                ep, model_error, flush_error = await actors[i].play.remote(spec, seed, rollout)
            except ray.exceptions.RayError as e:  # the worker died (its node lost, memory)
                ep = EpisodeRecord(
                    run=spec.key, seed=seed, rollout=rollout, status=FAILED, error=short(e),
                    reason="error",
                )  # fmt: skip
                return ep, None, ()
            finally:
                load[i] -= 1
            if debug and progress is not None and ep.status == FAILED and not model_error:
                print(f"{spec.label} seed={seed}: {ep.error}", file=progress, flush=True)
            return ep, model_error, (_FlushFailed(flush_error),) if flush_error else ()

        await drive(exp, store, todo, result, gates, on_ray, progress)
        result.seconds = time.perf_counter() - started
        return result
    finally:
        for actor in actors:
            with contextlib.suppress(Exception):  # a dead worker has nothing left to close
                await actor.close.remote()
            ray.kill(actor)
        if ours:
            ray.shutdown()
        store.close()


def run_on_ray_sync(exp: Experiment, address: str = "auto", **kw: Any) -> RunResult:
    return sync(run_on_ray(exp, address, **kw))
