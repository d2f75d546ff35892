"""DSSR's scoring of a write point with the model calls handed over in batches (what
:func:`statelab_seed003.train.dssr.score_write_point` does with ``batched=True``).

A write point's work, in the order the models see it:

1. the ``K`` candidates' writes: one :meth:`~statelab.core.LLM.complete_many` of K requests;
2. their roll-forwards, all candidates in step: one batch of K writes per logged transition
   between the write and its last decision;
3. every reader scoring of the point, recursive (each candidate's rolled-forward state at
   each decision) and window (each candidate unchanged plus the raw steps since): one
   :meth:`~statelab.core.LLM.score_many`.

Every request is the one the one-at-a-time path makes (the same prompt, the same seed), so a
backend whose replies depend only on the request (every backend: the sampling seed is per
request) gives identical candidates, states and scores either way; only the order and the
grouping of the calls differ. Writers other than the plain bounded writer (e.g. a DSSR
writer with its own adapter model) are written one call after another, as they write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from statelab.agents.reader import normalise, options
from statelab.core import LLM, CompleteRequest, Message, ScoreRequest, Transition
from statelab.state.bounded import BoundedWriter, WrittenState, fit
from statelab.state.history import call_seed
from statelab_seed003.train._points import (
    Losses,
    horizon_steps,
    prelude_after_point,
    start_step,
    window_view,
)
from statelab_seed003.train.data import Trajectory, reader_prompt


async def write_all(
    writers: Sequence[BoundedWriter],
    states: Sequence[WrittenState],
    transitions: Sequence[Transition],
    llm: LLM,
) -> list[WrittenState]:
    """Each writer's write of its state through its transition, as one batch where the
    writers are plain bounded writers (the requests :meth:`BoundedWriter.write` makes)."""
    if not all(type(w) is BoundedWriter for w in writers):
        return [(await w.write(s, tr, llm))[0] for w, s, tr in zip(writers, states, transitions,
                                                                    strict=True)]  # fmt: skip
    reqs = []
    for w, s, tr in zip(writers, states, transitions, strict=True):
        params = replace(w.params, seed=call_seed(w.seed, s.t + 1, f"write-{w.form}"))
        reqs.append(CompleteRequest(w.messages(s, tr), params))
    done = await llm.complete_many(reqs)
    out = []
    for w, s, c in zip(writers, states, done, strict=True):
        text, cut = fit(c.text.strip(), w.budget, llm.count_tokens)
        out.append(WrittenState(s.goal, text, s.t + 1, cut, s.overflows + int(cut)))
    return out


#: one reader scoring: (candidate, steps after the write, the reader's messages, decision step)
Scoring = tuple[int, int, list[Message], int]


async def decision_nlls(reader: LLM, traj: Trajectory, scorings: list[Scoring]) -> list[float]:
    """-log p(a*) of each scoring (as :func:`statelab_seed003.train.data.decision_nll`), in
    one batch."""
    reqs = []
    for _, _, msgs, k in scorings:
        reqs.append(ScoreRequest(msgs, options(traj.steps[k].admissible)))
    got = await reader.score_many(reqs)
    out = []
    for (_, _, _, k), scores in zip(scorings, got, strict=True):
        d = traj.steps[k]
        assert d.a_star is not None
        out.append(-normalise(list(scores))[d.admissible.index(d.a_star)])
    return out


async def recursive_scorings(
    traj: Trajectory,
    states: list[WrittenState],
    writer: BoundedWriter,
    writer_llm: LLM,
    ks: list[int],
    start: int,
    prelude_after: list[Transition],
) -> list[Scoring]:
    """Every candidate carried forward in step (one batch of writes per transition) and the
    reader's prompt at each decision ``ks``, as scorings."""
    n = len(states)
    out: list[Scoring] = []
    if not ks:
        return out
    for tr in prelude_after:
        states = await write_all([writer] * n, states, [tr] * n, writer_llm)
    k_at = start + 1
    for k in ks:
        while k_at < k:
            tr = traj.steps[k_at].transition
            states = await write_all([writer] * n, states, [tr] * n, writer_llm)
            k_at += 1
        d = traj.steps[k]
        for c, s in enumerate(states):
            out.append((c, k - start, reader_prompt(traj, writer.render(s), d.observation), k))
    return out


def by_candidate(n: int, scorings: list[Scoring], nlls: list[float]) -> list[Losses]:
    """Per candidate, its (steps after the write, loss) in decision order."""
    out: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for (c, after, _, _), x in zip(scorings, nlls, strict=True):
        out[c].append((after, x))
    return [tuple(x) for x in out]


async def score_forks(
    traj: Trajectory,
    j: int,
    state_in: WrittenState,
    tr: Transition,
    forks: list[BoundedWriter],
    writer: BoundedWriter,
    writer_llm: LLM,
    reader: LLM,
    reach: int,
    phase: str,
) -> list[tuple[WrittenState, Losses, Losses]]:
    """(candidate, recursive losses, window losses) of each fork at write point ``(phase, j)``
    (its input state ``state_in``, its transition ``tr``), the calls in batches (see the
    module)."""
    n = len(forks)
    news = await write_all(forks, [state_in] * n, [tr] * n, writer_llm)
    ks, s = horizon_steps(traj, j, reach, phase), start_step(phase, j)
    after = prelude_after_point(traj, j, phase)
    rec = await recursive_scorings(traj, news, writer, writer_llm, ks, s, after)
    win: list[Scoring] = []
    for c, new in enumerate(news):
        rendered = writer.render(new)
        for k_ in ks:
            view = window_view(traj, rendered, j, k_, phase)
            win.append((c, k_ - s, reader_prompt(traj, view, traj.steps[k_].observation), k_))
    nlls = await decision_nlls(reader, traj, rec + win)
    recs = by_candidate(n, rec, nlls[: len(rec)])
    wins = by_candidate(n, win, nlls[len(rec) :])
    return list(zip(news, recs, wins, strict=True))
