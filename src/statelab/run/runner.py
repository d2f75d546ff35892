"""Runs an experiment: every (run, seed) episode, concurrently, resumable, with progress."""

from __future__ import annotations

import asyncio
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from statelab.core import LLM, ConfigError, ModelError
from statelab.llm import make_llm
from statelab.run.axes import NAMES
from statelab.run.config import Experiment, RunSpec
from statelab.run.episode import describe_run, run_episode, spec_dict
from statelab.run.store import EpisodeRecord, Store


@dataclass
class RunResult:
    total: int = 0
    skipped: int = 0
    done: int = 0
    failed: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


class Progress:
    """One line per finished episode: done/total, tokens, ETA (plain text: logs stay readable).

    The ETA extrapolates from model episodes only: model-free ones (the expert) finish at once
    and would make it far too hopeful.
    """

    def __init__(self, total: int, model_total: int, out: TextIO | None) -> None:
        self.total, self.model_total, self.out = total, model_total, out
        self.n = self.model_n = 0
        self.start = time.perf_counter()
        self.tin = self.tout = 0

    def episode(self, label: str, ep: EpisodeRecord, uses_model: bool) -> None:
        self.n += 1
        self.model_n += uses_model
        self.tin += ep.agent_in + ep.aux_in
        self.tout += ep.agent_out + ep.aux_out
        if self.out is None:
            return
        elapsed = time.perf_counter() - self.start
        left = self.model_total - self.model_n
        eta = (
            "0m00s" if not left else (_fmt(elapsed / self.model_n * left) if self.model_n else "?")
        )
        what = (
            f"score={ep.score:.2f} steps={ep.steps}"
            if ep.status == "done"
            else f"FAILED: {ep.error}"
        )
        print(
            f"[{self.n}/{self.total}] {label} seed={ep.seed}"
            + (f"/{ep.rollout}" if ep.rollout else "")
            + f" {what} | tokens in={self.tin:,} "
            f"out={self.tout:,} | elapsed {_fmt(elapsed)} eta {eta}",
            file=self.out,
            flush=True,
        )


def _fmt(s: float) -> str:
    s = int(s)
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".strip()


async def run_experiment(
    exp: Experiment,
    *,
    progress: TextIO | None = sys.stderr,
    llm_factory: Callable[[str], LLM] | None = None,
) -> RunResult:
    """Run every missing episode of ``exp`` into ``<out>/<name>/store.sqlite``."""
    started = time.perf_counter()
    store = Store(exp.out_dir / "store.sqlite", axes=NAMES)
    try:
        store.lock()
    except ConfigError:
        store.close()
        raise
    store.save_experiment(exp.name, exp.public_dump())
    runs = exp.runs()
    for spec in runs:
        store.save_run(spec.key, spec.label, spec.axes(), spec_dict(spec), describe_run(spec))
    finished = store.done()
    everything = [(s, seed, i) for s in runs for seed, i in exp.episodes(s.env)]
    todo = [(s, seed, i) for s, seed, i in everything if (s.key, seed, i) not in finished]
    result = RunResult(total=len(everything), skipped=len(everything) - len(todo))
    if progress is not None and result.skipped:
        print(
            f"resuming {exp.name}: {result.skipped} episodes already done, {len(todo)} to go",
            file=progress,
            flush=True,
        )

    factory = llm_factory or (lambda spec: make_llm(spec, cache=exp.cache))
    llms: dict[str, LLM] = {}
    gates: dict[str, asyncio.Semaphore] = {}
    for spec, _, _ in todo:
        if not spec.uses_model:
            continue
        for m in {spec.model, spec.writer} - {"acting"}:
            if m not in llms:
                llms[m] = factory(m)
        if spec.model not in gates:
            gates[spec.model] = asyncio.Semaphore(
                min(exp.concurrency, llms[spec.model].max_concurrency)
            )
    model_free_gate = asyncio.Semaphore(exp.concurrency)
    bar = Progress(len(todo), sum(s.uses_model for s, _, _ in todo), progress)

    async def one(spec: RunSpec, seed: int, rollout: int) -> None:
        llm = llms[spec.model] if spec.uses_model else None
        writer = llms.get(spec.writer) if llm is not None else None
        async with gates[spec.model] if llm else model_free_gate:
            try:
                ep = await run_episode(spec, seed, llm, writer=writer, rollout=rollout)
            except Exception as e:  # an episode fails; the run goes on
                ep = EpisodeRecord(
                    run=spec.key, seed=seed, rollout=rollout, status="failed", error=_short(e)
                )
                if not isinstance(e, ModelError) and progress is not None:
                    traceback.print_exc(limit=3, file=progress)
        store.commit_episode(ep)
        if ep.status == "done":
            result.done += 1
        else:
            result.failed += 1
            result.failures.append(f"{spec.label} seed={seed}/{rollout}: {ep.error}")
        result.model_calls += ep.model_calls
        result.cached_calls += ep.cached_calls
        result.tokens_in += ep.agent_in + ep.aux_in
        result.tokens_out += ep.agent_out + ep.aux_out
        bar.episode(spec.label, ep, llm is not None)

    try:
        await asyncio.gather(*(one(s, seed, i) for s, seed, i in todo))
    finally:
        for llm in llms.values():
            await llm.aclose()
        store.close()
    result.seconds = time.perf_counter() - started
    return result


def run_sync(exp: Experiment, **kw: Any) -> RunResult:
    return asyncio.run(run_experiment(exp, **kw))
