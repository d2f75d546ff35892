"""DSSR (seed 003, section 4): candidate states at a write point, scored by the frozen reader.

A write point is ``(phase, j)``: phase ``b`` is the write that consumes Phase-B step j's
transition (its input state is replay's state in front of step j); phase ``a`` is the write that
consumes the prelude's (Phase A's) transition j (its input state is the logged writer rolled
forward from its initial state through prelude transitions 0..j-1 with the stored replies:
:class:`statelab_seed003.train.data.Trajectory`). The writer's input state is forked and
``candidates`` states are sampled (the writer, SUMMARY's prompt or the job's ``form``, with
that many sampling seeds; 12 in the seed's A4).
Each candidate is scored two ways over the decisions of the next K Phase-B steps (the score's
look-ahead S_K, K in {1, 4, 12} in the seed: steps i = j+1, ..., j+K for phase ``b``;
i = 0, ..., K-1 for phase ``a``, whose next decisions are Phase B's first), each with a* from
the log:

- **recursive** (what DSSR trains on): the writer carries the candidate forward through the
  logged transitions (for a Phase-A point: the rest of the prelude, then Phase B), and at each
  decision the reader sees only the state it has become, as it would online;
- **window** (the fixed-context form hindsight methods use): the reader sees the candidate
  unchanged, followed by the raw steps logged since the write.

A score is the mean decision loss -log p(a*) in nats (lower is better). For a writer that drops
what a later decision needs, the two disagree: the window still shows the candidate's facts
after the writer would have lost them. Each candidate keeps its per-decision losses, so S_K for
every K up to the largest scored is a prefix mean of them (Figure 2 compares K = 1, 4, 12 from
one scoring). A candidate may also carry its **outcome**: the return of the episode continued
from it (:mod:`statelab_seed003.train.continuation`), which the OUTCOME writer is trained on.

Arms: ``main`` draws from every write point of the chosen phases; ``a4`` (seed, Appendix E's
amendment A4) keeps a post-reveal point (a Phase-A write after the cookbook's, or any Phase-B
write) only when its input state still holds a recipe directive, so keeping or dropping it is
a genuine choice among the candidates; points up to the reveal's write are kept as in ``main``.

Training material: round 0 distils the best candidate (SFT on the writer's prompt -> the
best state); rounds 1+ take best-vs-worst pairs whose recursive scores differ by at least
``gap`` nats (0.3 in the seed) for DPO. With ``by="outcome"`` (the OUTCOME writer) best and
worst are the highest and lowest outcome, and a pair needs returns that differ by more than 0
and by at least its ``gap``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from statelab.core import LLM, Message
from statelab.state.bounded import BoundedWriter, WrittenState
from statelab_seed003.train._points import (
    Losses,
    horizon_steps,
    prelude_after_point,
    start_step,
    window_view,
)
from statelab_seed003.train.data import Trajectory, decision_nll, reader_prompt

#: the seed's minimum score gap of a preference pair (nats)
GAP = 0.3
#: what a pair is chosen by: the recursive score (DSSR) or the continued episode's return
BY = ("recursive", "outcome")


def mean_within(losses: Losses, k: int) -> float:
    """S_K: the mean loss over the decisions within ``k`` steps of the write (NaN: none)."""
    got = [x for d, x in losses if d <= k]
    return sum(got) / len(got) if got else float("nan")


@dataclass(frozen=True)
class Candidate:
    """One candidate state, its scores at the training look-ahead (``recursive``,
    ``window``), its per-decision losses and, when measured, its outcome."""

    text: str
    state: Any
    recursive: float
    window: float
    rec_losses: Losses = ()
    win_losses: Losses = ()
    #: the return of the episode continued from this candidate (None: not measured)
    outcome: float | None = None

    def score(self, form: str, k: int) -> float:
        """S_K of ``form`` (``recursive`` or ``window``) from the per-decision losses."""
        return mean_within(self.rec_losses if form == "recursive" else self.win_losses, k)


@dataclass(frozen=True)
class WritePoint:
    """One scored write point: the writer's prompt there and its scored candidates."""

    run: str
    seed: int
    j: int
    prompt: list[Message]
    candidates: tuple[Candidate, ...]
    #: the decisions the scores average over
    decisions: int
    #: ``a`` (a Phase-A write) or ``b`` (a Phase-B write)
    phase: str = "b"
    #: the look-aheads each candidate's S_K is recorded for (the training K among them)
    ks: tuple[int, ...] = ()

    def best(self, by: str = "recursive") -> Candidate:
        if by == "outcome":
            return max(self.candidates, key=_outcome)
        return min(self.candidates, key=lambda c: c.recursive)

    def worst(self, by: str = "recursive") -> Candidate:
        if by == "outcome":
            return min(self.candidates, key=_outcome)
        return max(self.candidates, key=lambda c: c.recursive)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "seed": self.seed,
            "phase": self.phase,
            "j": self.j,
            "decisions": self.decisions,
            "ks": list(self.ks),
            "candidates": [_candidate_dict(c, self.ks) for c in self.candidates],
        }


def _outcome(c: Candidate) -> float:
    if c.outcome is None:
        raise ValueError("a candidate without an outcome (score the round with outcomes)")
    return c.outcome


def _r(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def _candidate_dict(c: Candidate, ks: tuple[int, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"text": c.text, "recursive": _r(c.recursive), "window": _r(c.window)}
    if ks:
        out["recursive_k"] = {str(k): _r(c.score("recursive", k)) for k in ks}
        out["window_k"] = {str(k): _r(c.score("window", k)) for k in ks}
    if c.outcome is not None:
        out["outcome"] = c.outcome
    return out


class At(NamedTuple):
    """A write point: ``phase`` ``a`` (prelude write ``j``) or ``b`` (Phase-B write ``j``)."""

    phase: str
    j: int


PHASES = ("a", "b")
ARMS = ("main", "a4")


def eligible_points(
    traj: Trajectory, phases: tuple[str, ...] = PHASES, horizon: int | None = None
) -> list[At]:
    """Every write point of the chosen phases with at least one decision after it (within
    ``horizon`` Phase-B steps when given), in episode order."""
    later = traj.decision_points()
    out: list[At] = []
    if "a" in phases and traj.prelude_states and _within(later, -1, horizon):
        out += [At("a", j) for j in range(len(traj.prelude))]
    if "b" in phases:
        out += [At("b", j) for j in range(len(traj.steps) - 1) if _within(later, j, horizon)]
    return out


def _within(later: list[int], j: int, horizon: int | None) -> bool:
    return any(j < k and (horizon is None or k <= j + horizon) for k in later)


def arm_points(traj: Trajectory, points: list[At], arm: str) -> list[At]:
    """The points an arm samples from: ``main`` all; ``a4`` drops the post-reveal points whose
    input state holds no recipe directive."""
    if arm not in ARMS:
        raise ValueError(f"arm {arm!r}: one of {', '.join(ARMS)}")
    if arm == "main":
        return list(points)
    return [p for p in points if not traj.post_reveal(*p) or traj.holds_directive(*p)]


def write_points(
    traj: Trajectory,
    n: int,
    rng: random.Random,
    *,
    phases: tuple[str, ...] = PHASES,
    arm: str = "main",
    horizon: int | None = None,
) -> list[At]:
    """Up to ``n`` write points of the arm (see :func:`eligible_points`, :func:`arm_points`),
    drawn without replacement, in episode order (Phase A first)."""
    pool = arm_points(traj, eligible_points(traj, phases, horizon), arm)
    return sorted(rng.sample(pool, min(n, len(pool))))


async def recursive_losses(
    traj: Trajectory,
    j: int,
    state: Any,
    writer: BoundedWriter,
    writer_llm: LLM,
    reader: LLM,
    horizon: int,
    phase: str = "b",
) -> Losses:
    """The reader's loss at each decision within ``horizon`` (K) steps after write point
    ``(phase, j)`` when ``state`` (the state written there) is carried forward by the writer
    through the logged transitions (a Phase-A point's: the rest of the prelude first), as
    (steps after the write, loss)."""
    ks = horizon_steps(traj, j, horizon, phase)
    losses = []
    if ks:
        for tr in prelude_after_point(traj, j, phase):
            state, _ = await writer.write(state, tr, writer_llm)
    s = start_step(phase, j)
    k_at = s + 1  # the state is the one in front of this decision
    for k in ks:
        while k_at < k:  # the writes between (logged steps without a decision included)
            state, _ = await writer.write(state, traj.steps[k_at].transition, writer_llm)
            k_at += 1
        d = traj.steps[k]
        msgs = reader_prompt(traj, writer.render(state), d.observation)
        assert d.a_star is not None
        losses.append((k - s, await decision_nll(reader, msgs, d.admissible, d.a_star)))
    return tuple(losses)


async def recursive_score(
    traj: Trajectory,
    j: int,
    state: Any,
    writer: BoundedWriter,
    writer_llm: LLM,
    reader: LLM,
    horizon: int,
    phase: str = "b",
) -> float:
    """S_K, recursive: the mean of :func:`recursive_losses` (NaN: no decision within K)."""
    got = await recursive_losses(traj, j, state, writer, writer_llm, reader, horizon, phase)
    return mean_within(got, horizon)


async def window_losses(
    traj: Trajectory,
    j: int,
    state: Any,
    writer: BoundedWriter,
    reader: LLM,
    horizon: int,
    phase: str = "b",
) -> Losses:
    """The reader's loss at the same decisions with the candidate as a fixed context plus the
    raw steps since (no rewriting), as (steps after the write, loss)."""
    rendered = writer.render(state)
    s = start_step(phase, j)
    losses = []
    for k in horizon_steps(traj, j, horizon, phase):
        d = traj.steps[k]
        msgs = reader_prompt(traj, window_view(traj, rendered, j, k, phase), d.observation)
        assert d.a_star is not None
        losses.append((k - s, await decision_nll(reader, msgs, d.admissible, d.a_star)))
    return tuple(losses)


async def window_score(
    traj: Trajectory,
    j: int,
    state: Any,
    writer: BoundedWriter,
    reader: LLM,
    horizon: int,
    phase: str = "b",
) -> float:
    """S_K, window: the mean of :func:`window_losses` (NaN: no decision within K)."""
    return mean_within(await window_losses(traj, j, state, writer, reader, horizon, phase), horizon)


def candidate_writers(writer: BoundedWriter, n: int, temperature: float) -> list[BoundedWriter]:
    """``n`` copies of ``writer`` differing only in their sampling seed (the fork)."""
    out = []
    for i in range(n):
        seed = writer.seed * 1000 + i
        w = BoundedWriter(writer.render_obs, writer.form, writer.budget, seed=seed)
        w.params = replace(writer.params, temperature=temperature)
        w.spelling = writer.spelling
        out.append(w)
    return out


#: the return of the episode continued from a candidate state (see :mod:`.continuation`)
Outcome = Callable[[Any], Awaitable[float]]


async def score_write_point(
    traj: Trajectory,
    j: int,
    writer: BoundedWriter,
    writer_llm: LLM,
    reader: LLM,
    *,
    candidates: int,
    k: int,
    ks: tuple[int, ...] = (),
    temperature: float = 0.8,
    phase: str = "b",
    outcome: Outcome | None = None,
    batched: bool = True,
) -> WritePoint:
    """Fork the input state at write point ``(phase, j)``, sample ``candidates`` states, score
    each over the look-ahead ``k`` (per-decision losses kept up to the largest of ``k`` and
    ``ks``) and, with ``outcome``, by the return of the episode continued from it.

    ``batched``: the candidates' writes, their roll-forwards (step by step) and all reader
    scorings go to the models as batches (:mod:`statelab_seed003.train._dssr_batch`); the same
    requests as one call after another (``batched=False``), so the same point."""
    state_in = traj.input_state(phase, j)
    tr = traj.transition(phase, j)
    if not isinstance(state_in, WrittenState):
        raise TypeError(f"write point {phase}{j}: the logged state is not a written state")
    prompt = writer.messages(state_in, tr)
    reach = max((k, *ks))
    forks = candidate_writers(writer, candidates, temperature)
    scored = None
    if batched:
        from statelab_seed003.train._dssr_batch import score_forks

        scored = await score_forks(traj, j, state_in, tr, forks, writer, writer_llm, reader,
                                   reach, phase)  # fmt: skip
    cands = []
    for i, w in enumerate(forks):
        if scored is not None:
            new, rec, win = scored[i]
        else:  # one call after another, in the order the unbatched path always made them
            new, _ = await w.write(state_in, tr, writer_llm)
            rec = await recursive_losses(traj, j, new, writer, writer_llm, reader, reach, phase)
            win = await window_losses(traj, j, new, writer, reader, reach, phase)
        ret = await outcome(new) if outcome is not None else None
        cands.append(
            Candidate(new.text, new, mean_within(rec, k), mean_within(win, k), rec, win, ret)
        )
    n = len(horizon_steps(traj, j, k, phase))
    looks = tuple(sorted({k, *ks}))
    return WritePoint(traj.run, traj.seed, j, prompt, tuple(cands), n, phase, looks)


async def score_write_points(
    jobs: Sequence[Callable[[], Awaitable[WritePoint]]], concurrency: int = 1
) -> list[WritePoint]:
    """Every job's write point, at most ``concurrency`` of them in flight at once (the
    points are independent), in the jobs' order."""
    import asyncio

    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(job: Callable[[], Awaitable[WritePoint]]) -> WritePoint:
        async with gate:
            return await job()

    return list(await asyncio.gather(*(one(job) for job in jobs)))


def sft_examples(
    points: list[WritePoint], by: str = "recursive"
) -> list[tuple[list[Message], str]]:
    """Round 0: the writer's prompt -> its best candidate (by the recursive score, or by
    outcome)."""
    return [(p.prompt, p.best(by).text) for p in points if p.candidates and p.best(by).text]


def preference_pairs(
    points: list[WritePoint], gap: float = GAP, by: str = "recursive"
) -> list[tuple[list[Message], str, str]]:
    """Rounds 1+: (prompt, best, worst) where best and worst differ by at least ``gap`` (and
    by more than 0): nats of recursive score, or return (``by="outcome"``); the two texts
    differ."""
    if by not in BY:
        raise ValueError(f"by {by!r}: one of {', '.join(BY)}")
    out = []
    for p in points:
        if len(p.candidates) < 2:
            continue
        best, worst = p.best(by), p.worst(by)
        if by == "outcome":
            margin = _outcome(best) - _outcome(worst)
        else:
            margin = worst.recursive - best.recursive
        if margin > 0 and margin >= gap and best.text != worst.text:
            out.append((p.prompt, best.text, worst.text))
    return out
