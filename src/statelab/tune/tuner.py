"""Run a search: successive halving whose rounds are experiments in one store.

Each round is run by :func:`statelab.run.runner.run_experiment` on the search's store
(``<out>/<name>/store.sqlite``, the one an experiment of the same name uses): an episode
whose (run key, seed, rollout) is already done there, from an earlier round, an earlier
(killed) tune or an experiment, is reused and never replayed. A killed tune resumes by
running again: the rounds it finished cost nothing the second time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np
import pandas as pd

from statelab.core import LLM, ModelError
from statelab.run.records import FINISHED
from statelab.run.runner import run_sync
from statelab.run.spec import RunSpec
from statelab.run.store import Store
from statelab.tune.schedule import Halving, Round, cost, halve, plan, spending
from statelab.tune.search import Candidate, Search


@dataclass
class Tune:
    search: Search
    rounds: list[Round]
    halving: Halving[Candidate]
    #: episodes this call played (not found in the store)
    played: int = 0
    #: episodes the rounds used that were in the store before this call (an earlier, killed
    #: tune or an experiment of the same name)
    reused: int = 0
    failed: int = 0
    model_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    #: per round: episodes played then
    played_by_round: list[int] = field(default_factory=list)

    @property
    def full_grid(self) -> int:
        s = self.search
        return len(s.candidates()) * len(next(iter(s.pool().values()))) * len(s.envs)

    @property
    def planned(self) -> int:
        return cost(self.rounds, len(self.search.envs))

    @property
    def spending(self) -> str:
        """What the plan spends of the budget and why (:func:`~statelab.tune.schedule.spending`)."""
        return plan_spending(self.search, self.rounds)


def plan_spending(search: Search, rounds: list[Round]) -> str:
    """The plan's spending line for ``search`` (printed before a tune plays)."""
    seeds = len(next(iter(search.pool().values())))
    return spending(rounds, search.budget, max_seeds=seeds, per_seed=len(search.envs))


def schedule(search: Search) -> list[Round]:
    pool = search.pool()
    return plan(
        len(search.candidates()),
        search.budget,
        eta=search.eta,
        max_seeds=len(next(iter(pool.values()))),
        per_seed=len(search.envs),
    )


def tune(
    search: Search,
    *,
    progress: TextIO | None = sys.stderr,
    llm_factory: Callable[[str], LLM] | None = None,
    rounds: list[Round] | None = None,
) -> Tune:
    """Tune ``search``. ``rounds`` replaces its plan (a prefix of it plays a tune killed
    after those rounds)."""
    rounds = rounds if rounds is not None else schedule(search)
    pool = search.pool()
    store_path = search.experiment().out_dir / "store.sqlite"
    out = Tune(search, rounds, Halving(rounds))
    if progress is not None:
        print(f"tune {search.name}: {out.spending}", file=progress, flush=True)

    def evaluate(cands: list[Candidate], n: int) -> dict[Candidate, np.ndarray]:
        specs = {c: search.specs(c) for c in cands}
        exp = search.experiment(n, [s for c in cands for s in specs[c]])
        if progress is not None:
            print(
                f"round {len(out.played_by_round) + 1}/{len(rounds)}: {len(cands)} candidates"
                f" x {n} seeds x {len(search.envs)} envs",
                file=progress,
                flush=True,
            )
        res = run_sync(exp, progress=progress, llm_factory=llm_factory)
        if res.stopped:
            raise ModelError(f"tune {search.name}: {res.stopped} (run it again to resume)")
        out.played += res.done + res.failed
        out.played_by_round.append(res.done + res.failed)
        # seeds of earlier rounds were counted there (played or found in the store then)
        r = rounds[len(out.played_by_round) - 1]
        out.reused += res.skipped - r.candidates * r.prev_seeds * len(search.envs)
        out.failed += res.failed
        out.model_calls += res.model_calls
        out.tokens += res.tokens_in + res.tokens_out
        out.seconds += res.seconds
        return _values(store_path, search, specs, pool, n)

    out.halving = halve(search.candidates(), rounds, evaluate, alpha=search.alpha)
    return out


def _values(
    path: object,
    search: Search,
    specs: dict[Candidate, list[RunSpec]],
    pool: dict[str, list[int]],
    n: int,
) -> dict[Candidate, np.ndarray]:
    """Each candidate's per-seed objective on seed indices 0..n-1: the mean over envs of the
    episode's score (or score per 1,000 tokens); a failed episode counts 0, and so does a
    finished one without a score (NaN never ranks: it would sort anywhere)."""
    store = Store(str(path))
    try:
        eps = store.table("episodes")
    finally:
        store.close()
    eps = eps[eps["rollout"] == 0]
    tokens = eps["agent_in"] + eps["agent_out"] + eps["aux_in"] + eps["aux_out"]
    score = pd.to_numeric(eps["score"], errors="coerce")
    value = score.where(eps["status"].isin(FINISHED) & np.isfinite(score), 0.0)
    if search.objective == "score_per_1k_tokens":
        value = value / (tokens.clip(lower=1) / 1000.0)
    got = {(r, int(s)): float(v) for r, s, v in zip(eps["run"], eps["seed"], value, strict=True)}
    out: dict[Candidate, np.ndarray] = {}
    for c, runs in specs.items():
        per_env = [[got.get((spec.key, pool[spec.env][i]), 0.0) for i in range(n)] for spec in runs]
        out[c] = np.mean(np.asarray(per_env, dtype=np.float64), axis=0)
    return out


__all__ = ["Tune", "schedule", "tune"]
