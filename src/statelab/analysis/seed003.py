"""Seed 003's diagnostics: decision loss, budget loss β and write-time regret κ, relevance lag,
paired game bootstraps, the prompt leak check, and the report section (Tables 1 and 5, Fig. 6).

Definitions (section 3, Appendix D; choices where the seed is silent are in docs/seed003.md):

- **decision loss** δ = the reader's negative log-likelihood (nats) of the optimal command a*
  (the cooking env's ``privileged["a_star"]``) among the labelled admissible commands,
  log-softmax normalised over them. For a run whose agent is ``reader`` it is read off the
  step's stored ``meta["logprobs"]``; otherwise the reader prompt is rescored.
- At one decision point of a writer's episode, with the same a*:
  δ_full (the reader given the full history), δ_oracle (given the read-time oracle's best of
  8 hindsight compressions within B, ``oracle-readtime``) and δ_W (given the writer's state).
  **β = δ_oracle − δ_full** (budget loss: what a B-token state loses even in hindsight) and
  **κ = δ_W − δ_oracle** (write-time regret); δ_W − δ_full = β + κ. β may be negative: the
  oracle is a reference, not a bound.
- **relevance lag**: leave-one-chunk-out rescoring of the full history (a chunk is one step:
  its action and observation, the scripted prelude included): Δ_i = δ(history without chunk
  i) − δ(history). Undefined when max Δ_i < 0.5 nats; else the chunk of largest Δ (ties: the
  earliest) at lag n − 1 − i steps before the decision (0: the step that produced the
  current observation).
- **paired percentile bootstrap over games**: 10,000 resamples of games with replacement
  (seeded); every condition sees the same resampled games; each game weighs the same; the
  95% interval is the 2.5-97.5 percentiles. For write-point (decision-point) statistics the
  resampling is **game-clustered**: a drawn game brings all its points.
- **leak check**: no prompt (every stored model call's messages) contains a privileged string
  (a recipe direction, where a needed item is, a command of the optimal plan) that neither
  the env's manual nor any observation (its text, its admissible commands) has shown by that
  step. The agent's calls of a step may use what was observed
  up to the step's observation; the writer calls after it also the next observation.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from statelab.analysis.sections import report_section

#: relevance lag is undefined below this increase of the NLL (nats)
LAG_THRESHOLD = 0.5
#: bootstrap resamples and seed
RESAMPLES = 10_000
BOOT_SEED = 0
#: privileged strings shorter than this are not checked (e.g. "look")
MIN_SECRET = 6
AUDIT_TABLE = "seed003_audit"
LEAK_TABLE = "seed003_leaks"


# -- decision loss, β and κ ---------------------------------------------------------------
def decision_loss(logprobs: Mapping[str, float], a_star: str | None) -> float | None:
    """−log p(a*) from a reader's normalised log-probabilities of every command (None when
    a* is unknown or not among them)."""
    if a_star is None or a_star not in logprobs:
        return None
    return -float(logprobs[a_star])


@dataclass(frozen=True)
class Decomposition:
    """δ_full, δ_oracle, δ_W at one decision point, and β, κ."""

    full: float
    oracle: float
    writer: float

    @property
    def beta(self) -> float:
        return self.oracle - self.full

    @property
    def kappa(self) -> float:
        return self.writer - self.oracle


def decompose(full: float, oracle: float, writer: float) -> Decomposition:
    return Decomposition(full, oracle, writer)


# -- relevance lag ------------------------------------------------------------------------
@dataclass(frozen=True)
class RelevanceLag:
    #: steps between the most consequential chunk and the decision (None: undefined)
    lag: int | None
    #: that chunk's index (oldest first), and the NLL increase its removal caused
    chunk: int | None
    gain: float


def relevance_lag(
    base: float, without: Sequence[float], threshold: float = LAG_THRESHOLD
) -> RelevanceLag:
    """The lag from the NLL with every chunk (``base``) and with each chunk left out."""
    if not without:
        return RelevanceLag(None, None, 0.0)
    gains = [w - base for w in without]
    best = max(gains)
    if best < threshold:
        return RelevanceLag(None, None, best)
    i = next(k for k, g in enumerate(gains) if g == best)  # ties: the earliest chunk
    return RelevanceLag(len(gains) - 1 - i, i, best)


async def leave_one_chunk_out(
    chunks: Sequence[str], nll: Callable[[Sequence[str]], Awaitable[float]]
) -> tuple[float, list[float]]:
    """``nll`` of the whole history and of the history without each chunk in turn."""
    base = await nll(chunks)
    without = [await nll([c for j, c in enumerate(chunks) if j != i]) for i in range(len(chunks))]
    return base, without


# -- bootstrap ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    #: games (clusters) and points behind it
    games: int
    points: int

    def text(self, digits: int = 2, scale: float = 1.0) -> str:
        if math.isnan(self.mean):
            return "–"
        f = f"{{:+.{digits}f}}" if self.low < 0 < self.high or self.mean < 0 else f"{{:.{digits}f}}"
        return (
            f"{f.format(self.mean * scale)} [{f.format(self.low * scale)}, "
            f"{f.format(self.high * scale)}]"
        )


_NAN = Interval(math.nan, math.nan, math.nan, 0, 0)


def _percentiles(draws: np.ndarray) -> tuple[float, float]:
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return float(lo), float(hi)


def paired_bootstrap(
    a: Mapping[Any, float],
    b: Mapping[Any, float] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = BOOT_SEED,
) -> Interval:
    """Mean of ``a[g] - b[g]`` (or of ``a[g]``) over the games both have, with the paired
    percentile bootstrap interval over games (each game weighs the same)."""
    games = sorted(set(a) & set(b) if b is not None else set(a), key=str)
    if not games:
        return _NAN
    d = np.array([a[g] - (b[g] if b is not None else 0.0) for g in games], dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(resamples, len(d)))
    lo, hi = _percentiles(d[idx].mean(axis=1))
    return Interval(float(d.mean()), lo, hi, len(d), len(d))


def clustered_bootstrap(
    a: Mapping[Any, Sequence[float]],
    b: Mapping[Any, Sequence[float]] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = BOOT_SEED,
) -> Interval:
    """Mean over write points of ``a`` (minus the mean over the points of ``b``), with a
    game-clustered percentile bootstrap: games are drawn with replacement and bring all
    their points (in both conditions: the same games)."""
    games = sorted((g for g in a if len(a[g]) and (b is None or (g in b and len(b[g])))), key=str)
    if not games:
        return _NAN
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(games), size=(resamples, len(games)))

    def pooled(x: Mapping[Any, Sequence[float]]) -> tuple[float, np.ndarray]:
        sums = np.array([float(np.sum(x[g])) for g in games])
        counts = np.array([len(x[g]) for g in games], dtype=float)
        return float(sums.sum() / counts.sum()), sums[idx].sum(axis=1) / counts[idx].sum(axis=1)

    mean_a, draws = pooled(a)
    points = sum(len(a[g]) for g in games)
    if b is not None:
        mean_b, draws_b = pooled(b)
        mean_a, draws = mean_a - mean_b, draws - draws_b
    lo, hi = _percentiles(draws)
    return Interval(mean_a, lo, hi, len(games), points)


# -- the leak check -----------------------------------------------------------------------
def _norm(text: str) -> str:
    return " ".join(text.lower().split())


_PAREN = re.compile(r" \(.*\)$")


def privileged_strings(priv: Mapping[str, Any]) -> list[str]:
    """The strings of a privileged view a prompt must not hold before they are observed:
    the recipe's ingredient and direction lines, where each needed item is ("<item> <place>"),
    and the commands of the optimal plan (a*, policy, walkthrough)."""
    out: list[str] = []
    recipe = priv.get("recipe")
    if isinstance(recipe, str) and "Ingredients:" in recipe:
        body = recipe.split("Ingredients:", 1)[1].replace("Directions:", "\n")
        out += [ln.strip() for ln in body.splitlines() if ln.strip()]
    where = priv.get("where")
    if isinstance(where, Mapping):
        out += [f"{item} {_PAREN.sub('', str(place))}" for item, place in where.items()]
    for key in ("a_star", "policy", "walkthrough"):
        v = priv.get(key)
        out += [v] if isinstance(v, str) else [c for c in (v or ()) if isinstance(c, str)]
    seen: dict[str, None] = {}
    for s in out:
        if len(s.strip()) >= MIN_SECRET:
            seen.setdefault(s.strip(), None)
    return list(seen)


def find_leaks(prompt: str, observed: str, secrets: Iterable[str]) -> list[str]:
    """The secrets in ``prompt`` that ``observed`` (everything shown so far) does not hold
    (case and whitespace ignored)."""
    p, o = _norm(prompt), _norm(observed)
    return [s for s in secrets if _norm(s) in p and _norm(s) not in o]


def _observed(obs: Any) -> str:
    return "\n".join([obs.text, *(obs.admissible or ()), obs.goal])


def _messages_text(raw: str) -> str:
    msgs = json.loads(raw or "[]")
    parts = []
    for m in msgs:
        c = m.get("content") if isinstance(m, dict) else None
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):
            parts += [p.get("text", "") for p in c if isinstance(p, dict)]
    return "\n".join(parts)


def leak_check(store: Any, run: str, seed: int, rollout: int = 0) -> list[dict[str, Any]]:
    """Every leak in the stored episode's prompts: ``{t, call, secret}`` (empty: clean)."""
    from statelab.envs import make_env
    from statelab.run.replay import replay, spec_of
    from statelab.run.store import Store

    st = store if isinstance(store, Store) else Store(store)
    try:
        (spec_json,) = st.db.execute("SELECT spec FROM runs WHERE run=?", (run,)).fetchone()
        manual = make_env(spec_of({"spec": spec_json}).env).manual  # public: the env's manual
        rows = st.db.execute(
            "SELECT t, i, messages FROM calls WHERE run=? AND seed=? AND rollout=? ORDER BY t, i",
            (run, seed, rollout),
        ).fetchall()
        agent_calls = dict(
            st.db.execute(
                "SELECT t, agent_calls FROM steps WHERE run=? AND seed=? AND rollout=?",
                (run, seed, rollout),
            ).fetchall()
        )
        steps = list(replay(st, run, seed, rollout))
    finally:
        if st is not store:
            st.close()
    by_t: dict[int, list[tuple[int, str]]] = {}
    for t, i, msgs in rows:
        by_t.setdefault(int(t), []).append((int(i), msgs))
    leaks: list[dict[str, Any]] = []
    observed: list[str] = [manual]
    for k, step in enumerate(steps):
        info = step.privileged.info
        if k == 0:
            observed += [_observed(o) for _, o in info.get("prelude", ())]
        observed.append(_observed(step.observation))
        secrets = privileged_strings(info.get("privileged", {}))
        n_agent = int(agent_calls.get(step.t) or 0)
        for i, msgs in by_t.get(step.t, []):
            seen = observed + ([_observed(step.next_observation)] if i >= n_agent else [])
            for s in find_leaks(_messages_text(msgs), "\n".join(seen), secrets):
                leaks.append({"t": step.t, "call": i, "secret": s})
        observed.append(_observed(step.next_observation))
    return leaks


# -- spellings ----------------------------------------------------------------------------
def lag_of(env: str) -> int | None:
    """F' of a cooking env spelling (``cooking:lag=10``, ``cooking:10``; bare: 0)."""
    name, _, arg = env.partition(":")
    if name != "cooking":
        return None
    m = re.search(r"(?:^|\+)(?:lag=)?(\d+)(?:\+|$)", arg)
    return int(m.group(1)) if m else 0


def budget_of(history: str) -> int | None:
    """B of a bounded history spelling (``last-k:64``, ``bounded:summary:128``,
    ``oracle-readtime:64:2``: 64); None for an unbudgeted one."""
    parts = history.split(":")
    if parts[0] == "oracle-readtime":
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    m = re.search(r":(\d+)$", history)
    return int(m.group(1)) if m else None


def form_of(history: str) -> str:
    """The history without its budget (``bounded:summary``, ``last-k``, ``full``)."""
    if history.startswith("oracle-readtime"):
        return "oracle-readtime"
    return re.sub(r":\d+$", "", history)


# -- the audit (needs the reader model) ----------------------------------------------------
@dataclass
class AuditPoint:
    run: str
    seed: int
    t: int
    history: str
    lag: int | None
    budget: int | None
    rewrites: int | None
    a_star: str
    nll_writer: float | None
    nll_full: float | None
    nll_oracle: float | None
    beta: float | None
    kappa: float | None
    rel_lag: int | None = None
    rel_chunk: int | None = None
    rel_gain: float | None = None
    rel_is_reveal: int | None = None


def audit_episode(
    store_path: Path,
    run: str,
    seed: int,
    reader: Any,
    *,
    points: int = 8,
    relevance: bool = False,
    samples: int = 8,
    own_memory: bool = True,
) -> list[AuditPoint]:
    """δ_W, δ_full, δ_oracle (β, κ) at up to ``points`` decision points (the first ones) of a
    stored episode, with the same a*; optionally the relevance lag on the full history.
    δ_oracle is the best of ``samples`` hindsight compressions (the seed's 8).

    ``own_memory=False`` replays the env without the run's memory (a memory whose writes
    score with the model, the read-time oracle, cannot be re-simulated from stored replies):
    δ_W then comes only from the stored reader log-probabilities."""
    from statelab.run.replay import replay, spec_of
    from statelab.run.store import Store

    st = Store(store_path)
    try:
        spec = spec_of(
            {"spec": st.db.execute("SELECT spec FROM runs WHERE run=?", (run,)).fetchone()[0]}
        )
        metas = dict(
            st.db.execute(
                "SELECT t, meta FROM steps WHERE run=? AND seed=? AND rollout=0", (run, seed)
            ).fetchall()
        )
        steps = list(replay(st, run, seed, history=None if own_memory else "full"))
    finally:
        st.close()
    return asyncio.run(
        _audit(spec, run, seed, steps, metas, reader, points, relevance, samples, own_memory)
    )


async def _audit(
    spec: Any,
    run: str,
    seed: int,
    steps: list[Any],
    metas: dict[int, str],
    reader: Any,
    points: int,
    relevance: bool,
    samples: int,
    own_memory: bool = True,
) -> list[AuditPoint]:
    from dataclasses import replace as dc_replace

    from statelab.core import ModelError, Transition
    from statelab.envs import make_env
    from statelab.run.axes import env_context
    from statelab.run.episode import prelude_transitions
    from statelab.state import HISTORIES
    from statelab.state.history import WindowMemory
    from statelab.state.readtime import ReadTimeOracle, reader_nll, reader_prompt

    env = make_env(spec.env)
    ctx = dc_replace(env_context(spec.env, fmt=spec.format, seed=seed), manual=env.manual)
    full = HISTORIES.build("full", ctx)
    assert isinstance(full, WindowMemory)
    budget = budget_of(spec.history)
    oracle = ReadTimeOracle(ctx.render_obs, budget or 128, env.manual, seed, samples)
    lag = lag_of(spec.env)
    out: list[AuditPoint] = []
    fstate: Any = None
    for k, step in enumerate(steps):
        obs, info = step.observation, step.privileged.info
        if k == 0:
            fstate = full.init(obs, None)
            for tr in prelude_transitions(dict(info)):
                fstate, _ = await full.write(fstate, tr, None)
        a_star = step.privileged.get("a_star")
        actions = obs.admissible or ()
        if k < points and isinstance(a_star, str) and a_star in actions:
            meta = json.loads(metas.get(step.t) or "{}")
            nll_w = decision_loss(meta.get("logprobs") or {}, a_star)
            if nll_w is None and own_memory:  # not a reader run: rescore its view
                view = oracle_view(oracle, step.memory, obs)
                nll_w = await reader_nll(
                    reader, reader_prompt(env.manual, obs.goal, view, actions), actions, a_star
                )
            chunks = list(fstate.steps)

            async def nll_of(kept: Sequence[str], obs: Any = obs, a: str = a_star) -> float:
                history = "Past trajectory:\n" + "\n".join(kept) if kept else ""
                view = oracle_view(oracle, history, obs)
                got = await reader_nll(
                    reader,
                    reader_prompt(env.manual, obs.goal, view, obs.admissible or ()),
                    obs.admissible or (),
                    a,
                )
                assert got is not None
                return got

            try:
                nll_full: float | None = await nll_of(chunks)
            except ModelError:  # the full history does not fit the reader's context
                nll_full = None
            nll_o: float | None = None
            if budget is not None:
                _, nll_o, _, _ = await oracle.best(
                    obs.goal, tuple(chunks), obs, a_star, reader, step.t
                )
            beta = nll_o - nll_full if nll_o is not None and nll_full is not None else None
            kappa = nll_w - nll_o if nll_o is not None and nll_w is not None else None
            phase = info.get("privileged", {}).get("phase_a", {}) or {}
            filler = phase.get("filler")
            point = AuditPoint(
                run,
                seed,
                step.t,
                spec.history,
                lag,
                budget,
                None if filler is None else int(filler) + step.t - 1,
                a_star,
                nll_w,
                nll_full,
                nll_o,
                beta,
                kappa,
            )
            if relevance and nll_full is not None:
                base, without = await leave_one_chunk_out(chunks, nll_of)
                rl = relevance_lag(base, without)
                offset = fstate.t - len(chunks)  # chunks the window dropped (none at k = 400)
                chunk = None if rl.chunk is None else rl.chunk + offset
                point.rel_lag, point.rel_chunk, point.rel_gain = rl.lag, chunk, rl.gain
                reveal = phase.get("reveal")
                if chunk is not None and reveal is not None:
                    point.rel_is_reveal = int(chunk == int(reveal))
            out.append(point)
        tr = Transition(
            step.t, step.action, step.reply, step.reward, step.next_observation, False, False
        )
        fstate, _ = await full.write(fstate, tr, None)
    return out


def oracle_view(oracle: Any, history: str, obs: Any) -> str:
    """The reader's view with ``history`` (a rendered memory) before the observation."""
    from statelab.state.view import compose_view

    return compose_view(history, oracle.render_obs(obs), oracle.view_goal(obs.goal))


def _ensure(db: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    if rows:
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(rows[0])})")


def _insert(db: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    if rows:
        cols = list(rows[0])
        db.executemany(
            f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            [tuple(r.values()) for r in rows],
        )


def audit_experiment(
    exp: Any,
    *,
    reader: str | None = None,
    points: int = 8,
    relevance: bool = False,
    samples: int = 8,
    llm: Any = None,
) -> dict[str, Any]:
    """Audit every finished cooking episode of ``exp`` (reader NLLs, β, κ, relevance lag)
    and leak-check it; results go to the store's ``seed003_audit`` and ``seed003_leaks``
    tables, which the report reads."""
    from statelab.llm import make_llm
    from statelab.run.store import Store

    started = time.perf_counter()
    path = exp.out_dir / "store.sqlite"
    st = Store(path)
    try:
        eps = st.db.execute(
            "SELECT e.run, e.seed, r.spec, r.tags FROM episodes e JOIN runs r ON r.run = e.run"
            " WHERE e.status='done' AND e.rollout=0 ORDER BY e.run, e.seed"
        ).fetchall()
    finally:
        st.close()
    model = llm or make_llm(reader or exp.model, cache=exp.cache)
    db = sqlite3.connect(path)
    db.execute(f"CREATE TABLE IF NOT EXISTS {LEAK_TABLE} (run, seed, t, call, secret)")
    n_eps = n_points = n_leaks = 0
    failed: list[str] = []
    try:
        for run, seed, spec_json, tags in eps:
            spec = json.loads(spec_json or "{}")
            if lag_of(str(spec.get("env", ""))) is None or spec.get("agent") == "expert":
                continue
            n_eps += 1
            tagged = set(json.loads(tags or "[]"))
            try:
                leaks = (
                    []
                    if "reads-privileged" in tagged
                    else [{"run": run, "seed": int(seed), **x} for x in leak_check(path, run, seed)]
                )
                got = audit_episode(
                    path, run, int(seed), model, points=points, relevance=relevance,
                    samples=samples, own_memory=not {"reads-privileged", "needs-model"} <= tagged,
                )  # fmt: skip
            except Exception as e:  # one episode fails; the audit goes on
                failed.append(f"{run}/{seed}: {type(e).__name__}: {e}")
                continue
            rows = [asdict(p) for p in got]
            n_points, n_leaks = n_points + len(rows), n_leaks + len(leaks)
            with db:  # saved per episode: an interrupted audit keeps what it did
                for table in (AUDIT_TABLE, LEAK_TABLE):
                    if table == LEAK_TABLE or rows:
                        _ensure(db, table, rows)
                        db.execute(f"DELETE FROM {table} WHERE run=? AND seed=?", (run, seed))
                _insert(db, AUDIT_TABLE, rows)
                _insert(db, LEAK_TABLE, leaks)
        db.execute(
            "CREATE TABLE IF NOT EXISTS seed003_audited (episodes INTEGER, points INTEGER,"
            " seconds REAL, relevance INTEGER, failed TEXT, at TEXT DEFAULT (datetime('now')))"
        )
        with db:
            db.execute(
                "INSERT INTO seed003_audited(episodes, points, seconds, relevance, failed)"
                " VALUES (?,?,?,?,?)",
                (n_eps, n_points, time.perf_counter() - started, int(relevance),
                 json.dumps(failed)),
            )  # fmt: skip
    finally:
        db.close()
        if llm is None:
            asyncio.run(model.aclose())
    return {
        "episodes": n_eps,
        "points": n_points,
        "leaks": n_leaks,
        "failed": failed,
        "seconds": time.perf_counter() - started,
    }


# -- the report section --------------------------------------------------------------------
def _table(db: sqlite3.Connection, name: str) -> list[dict[str, Any]]:
    have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if name not in have:
        return []
    cur = db.execute(f"SELECT * FROM {name}")
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


def _cells(db: sqlite3.Connection) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Episodes of cooking runs (run, history, lag, budget, seed, success) and audit rows."""
    if not {"spec", "tags"} <= {r[1] for r in db.execute("PRAGMA table_info(runs)")}:
        return [], []  # a store older than run tags: no seed 003 runs in it
    rows = db.execute(
        "SELECT e.run, r.spec, r.tags, e.seed, e.success FROM episodes e JOIN runs r"
        " ON r.run = e.run WHERE e.status='done'"
    ).fetchall()
    eps = []
    for run, spec_json, tags, seed, success in rows:
        spec = json.loads(spec_json or "{}")
        lag = lag_of(str(spec.get("env", "")))
        if lag is None:
            continue
        history = "expert" if spec.get("agent") == "expert" else str(spec.get("history", "full"))
        eps.append(
            {
                "run": run,
                "history": history,
                "form": form_of(history),
                "lag": lag,
                "budget": budget_of(history),
                "seed": int(seed),
                "success": float(bool(success)),
                "privileged": "reads-privileged" in json.loads(tags or "[]"),
            }
        )
    return eps, _table(db, AUDIT_TABLE)


def success_by(eps: list[dict[str, Any]], form: str, lag: int, budget: int | None) -> Interval:
    got = {
        e["seed"]: e["success"]
        for e in eps
        if e["form"] == form and e["lag"] == lag and (e["budget"] == budget or budget is None)
    }
    return paired_bootstrap(got)


def kappa_by(
    audit: list[dict[str, Any]], form: str, lag: int, budget: int | None, key: str = "kappa"
) -> Interval:
    by: dict[int, list[float]] = {}
    for r in audit:
        if (
            form_of(r["history"]) == form
            and r["lag"] == lag
            and r["budget"] == budget
            and r[key] is not None
        ):
            by.setdefault(int(r["seed"]), []).append(float(r[key]))
    return clustered_bootstrap(by)


def _fig6(audit: list[dict[str, Any]], path: Path) -> bool:
    pts = [r for r in audit if r["kappa"] is not None and r["rewrites"] is not None]
    if not pts:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name in sorted({r["history"] for r in pts}):
        by: dict[int, list[float]] = {}
        for r in pts:
            if r["history"] == name:
                by.setdefault(int(r["rewrites"]), []).append(float(r["kappa"]))
        xs = sorted(by)
        ax.plot(xs, [float(np.mean(by[x])) for x in xs], marker="o", label=name)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("rewrites since the reveal")
    ax.set_ylabel("mean κ (nats)")
    ax.set_title("Write-time regret by rewrites since the reveal")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def seed003_markdown(db: sqlite3.Connection, out_dir: Path) -> tuple[list[str], dict[str, Path]]:
    eps, audit = _cells(db)
    files: dict[str, Path] = {}
    md: list[str] = []
    if not eps:
        return md, files
    lags = sorted({e["lag"] for e in eps})
    budgets = sorted({e["budget"] for e in eps if e["budget"] is not None})
    forms = sorted({e["form"] for e in eps}, key=lambda f: (f in ("full", "expert"), f))
    md += ["## Seed 003: success and write-time regret by lag and budget", ""]
    md += [
        "Success: % of games won (mean over games, paired percentile bootstrap over games, "
        f"{RESAMPLES:,} resamples). κ, β: nats at audited decision points (game-clustered "
        "bootstrap); `statelab audit CONFIG` computes them. Rows tagged reads-privileged are "
        "references (never shown to a writer).",
        "",
    ]
    # Table 5: every budget
    privileged = {e["form"] for e in eps if e["privileged"]}

    def label(form: str) -> str:
        return f"{form} †" if form in privileged else form

    head = "| history | B | games | " + " | ".join(f"F′={f} success" for f in lags)
    head += " | " + " | ".join(f"F′={f} κ" for f in lags) + " |"
    md += [
        "### Table 5: success (%) and κ by lag and budget",
        "",
        head,
        "|" + "---|" * (3 + 2 * len(lags)),
    ]
    for form in forms:
        for b in [None] if form in ("full", "expert") else budgets:
            cell = [e for e in eps if e["form"] == form and (b is None or e["budget"] == b)]
            if not cell:
                continue
            games = len({e["seed"] for e in cell})
            succ = [success_by(eps, form, f, b).text(1, 100) for f in lags]
            kap = [kappa_by(audit, form, f, b).text(2) for f in lags]
            md.append(f"| {label(form)} | {b or '–'} | {games} | " + " | ".join(succ + kap) + " |")
    md += ["", "† reads privileged data: a reference row, never shown to a writer.", ""]
    # Table 1: B = 128 (else the smallest budget run), with the next budget's success
    if budgets:
        b1 = 128 if 128 in budgets else budgets[0]
        b2 = next((b for b in budgets if b > b1), None)
        md += [
            f"### Table 1: success (%) and mean κ by lag at B = {b1}"
            + (f", with B = {b2} success" if b2 else ""),
            "",
        ]
        head = (
            "| history | "
            + " | ".join(f"F′={f}: success · κ · β" + (f" · B={b2}" if b2 else "") for f in lags)
            + " |"
        )
        md += [head, "|" + "---|" * (1 + len(lags))]
        for form in forms:
            if form in ("expert",):
                continue
            b = None if form == "full" else b1
            if not any(e["form"] == form and e["budget"] == b for e in eps):
                continue
            cells = []
            for f in lags:
                c = (
                    f"{success_by(eps, form, f, b).text(1, 100)} · "
                    f"{kappa_by(audit, form, f, b).text(2)} · "
                    f"{kappa_by(audit, form, f, b, 'beta').text(2)}"
                )
                if b2 and form != "full":
                    c += f" · {success_by(eps, form, f, b2).text(1, 100)}"
                cells.append(c)
            md.append(f"| {label(form)} | " + " | ".join(cells) + " |")
        md.append("")
    md += _paired_vs_summary(eps, lags, budgets, label)
    if audit:
        defined = [r for r in audit if r.get("rel_lag") is not None]
        tried = [r for r in audit if r.get("rel_gain") is not None]
        n_points = len({(r["run"], r["seed"]) for r in audit})
        md += [f"Audited: {len(audit)} decision points in {n_points} episodes."]
        if tried:
            reveal = sum(int(r.get("rel_is_reveal") or 0) for r in defined)
            lags_seen = [int(r["rel_lag"]) for r in defined]
            md += [
                f"Relevance lag (leave-one-chunk-out, undefined below {LAG_THRESHOLD} nats): "
                f"defined at {len(defined)} of {len(tried)} points"
                + (
                    f"; median lag {float(np.median(lags_seen)):.0f} steps; the cookbook chunk "
                    f"was the most consequential at {reveal} of {len(defined)}"
                    if defined
                    else ""
                )
                + "."
            ]
        path = out_dir / "seed003_fig6.png"
        if _fig6(audit, path):
            files["seed003_fig6"] = path
            md += ["", f"![κ by rewrites since the reveal (Fig. 6)]({path.name})"]
        md.append("")
    leaks = _table(db, LEAK_TABLE)
    audited = _table(db, "seed003_audited")
    if audited:
        md += [
            f"Leak check: {len(leaks)} privileged strings found in prompts before they were"
            " observed"
            + (
                f" (first: run {leaks[0]['run']} seed {leaks[0]['seed']} step "
                f"{leaks[0]['t']}: {leaks[0]['secret']!r})"
                if leaks
                else ""
            )
            + " (reads-privileged runs are not checked).",
            "",
        ]
    if audited and audited[-1].get("failed"):
        failed = json.loads(audited[-1]["failed"] or "[]")
        if failed:
            md += [
                f"Audit: {len(failed)} episode(s) could not be audited (first: {failed[0]}).",
                "",
            ]
    md += _openings(db) + _provenance(db)
    data = {"audit_points": len(audit), "leaks": len(leaks)}
    path = out_dir / "seed003.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    files["seed003"] = path
    return md, files


def _paired_vs_summary(
    eps: list[dict[str, Any]], lags: list[int], budgets: list[int], label: Callable[[str], str]
) -> list[str]:
    """Success differences from ``bounded:summary`` at the same B and F′, paired by game."""
    base = "bounded:summary"
    others = sorted({e["form"] for e in eps if e["budget"] is not None} - {base})
    if not others or not any(e["form"] == base for e in eps):
        return []
    md = [
        f"### Success difference from {base} (points, paired bootstrap over games)",
        "",
        "| history | B | " + " | ".join(f"F′={f}" for f in lags) + " |",
        "|" + "---|" * (2 + len(lags)),
    ]
    for form in others:
        for b in budgets:
            cells = []
            for f in lags:
                a = {e["seed"]: e["success"] for e in eps
                     if e["form"] == form and e["lag"] == f and e["budget"] == b}  # fmt: skip
                z = {e["seed"]: e["success"] for e in eps
                     if e["form"] == base and e["lag"] == f and e["budget"] == b}  # fmt: skip
                cells.append(paired_bootstrap(a, z).text(1, 100) if a and z else "–")
            if any(c != "–" for c in cells):
                md.append(f"| {label(form)} | {b} | " + " | ".join(cells) + " |")
    return [*md, ""]


def _openings(db: sqlite3.Connection) -> list[str]:
    rows = _table(db, "test_openings")
    if not rows:
        return ["The test split was not opened (no `statelab open-test` in this store).", ""]
    first = rows[0]
    lines = [
        f"**The test split was opened**: {len(rows)} opening(s) recorded in this store; "
        f"the {first['split']!r} split of {first['env']!r} first at {first['opened']}."
    ]
    for r in rows:
        writers = json.loads(r["writers"] or "[]")
        names = ", ".join(sorted({w["history"] for w in writers}))
        forced = " (FORCED: a second opening)"
        lines.append(
            f"- opening {r['opening']} of that split{forced if r['forced'] else ''}"
            f" at {r['opened']}, config hash {r['config_hash'][:12]}, writers: {names}"
        )
    return [*lines, ""]


def _provenance(db: sqlite3.Connection) -> list[str]:
    rows = _table(db, "provenance")
    if not rows:
        return []
    models = {(r["model"], (r["model_hash"] or "–")[:12]) for r in rows}
    adapters = {(r["history"], r["history_hash"][:12]) for r in rows if r["history_hash"]}
    lines = ["Provenance: " + "; ".join(f"model {m} sha256 {h}" for m, h in sorted(models))]
    lines += [f"- history {h} names files with sha256 {x}" for h, x in sorted(adapters)]
    return [*lines, ""]


@report_section("seed003-diagnostics")
def _section(store_path: Path, out_dir: Path, report_md: Path) -> dict[str, Path]:
    """Seed 003's tables (success, κ, β by lag and budget), Fig. 6, leaks, test openings."""
    db = sqlite3.connect(f"file:{store_path.resolve()}?mode=ro", uri=True)
    try:
        md, files = seed003_markdown(db, out_dir)
    finally:
        db.close()
    if md:
        report_md.write_text(report_md.read_text().rstrip("\n") + "\n\n" + "\n".join(md) + "\n")
    return files
