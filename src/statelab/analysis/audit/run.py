"""``statelab audit EXPERIMENT``: the decision-sufficiency audit of every stored run.

Every finished episode (rollout 0) of every run but the expert's and the random floor's is
audited by the reader (the run's own acting model, or ``reader``), point by point: each point
is stored as soon as it is scored, so an audit killed part way resumes where it stopped and
never scores a point twice; an episode whose points are all stored is not replayed again. A
sealed test split is refused unless ``open_test`` (seed 003's rule,
:func:`statelab.run.ledgers.record_audit`). Before it scores anything it says what it will
cost (:func:`plan_cost`).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statelab.analysis._bounded import run_bounded
from statelab.analysis.audit.episode import POINT_COLUMNS, Options, audit_episode_async
from statelab.run._reading import register_table
from statelab.run.records import FINISHED
from statelab.run.store import Store

POINTS_TABLE = "audit_points"
EPISODES_TABLE = "audit_episodes"

register_table(
    POINTS_TABLE, f"CREATE TABLE IF NOT EXISTS {POINTS_TABLE} ({', '.join(POINT_COLUMNS)})"
)
register_table(
    EPISODES_TABLE,
    f"CREATE TABLE IF NOT EXISTS {EPISODES_TABLE} (run, seed, reader, points INTEGER,"
    " skipped TEXT, error TEXT, at TEXT DEFAULT (datetime('now')))",
)


@dataclass(frozen=True)
class Cost:
    """What an audit will do at most: episodes, decision points, model scorings and
    completions, and the prompt tokens they read (an estimate from the stored prompts)."""

    episodes: int
    points: int
    scorings: int
    completions: int
    tokens: int

    def line(self) -> str:
        return (f"audit: {self.episodes} episodes, at most {self.points} points, "
                f"{self.scorings} scorings, {self.completions} completions, "
                f"about {self.tokens:,} prompt tokens")  # fmt: skip


def _targets(st: Store) -> list[tuple[str, int, str, set[str]]]:
    """(run, seed, acting model, tags) of every episode the audit audits."""
    runs = {r["run"]: r for r in st.rows("runs", ["run", "spec", "tags"])}
    out = []
    for e in st.rows("episodes", ["run", "seed"], {"status": FINISHED, "rollout": 0}):
        r = runs.get(e["run"])
        if r is None:
            continue
        tags = set(json.loads(r["tags"] or "[]"))
        spec = json.loads(r["spec"] or "{}")
        if tags & {"expert", "random"} or str(spec.get("agent", "")) in ("expert", "random"):
            continue
        out.append((str(e["run"]), int(e["seed"]), str(spec.get("model", "")), tags))
    return sorted(out, key=lambda x: (x[0], x[1]))


def plan_cost(
    st: Store,
    points: int,
    samples: int,
    relevance: bool,
    reader: str | None = None,
) -> Cost:
    """The most an audit of ``st`` still scores (episodes finished and points stored by the
    same reader left out): per point 3 scorings ((a), (b), (c)) and ``samples``
    compressions each scored, plus one scoring per past step with ``relevance``; tokens from
    the stored prompts (twice the episode's mean prompt per scoring)."""
    finished = {(r["run"], int(r["seed"]), r["reader"])
                for r in st.rows(EPISODES_TABLE, ["run", "seed", "reader", "error"])
                if r["error"] is None}  # fmt: skip
    stored: dict[tuple[str, int, str], int] = {}
    for r in st.rows(POINTS_TABLE, ["run", "seed", "reader"]):
        key = (r["run"], int(r["seed"]), r["reader"])
        stored[key] = stored.get(key, 0) + 1
    eps = [e for e in _targets(st) if (e[0], e[1], reader or e[2]) not in finished]
    n_points = scorings = completions = tokens = 0
    for run, seed, model, _tags in eps:
        steps = st.episode_steps(run, seed, 0, ["t", "agent_in"])
        n = max(0, min(points, len(steps)) - stored.get((run, seed, reader or model), 0))
        per = 3 + samples + (len(steps) // 2 if relevance else 0)
        mean_in = sum(int(s["agent_in"] or 0) for s in steps) / max(1, len(steps))
        n_points += n
        scorings += n * per
        completions += n * samples
        tokens += int(n * per * mean_in * 2)
    return Cost(len(eps), n_points, scorings, completions, tokens)


def audit_sufficiency(
    exp: Any,
    *,
    reader: str | None = None,
    points: int = 8,
    how: str = "spread",
    relevance: bool = False,
    samples: int = 8,
    max_budget: int = 256,
    llm: Any = None,
    open_test: bool = False,
    force: bool = False,
    say: Callable[[str], None] = print,
    concurrency: int = 1,
) -> dict[str, Any]:
    """Audit every stored episode of ``exp`` (see the module docstring); returns counts.
    ``concurrency`` episodes are audited at once (each point saved as it is scored)."""
    from statelab.llm import make_llm
    from statelab.run.ledgers import record_audit

    record_audit(exp, open_test=open_test, force=force)
    started = time.perf_counter()
    path = exp.out_dir / "store.sqlite"
    st = Store(path)
    models: dict[str, Any] = {}

    def model_of(spec: str) -> Any:
        if llm is not None:
            return llm
        if spec not in models:
            models[spec] = make_llm(spec, cache=exp.cache)
        return models[spec]

    out: dict[str, Any] = {"episodes": 0, "points": 0, "skipped": {}, "failed": []}
    try:
        say(plan_cost(st, points, samples, relevance, reader).line())
        finished = {(r["run"], int(r["seed"]), r["reader"])
                    for r in st.rows(EPISODES_TABLE, ["run", "seed", "reader", "error"])
                    if r["error"] is None}  # fmt: skip
        done = {(r["run"], int(r["seed"]), int(r["t"]), r["reader"])
                for r in st.rows(POINTS_TABLE, ["run", "seed", "t", "reader"])}  # fmt: skip
        def save(row: dict[str, Any]) -> None:
            st.append({POINTS_TABLE: [row]})

        def job(run: str, seed: int, name: str) -> Any:
            opts = Options(points=points, how=how, relevance=relevance, samples=samples,
                           max_budget=max_budget,
                           stored_logprobs=reader is None,
                           done={(r, s, t) for r, s, t, n in done if n == name})  # fmt: skip

            async def one() -> None:
                try:
                    skips = await audit_episode_async(path, run, seed, model_of(name), name,
                                                      opts, save)  # fmt: skip
                    error = None
                except Exception as e:  # one episode fails; the audit goes on
                    skips, error = {}, f"{type(e).__name__}: {e}"
                    out["failed"].append(f"{run}/{seed}: {error}")
                out["episodes"] += 1
                out["points"] += int(skips.pop("points", 0))
                for why, n in skips.items():
                    out["skipped"][why] = out["skipped"].get(why, 0) + n
                st.append({EPISODES_TABLE: [{"run": run, "seed": seed, "reader": name,
                                             "points": None, "skipped": json.dumps(skips),
                                             "error": error}]},
                          replace={"run": run, "seed": seed, "reader": name})  # fmt: skip

            return one

        jobs = [job(run, seed, reader or acting) for run, seed, acting, _tags in _targets(st)
                if (run, seed, reader or acting) not in finished]  # fmt: skip
        run_bounded(jobs, concurrency)
    finally:
        st.close()
        if llm is None:
            for m in models.values():
                asyncio.run(m.aclose())
    out["seconds"] = time.perf_counter() - started
    return out
