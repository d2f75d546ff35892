"""DSSR (seed 003, section 4): candidate states at a write point, scored by the frozen reader.

A write point is ``(phase, j)``: phase ``b`` is the write that consumes Phase-B step j's
transition (its input state is replay's state in front of step j); phase ``a`` is the write that
consumes the prelude's (Phase A's) transition j (its input state is the logged writer rolled
forward from its initial state through prelude transitions 0..j-1 with the stored replies:
:class:`statelab.train.data.Trajectory`). The writer's input state is forked and K candidate
states are sampled (K in {1, 4, 12}: the summary writer with K sampling seeds). Each candidate
is scored two ways over the next ``horizon`` Phase-B steps' decisions (k = j+1, ..., j+horizon
for phase ``b``; k = 0, ..., horizon-1 for phase ``a``, whose next decisions are Phase B's
first), each with a* from the log:

- **recursive** (what DSSR trains on): the writer carries the candidate forward through the
  logged transitions (for a Phase-A point: the rest of the prelude, then Phase B), and at each
  decision the reader sees only the state it has become, as it would online;
- **window** (the fixed-context form hindsight methods use): the reader sees the candidate
  unchanged, followed by the raw steps logged since the write.

A score is the mean decision loss -log p(a*) in nats (lower is better). For a writer that drops
what a later decision needs, the two disagree: the window still shows the candidate's facts
after the writer would have lost them.

Arms: ``main`` draws from every write point of the chosen phases; ``a4`` (seed, Appendix E's
amendment A4) keeps a post-reveal point (a Phase-A write after the cookbook's, or any Phase-B
write) only when its input state still holds a recipe directive, so keeping or dropping it is
a genuine choice among the candidates; points up to the reveal's write are kept as in ``main``.

Training material: round 0 distils the best candidate (SFT on the writer's prompt -> the
best state); rounds 1+ take best-vs-worst pairs whose recursive scores differ by at least
``gap`` nats (0.3 in the seed) for DPO.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from statelab.core import LLM, Message, Transition
from statelab.state.bounded import BoundedWriter, WrittenState
from statelab.train.data import Trajectory, decision_nll, reader_prompt

#: the seed's minimum score gap of a preference pair (nats)
GAP = 0.3


@dataclass(frozen=True)
class Candidate:
    text: str
    state: Any
    recursive: float
    window: float


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

    def best(self) -> Candidate:
        return min(self.candidates, key=lambda c: c.recursive)

    def worst(self) -> Candidate:
        return max(self.candidates, key=lambda c: c.recursive)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "seed": self.seed,
            "phase": self.phase,
            "j": self.j,
            "decisions": self.decisions,
            "candidates": [
                {"text": c.text, "recursive": round(c.recursive, 6), "window": round(c.window, 6)}
                for c in self.candidates
            ],
        }


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


def _start(phase: str, j: int) -> int:
    """The Phase-B step index the write at ``(phase, j)`` stands after (-1: before Phase B)."""
    return -1 if phase == "a" else j


def _horizon(traj: Trajectory, j: int, horizon: int, phase: str = "b") -> list[int]:
    points = traj.decision_points()
    s = _start(phase, j)
    return [k for k in points if s < k <= s + horizon]


def _prelude_after(traj: Trajectory, j: int, phase: str) -> list[Transition]:
    return list(traj.prelude[j + 1 :]) if phase == "a" else []


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
    """Mean reader loss over the decisions after write point ``(phase, j)`` when ``state``
    (the state written there) is carried forward by the writer through the logged transitions
    (a Phase-A point's: the rest of the prelude first)."""
    ks = _horizon(traj, j, horizon, phase)
    losses = []
    if ks:
        for tr in _prelude_after(traj, j, phase):
            state, _ = await writer.write(state, tr, writer_llm)
    k_at = _start(phase, j) + 1  # the state is the one in front of this decision
    for k in ks:
        while k_at < k:  # the writes between (logged steps without a decision included)
            state, _ = await writer.write(state, traj.steps[k_at].transition, writer_llm)
            k_at += 1
        d = traj.steps[k]
        msgs = reader_prompt(traj, writer.render(state), d.observation)
        assert d.a_star is not None
        losses.append(await decision_nll(reader, msgs, d.admissible, d.a_star))
    return sum(losses) / len(losses) if losses else float("nan")


def window_view(traj: Trajectory, rendered: str, j: int, k: int, phase: str = "b") -> str:
    """The candidate unchanged, then the raw steps logged after it and before decision k."""
    trs = _prelude_after(traj, j, phase)
    trs += [traj.steps[i].transition for i in range(_start(phase, j) + 1, k)]
    raw = [f"> {tr.action}\n{traj.render_obs(tr.observation)}" for tr in trs]
    if not raw:
        return rendered
    return f"{rendered}\n\nSteps since:\n" + "\n".join(raw)


async def window_score(
    traj: Trajectory,
    j: int,
    state: Any,
    writer: BoundedWriter,
    reader: LLM,
    horizon: int,
    phase: str = "b",
) -> float:
    """Mean reader loss over the same decisions with the candidate as a fixed context plus
    the raw steps since (no rewriting)."""
    rendered = writer.render(state)
    losses = []
    for k in _horizon(traj, j, horizon, phase):
        d = traj.steps[k]
        msgs = reader_prompt(traj, window_view(traj, rendered, j, k, phase), d.observation)
        assert d.a_star is not None
        losses.append(await decision_nll(reader, msgs, d.admissible, d.a_star))
    return sum(losses) / len(losses) if losses else float("nan")


def candidate_writers(writer: BoundedWriter, k: int, temperature: float) -> list[BoundedWriter]:
    """K copies of ``writer`` differing only in their sampling seed (the fork)."""
    out = []
    for i in range(k):
        seed = writer.seed * 1000 + i
        w = BoundedWriter(writer.render_obs, writer.form, writer.budget, seed=seed)
        w.params = replace(writer.params, temperature=temperature)
        w.spelling = writer.spelling
        out.append(w)
    return out


async def score_write_point(
    traj: Trajectory,
    j: int,
    writer: BoundedWriter,
    writer_llm: LLM,
    reader: LLM,
    *,
    k: int,
    horizon: int,
    temperature: float = 0.8,
    phase: str = "b",
) -> WritePoint:
    """Fork the input state at write point ``(phase, j)``, sample ``k`` candidates, score
    each."""
    state_in = traj.input_state(phase, j)
    tr = traj.transition(phase, j)
    if not isinstance(state_in, WrittenState):
        raise TypeError(f"write point {phase}{j}: the logged state is not a written state")
    prompt = writer.messages(state_in, tr)
    cands = []
    for w in candidate_writers(writer, k, temperature):
        new, _ = await w.write(state_in, tr, writer_llm)
        rec = await recursive_score(traj, j, new, writer, writer_llm, reader, horizon, phase)
        win = await window_score(traj, j, new, writer, reader, horizon, phase)
        cands.append(Candidate(new.text, new, rec, win))
    n = len(_horizon(traj, j, horizon, phase))
    return WritePoint(traj.run, traj.seed, j, prompt, tuple(cands), n, phase)


def sft_examples(points: list[WritePoint]) -> list[tuple[list[Message], str]]:
    """Round 0: the writer's prompt -> its best candidate (by the recursive score)."""
    return [(p.prompt, p.best().text) for p in points if p.candidates and p.best().text]


def preference_pairs(
    points: list[WritePoint], gap: float = GAP
) -> list[tuple[list[Message], str, str]]:
    """Rounds 1+: (prompt, best, worst) where the worst scores at least ``gap`` nats above
    the best by the recursive score (and the two texts differ)."""
    out = []
    for p in points:
        if len(p.candidates) < 2:
            continue
        best, worst = p.best(), p.worst()
        if worst.recursive - best.recursive >= gap and best.text != worst.text:
            out.append((p.prompt, best.text, worst.text))
    return out


