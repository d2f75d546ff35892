"""Seed 003's audit: decision points rescored under full history, oracle and writer."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from statelab.analysis._components import arguments
from statelab.analysis.audit.kinds import AuditKind, AuditOutcome, AuditRequest
from statelab.analysis.audit.measures import (
    budget_of,
    decision_loss,
    leave_one_chunk_out,
    oracle_view,
    relevance_lag,
)
from statelab.run._reading import register_table
from statelab.run.records import FINISHED
from statelab.run.store import Store
from statelab_seed003.analysis.leaks import leak_check
from statelab_seed003.analysis.measures import AUDIT_RUNS_TABLE, AUDIT_TABLE, LEAK_TABLE

#: the audit's last runs: how many episodes and points, how long, what failed
AUDITED_TABLE = "seed003_audited"


# -- what a run's components recorded (parsed by their registries, never here) ------------
def lag_of(env: str, stored: Any = None) -> int | None:
    """F' of a run's env: its ``lag`` argument (``cooking:lag=10``: 10; bare: the default,
    0); None for an env without one."""
    lag = arguments("env", env, stored).get("lag")
    return int(lag) if lag is not None else None



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


# the tables the audit keeps in the store (untyped columns, as the audit always made them)
register_table(
    AUDIT_TABLE,
    f"CREATE TABLE IF NOT EXISTS {AUDIT_TABLE} ({', '.join(f.name for f in fields(AuditPoint))})",
)
register_table(LEAK_TABLE, f"CREATE TABLE IF NOT EXISTS {LEAK_TABLE} (run, seed, t, call, secret)")
register_table(
    AUDIT_RUNS_TABLE,
    f"CREATE TABLE IF NOT EXISTS {AUDIT_RUNS_TABLE} (id TEXT, started TEXT, finished TEXT,"
    " episodes INTEGER, audited INTEGER)",
)
#: the episodes each audit (``seed003_audit_runs.id``) began (``finished`` 0) and ended (1):
#: an audit killed part way resumes with them, never scoring a stored point twice
AUDIT_EPISODES_TABLE = "seed003_audit_episodes"
register_table(
    AUDIT_EPISODES_TABLE,
    f"CREATE TABLE IF NOT EXISTS {AUDIT_EPISODES_TABLE} (audit TEXT, run, seed, finished INTEGER)",
)
register_table(
    AUDITED_TABLE,
    f"CREATE TABLE IF NOT EXISTS {AUDITED_TABLE} (episodes INTEGER, points INTEGER,"
    " seconds REAL, relevance INTEGER, failed TEXT, at TEXT DEFAULT (datetime('now')))",
)


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
    compressor: Any = None,
    stored_logprobs: bool = True,
) -> list[AuditPoint]:
    """δ_W, δ_full, δ_oracle (β, κ) at up to ``points`` decision points (the first ones) of a
    stored episode, with the same a*; optionally the relevance lag on the full history.
    δ_oracle is the best of ``samples`` hindsight compressions (the seed's 8), written by
    ``compressor`` (default: ``reader``) and chosen by ``reader``'s NLL of a*.

    δ_W comes from the run's stored reader log-probabilities only with ``stored_logprobs``
    (``reader`` is the run's own model); otherwise ``reader`` rescores the run's view, so
    every δ of a point is one model's. ``own_memory=False`` replays the env without the
    run's memory (a memory whose writes score with the model, the read-time oracle, cannot
    be re-simulated from stored replies): δ_W then comes only from the stored
    log-probabilities, and is None without them."""
    job = audit_episode_async(store_path, run, seed, reader, points=points, relevance=relevance,
                              samples=samples, own_memory=own_memory, compressor=compressor,
                              stored_logprobs=stored_logprobs)  # fmt: skip
    return asyncio.run(job)


async def audit_episode_async(
    store_path: Path,
    run: str,
    seed: int,
    reader: Any,
    *,
    points: int = 8,
    relevance: bool = False,
    samples: int = 8,
    own_memory: bool = True,
    compressor: Any = None,
    stored_logprobs: bool = True,
    done: frozenset[int] = frozenset(),
    save: Callable[[AuditPoint], None] | None = None,
) -> list[AuditPoint]:
    """:func:`audit_episode` in the caller's event loop (episodes audited concurrently); the
    replay (which runs an event loop of its own) in a worker thread. The points at the steps
    ``done`` (their ``t``: stored already) are not scored again; ``save`` gets each point as
    soon as it is scored."""
    spec, metas, steps = await asyncio.to_thread(_replayed, store_path, run, seed, own_memory)
    if not stored_logprobs:  # another reader than the run's: its log-probs are not δ_W
        metas = {}
    return await _audit(spec, run, seed, steps, metas, reader, points, relevance, samples,
                        own_memory, compressor, done, save)  # fmt: skip


def _replayed(store_path: Path, run: str, seed: int, own_memory: bool) -> Any:
    """The run's spec, its steps' stored metadata and the episode replayed."""
    from statelab.run.replay import replay, spec_of

    st = Store(store_path, readonly=True)
    try:
        spec = spec_of({"spec": st.run_spec(run)})
        metas = {r["t"]: r["meta"] for r in st.episode_steps(run, seed, 0, ["t", "meta"])}
        steps = list(replay(st, run, seed, history=None if own_memory else "full"))
    finally:
        st.close()
    return spec, metas, steps


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
    compressor: Any = None,
    done: frozenset[int] = frozenset(),
    save: Callable[[AuditPoint], None] | None = None,
) -> list[AuditPoint]:
    from dataclasses import replace as dc_replace

    from statelab.core import ModelError, Transition
    from statelab.envs import make_env
    from statelab.run.axes import env_context
    from statelab.run.components import prelude_transitions
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
        scorable = k < points and isinstance(a_star, str) and a_star in actions
        if scorable and step.t not in done:
            assert isinstance(a_star, str)
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
                    obs.goal, tuple(chunks), obs, a_star, reader, step.t, compressor=compressor
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
            if save is not None:  # stored as soon as it is scored: a kill keeps it
                save(point)
        tr = Transition(
            step.t, step.action, step.reply, step.reward, step.next_observation, False, False
        )
        fstate, _ = await full.write(fstate, tr, None)
    return out


def compressor_spec(spec: dict[str, Any]) -> str:
    """The model spec that writes a run's read-time compressions: its ``compressor`` axis
    (default: the memory's writer), ``writer`` meaning the writer axis and ``acting`` the
    run's acting model (the seed's wiring: the untrained base model the writer axis names)."""
    value = str(spec.get("compressor") or "writer")
    if value == "writer":
        value = str(spec.get("writer") or "acting")
    return str(spec.get("model")) if value == "acting" else value


def _audited(spec_json: str | None, components: Any) -> bool:
    """Whether the audit audits an episode of this run: a cooking run, not the expert's."""
    spec = json.loads(spec_json or "{}")
    return lag_of(str(spec.get("env", "")), components) is not None


def _now() -> str:
    """UTC to the microsecond (sorts after an older store's whole-second stamps of the same
    second, and tells apart audits started within one second)."""
    now = time.time()
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}"


def audit_cooking(
    exp: Any,
    *,
    reader: str | None = None,
    points: int = 8,
    relevance: bool = False,
    samples: int = 8,
    llm: Any = None,
    open_test: bool = False,
    force: bool = False,
    concurrency: int = 1,
) -> dict[str, Any]:
    """Audit every finished cooking episode of ``exp`` (reader NLLs, β, κ, relevance lag)
    and leak-check it; results go to the store's ``seed003_audit`` and ``seed003_leaks``
    tables, which the report reads. An experiment on a sealed test split is refused unless
    ``open_test`` (once; again only with ``force``), and the audit is recorded
    (:func:`statelab.run.ledgers.record_audit`). ``concurrency`` episodes are audited at
    once (each saved as it finishes; the points do not depend on it). With ``reader`` (the
    CLI's ``--reader``) every δ is that reader's, δ_W rescored too (the runs' stored
    log-probabilities are their acting model's), as the general audit does."""
    from statelab.analysis._bounded import run_bounded
    from statelab.llm import make_llm
    from statelab.run.ledgers import record_audit

    record_audit(exp, open_test=open_test, force=force)
    started = time.perf_counter()
    path = exp.out_dir / "store.sqlite"
    st = Store(path)  # read-only until the audit's first rows
    model = llm or make_llm(reader or exp.model, cache=exp.cache)
    reader_spec = reader or exp.model
    compressors: dict[str, Any] = {}

    def compressor_of(spec_json: str | None) -> Any:
        cspec = compressor_spec(json.loads(spec_json or "{}"))
        if llm is not None or cspec == reader_spec:
            return model
        if cspec not in compressors:
            compressors[cspec] = make_llm(cspec, cache=exp.cache)
        return compressors[cspec]

    n_eps = n_points = n_leaks = 0
    failed: list[str] = []
    try:
        runs = {r["run"]: r for r in st.rows("runs", ["run", "spec", "tags", "components"])}
        eps = [
            (e["run"], e["seed"], *(runs[e["run"]][c] for c in ("spec", "tags", "components")))
            for e in st.rows("episodes", ["run", "seed"], {"status": FINISHED, "rollout": 0})
            if e["run"] in runs
        ]
        eps.sort(key=lambda e: (e[0], e[1]))
        eps = [e for e in eps if _audited(e[2], e[4]) and "expert" not in json.loads(e[3] or "[]")]
        # an audit killed before its end stays marked unfinished (the report says so), and
        # the next one resumes it: its finished episodes kept, its stored points not rescored
        prior = [r for r in st.rows(AUDIT_RUNS_TABLE) if r["id"]]
        # the latest started; two started in one second (a store written fast) are told apart
        # by the later row, so a killed audit right after a finished one is still resumed
        order = sorted(enumerate(prior), key=lambda ir: (str(ir[1]["started"] or ""), ir[0]))
        last = order[-1][1] if order else None
        resumed = last is not None and last["finished"] is None
        this = ({**last, "episodes": len(eps)} if resumed and last is not None else
                {"id": uuid.uuid4().hex, "started": _now(), "finished": None,
                 "episodes": len(eps), "audited": 0})  # fmt: skip
        began: dict[tuple[str, int], int] = {}
        stored: dict[tuple[str, int], set[int]] = {}
        if resumed:
            for r in st.rows(AUDIT_EPISODES_TABLE, where={"audit": this["id"]}):
                began[(str(r["run"]), int(r["seed"]))] = int(r["finished"] or 0)
            for r in st.rows(AUDIT_TABLE, ["run", "seed", "t"]):
                stored.setdefault((str(r["run"]), int(r["seed"])), set()).add(int(r["t"]))
        st.append({AUDIT_RUNS_TABLE: [this]}, replace={"id": this["id"]})
        tally = {"episodes": 0, "points": 0, "leaks": 0}

        def job(run: str, seed: int, spec_json: str, tags: str) -> Any:
            async def one() -> None:
                key = (run, seed)
                if began.get(key) == 1:  # audited by the audit this one resumes
                    return
                tagged = set(json.loads(tags or "[]"))
                tally["episodes"] += 1
                done = frozenset(stored.get(key, set())) if key in began else frozenset()
                if key not in began:  # this audit's first look: the episode's old points go
                    mark = {"audit": this["id"], "run": run, "seed": seed, "finished": 0}
                    st.append({AUDIT_TABLE: [], AUDIT_EPISODES_TABLE: [mark]},
                              replace={"run": run, "seed": seed})  # fmt: skip

                def save(p: AuditPoint) -> None:
                    st.append({AUDIT_TABLE: [asdict(p)]})

                try:
                    found = ([] if "reads-privileged" in tagged else  # it replays: a thread
                             await asyncio.to_thread(leak_check, path, run, seed))  # fmt: skip
                    leaks = [{"run": run, "seed": int(seed), **x} for x in found]
                    got = await audit_episode_async(
                        path, run, int(seed), model, points=points, relevance=relevance,
                        samples=samples,
                        own_memory=not {"reads-privileged", "needs-model"} <= tagged,
                        compressor=compressor_of(spec_json), stored_logprobs=reader is None,
                        done=done, save=save,
                    )  # fmt: skip
                except Exception as e:  # one episode fails; the audit goes on
                    failed.append(f"{run}/{seed}: {type(e).__name__}: {e}")
                    return
                tally["points"] += len(got) + len(done)
                tally["leaks"] += len(leaks)
                # the episode's leaks and its end, in one transaction (its points are stored)
                mark = {"audit": this["id"], "run": run, "seed": seed, "finished": 1}
                st.append({LEAK_TABLE: leaks, AUDIT_EPISODES_TABLE: [mark]},
                          replace={"run": run, "seed": seed})  # fmt: skip
                this["audited"] = int(this["audited"] or 0) + 1
                st.append({AUDIT_RUNS_TABLE: [this]}, replace={"id": this["id"]})

            return one

        run_bounded([job(run, int(seed), sp, tags) for run, seed, sp, tags, _ in eps], concurrency)
        n_eps, n_points, n_leaks = tally["episodes"], tally["points"], tally["leaks"]
        done = {"episodes": n_eps, "points": n_points, "seconds": time.perf_counter() - started}
        st.append(
            {AUDITED_TABLE: [{**done, "relevance": int(relevance), "failed": json.dumps(failed)}]}
        )
        st.append({AUDIT_RUNS_TABLE: [{**this, "finished": _now()}]}, replace={"id": this["id"]})
    finally:
        st.close()
        if llm is None:
            asyncio.run(model.aclose())
    return {
        "episodes": n_eps,
        "points": n_points,
        "leaks": n_leaks,
        "failed": failed,
        "seconds": time.perf_counter() - started,
    }


# -- the audit kind ``seed003`` (``statelab audit --kind seed003``) --------------------------
def _run_kind(exp: Any, req: AuditRequest) -> AuditOutcome:
    got = audit_cooking(exp, reader=req.reader, points=req.points, relevance=req.relevance,
                        samples=req.samples, open_test=req.open_test, force=req.force,
                        concurrency=req.concurrency)  # fmt: skip
    line = (f"{exp.name}: {got['points']} decision points audited, {got['leaks']} leaks in "
            f"{got['episodes']} episodes, {len(got['failed'])} failed | {got['seconds']:.1f} s")
    return AuditOutcome(line, list(got["failed"]))


def _claims(exp: Any) -> bool:
    """``auto`` picks this audit for an experiment whose every env has a lag (cooking)."""
    return all(lag_of(e) is not None for e in exp.grid.env)


#: registered by :func:`statelab_seed003.plugin.register`
AUDIT_KIND = AuditKind(
    "seed003", "seed 003's cooking audit, with its prompt leak check", _run_kind, _claims
)
