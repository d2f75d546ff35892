"""The audit of one stored episode: at its sampled decision points, the reader's NLL of a*
under (a) the run's own state, (b) the full history, (c) the true state in the run's format
and (d) the read-time oracle of (a)'s size; β, κ, "lost vs full" and the relevance lag.

The prompts are seed 003's, so on a cooking store this audit and seed 003's cooking audit (a
plugin's ``--kind seed003``) give the same numbers:

- (a) the run's rendered memory before the observation (``oracle_view``), or the reader's
  stored log-probabilities where the run's own agent scored the options and the audit's
  reader is the run's;
- (b) every raw step so far as ``Past trajectory:`` (the ``full`` history, prelude included);
- (c) ``oracle-bounded:B`` for a budgeted run, else ``oracle-summary`` (None where the env
  has no privileged facts);
- (d) the best of ``samples`` compressions of (b) into B tokens by the reader's NLL, B the
  run's budget or, for an unbudgeted state, the tokens (a) takes (None when (a) is empty
  or, unbudgeted, larger than ``max_budget``).

β = d − b (budget loss), κ = a − d (write-time regret), lost = a − b.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from statelab.analysis.audit.measures import budget_of, decision_loss, oracle_view, relevance_lag
from statelab.analysis.audit.points import Target, expert_targets, sample_points, skipped
from statelab.analysis.audit.score import nlls
from statelab.run.store import Store

#: the columns of one audited point
POINT_COLUMNS = (
    "run", "seed", "t", "k", "env", "history", "reader", "a_star", "n_actions", "budget",
    "nll_own", "nll_full", "nll_oracle", "nll_readtime", "beta", "kappa", "lost",
    "rel_lag", "rel_chunk", "rel_gain",
)  # fmt: skip


@dataclass
class Options:
    """How an episode is audited."""

    points: int = 8
    how: str = "spread"
    relevance: bool = False
    samples: int = 8
    #: use the run's stored reader log-probabilities for (a) (the reader is the run's own)
    stored_logprobs: bool = True
    compressor: Any = None
    #: the largest state (d) is written for (tokens): an unbudgeted state larger than this
    #: (a full history) gets no read-time oracle (its κ is undefined; lost vs full stands)
    max_budget: int = 256
    #: (run, seed, t) already audited by this reader: never scored again
    done: set[tuple[str, int, int]] = field(default_factory=set)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def audit_episode(
    store_path: Any,
    run: str,
    seed: int,
    reader: Any,
    reader_name: str,
    opts: Options,
    save: Callable[[dict[str, Any]], None],
) -> dict[str, int]:
    """Audit one episode, calling ``save`` with each point's row as soon as it is scored;
    returns the skipped steps by reason (and ``points``: how many were scored now)."""
    return asyncio.run(audit_episode_async(store_path, run, seed, reader, reader_name, opts,
                                           save))  # fmt: skip


async def audit_episode_async(
    store_path: Any,
    run: str,
    seed: int,
    reader: Any,
    reader_name: str,
    opts: Options,
    save: Callable[[dict[str, Any]], None],
) -> dict[str, int]:
    """:func:`audit_episode` in the caller's event loop (episodes audited concurrently); the
    replay and the expert's targets (which run event loops of their own) in a worker thread."""
    prep = await asyncio.to_thread(_prepare, store_path, run, seed, reader_name, opts)
    spec, manual, steps, targets, chosen, metas, own, base = prep
    await _score(spec, manual, seed, steps, targets, set(chosen), metas, own, reader, opts,
                 base, save)  # fmt: skip
    return {**skipped(targets), "points": len(chosen)}


def _prepare(store_path: Any, run: str, seed: int, reader_name: str, opts: Options) -> Any:
    """The episode replayed, the expert's targets and the points to score."""
    from statelab.run.replay import replay, spec_of
    from statelab.run.seeding import single

    st = Store(store_path, readonly=True)
    try:
        raw = st.run_spec(run)
        spec = spec_of({"spec": raw})
        (row,) = st.rows("runs", ["components"], {"run": run})
        history = json.loads(row["components"] or "{}").get("history") or {}
        tags = set(history.get("tags") or ())  # the memory's own tags, not the agent's
        metas = {r["t"]: r["meta"] for r in st.episode_steps(run, seed, 0, ["t", "meta"])}
        own = not {"reads-privileged", "needs-model"} <= tags  # oracle-readtime: no replay
        steps = list(replay(st, run, seed, history=None if own else "full"))
    finally:
        st.close()
    from statelab.envs import make_env

    env = make_env(spec.env, max_steps=spec.max_steps)
    first = single(spec.env, seed, 0).env_seed  # the audit reads rollout 0: the seed itself
    targets = expert_targets(env, first, [s.action for s in steps])
    eligible = [k for k, tg in enumerate(targets) if tg.a_star is not None]
    chosen = [k for k in sample_points(eligible, opts.points, opts.how)
              if (run, seed, steps[k].t) not in opts.done]  # fmt: skip
    base = {"run": run, "seed": seed, "env": spec.env, "history": spec.history,
            "reader": reader_name}  # fmt: skip
    return spec, env.manual, steps, targets, chosen, metas, own, base


async def _score(
    spec: Any,
    manual: str,
    seed: int,
    steps: Sequence[Any],
    targets: Sequence[Target],
    chosen: set[int],
    metas: dict[int, Any],
    own: bool,
    reader: Any,
    opts: Options,
    base: dict[str, Any],
    save: Callable[[dict[str, Any]], None],
) -> None:
    from statelab.core import Transition
    from statelab.run.axes import env_context
    from statelab.run.components import prelude_transitions
    from statelab.state import HISTORIES

    ctx = replace(env_context(spec.env, fmt=spec.format, seed=seed), manual=manual)
    full = HISTORIES.build("full", ctx)
    budget = budget_of(spec.history)
    oracle_mem = HISTORIES.build(f"oracle-bounded:{budget}" if budget else "oracle-summary", ctx)
    fstate: Any = None
    for k, step in enumerate(steps):
        if k == 0:
            fstate = full.init(step.observation, None)
            for tr in prelude_transitions(dict(step.privileged.info)):
                fstate, _ = await full.write(fstate, tr, None)
        if k in chosen:
            meta = json.loads(metas.get(step.t) or "{}")
            stored = decision_loss(meta.get("logprobs") or {}, targets[k].a_star)
            a_star = targets[k].a_star
            assert a_star is not None  # chosen points have one
            point = await _point(manual, ctx, step, a_star, fstate, budget,
                                 oracle_mem, reader, opts, stored, own)  # fmt: skip
            save({**base, "t": step.t, "k": k, **point})
        if k >= max(chosen, default=-1):
            break
        tr = Transition(
            step.t, step.action, step.reply, step.reward, step.next_observation, False, False
        )
        fstate, _ = await full.write(fstate, tr, None)


async def _point(
    manual: str,
    ctx: Any,
    step: Any,
    a_star: str,
    fstate: Any,
    budget: int | None,
    oracle_mem: Any,
    reader: Any,
    opts: Options,
    stored: float | None,
    own: bool,
) -> dict[str, Any]:
    from statelab.state.readtime import ReadTimeOracle, reader_prompt

    obs = step.observation
    actions = tuple(obs.admissible or ())
    size = budget or (reader.count_tokens(step.memory) if step.memory else None)
    if size and not budget and size > opts.max_budget:
        size = None  # a state as large as a long history: no hindsight compression of it
    rt = ReadTimeOracle(ctx.render_obs, size or 1, manual, ctx.seed, opts.samples)

    def prompt(state_view: str) -> list[Any]:
        return reader_prompt(manual, obs.goal, oracle_view(rt, state_view, obs), actions)

    def history(kept: Sequence[str]) -> str:
        return "Past trajectory:\n" + "\n".join(kept) if kept else ""

    chunks = list(fstate.steps)
    try:
        truth: str | None = oracle_mem.render(oracle_mem.init(obs, step.privileged))
    except Exception:  # no privileged facts: (c) is undefined
        truth = None
    prompts = [prompt(history(chunks))] + ([prompt(truth)] if truth is not None else [])
    want_own = not (opts.stored_logprobs and stored is not None) and own
    if want_own:
        prompts.append(prompt(step.memory))
    got = await nlls(reader, prompts, actions, a_star)
    nll_full = got[0]
    nll_oracle = got[1] if truth is not None else None
    nll_own = got[-1] if want_own else (stored if opts.stored_logprobs else None)
    nll_rt: float | None = None
    if size:
        _, nll_rt, _, _ = await rt.best(
            obs.goal, tuple(chunks), obs, a_star, reader, step.t, compressor=opts.compressor
        )
    out = {"a_star": a_star, "n_actions": len(actions), "budget": size, "nll_own": nll_own,
           "nll_full": nll_full, "nll_oracle": nll_oracle, "nll_readtime": nll_rt,
           "beta": _diff(nll_rt, nll_full), "kappa": _diff(nll_own, nll_rt),
           "lost": _diff(nll_own, nll_full), "rel_lag": None, "rel_chunk": None,
           "rel_gain": None}  # fmt: skip
    if opts.relevance and chunks:
        left = [prompt(history([c for j, c in enumerate(chunks) if j != i]))
                for i in range(len(chunks))]  # fmt: skip
        without = await nlls(reader, left, actions, a_star)
        rl = relevance_lag(nll_full, without)
        offset = fstate.t - len(chunks)  # chunks the window dropped
        chunk = None if rl.chunk is None else rl.chunk + offset
        out.update(rel_lag=rl.lag, rel_chunk=chunk, rel_gain=rl.gain)
    return out
