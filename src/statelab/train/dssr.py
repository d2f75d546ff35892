"""DSSR (seed 003, section 4): candidate states at a write point, scored by the frozen reader.

At a write point j of a logged episode (the write that consumes step j's transition), the
writer's input state is forked and K candidate states are sampled (K in {1, 4, 12}: the
summary writer with K sampling seeds). Each candidate is scored two ways over the next
``horizon`` decisions of the episode (k = j+1, ..., j+horizon, each with a* from the log):

- **recursive** (what DSSR trains on): the writer carries the candidate forward through the
  logged transitions, and at each decision the reader sees only the state it has become, as
  it would online;
- **window** (the fixed-context form hindsight methods use): the reader sees the candidate
  unchanged, followed by the raw steps logged since the write.

A score is the mean decision loss -log p(a*) in nats (lower is better). For a writer that drops
what a later decision needs, the two disagree: the window still shows the candidate's facts
after the writer would have lost them.

Training material: round 0 distils the best candidate (SFT on the writer's prompt -> the
best state); rounds 1+ take best-vs-worst pairs whose recursive scores differ by at least
``gap`` nats (0.3 in the seed) for DPO.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from statelab.core import LLM, Message
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

    def best(self) -> Candidate:
        return min(self.candidates, key=lambda c: c.recursive)

    def worst(self) -> Candidate:
        return max(self.candidates, key=lambda c: c.recursive)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "seed": self.seed,
            "j": self.j,
            "decisions": self.decisions,
            "candidates": [
                {"text": c.text, "recursive": round(c.recursive, 6), "window": round(c.window, 6)}
                for c in self.candidates
            ],
        }


def write_points(traj: Trajectory, n: int, rng: random.Random) -> list[int]:
    """Up to ``n`` write points j (Phase-B steps followed by at least one decision), drawn
    without replacement, in order."""
    later = set(traj.decision_points())
    js = [j for j in range(len(traj.steps) - 1) if any(k > j for k in later)]
    return sorted(rng.sample(js, min(n, len(js))))


def _horizon(traj: Trajectory, j: int, horizon: int) -> list[int]:
    points = traj.decision_points()
    return [k for k in points if j < k <= j + horizon]


async def recursive_score(
    traj: Trajectory,
    j: int,
    state: Any,
    writer: BoundedWriter,
    writer_llm: LLM,
    reader: LLM,
    horizon: int,
) -> float:
    """Mean reader loss over the decisions after write point ``j`` when ``state`` (the state
    written there) is carried forward by the writer through the logged transitions."""
    ks = _horizon(traj, j, horizon)
    losses = []
    k_at = j + 1  # the state is the one in front of decision j+1
    for k in ks:
        while k_at < k:  # the writes between (logged steps without a decision included)
            state, _ = await writer.write(state, traj.steps[k_at].transition, writer_llm)
            k_at += 1
        d = traj.steps[k]
        msgs = reader_prompt(traj, writer.render(state), d.observation)
        assert d.a_star is not None
        losses.append(await decision_nll(reader, msgs, d.admissible, d.a_star))
    return sum(losses) / len(losses) if losses else float("nan")


def window_view(traj: Trajectory, rendered: str, j: int, k: int) -> str:
    """The candidate unchanged, then the raw steps logged after it and before decision k."""
    raw = [
        f"> {traj.steps[i].action}\n{traj.render_obs(traj.steps[i].transition.observation)}"
        for i in range(j + 1, k)
    ]
    if not raw:
        return rendered
    return f"{rendered}\n\nSteps since:\n" + "\n".join(raw)


async def window_score(
    traj: Trajectory, j: int, state: Any, writer: BoundedWriter, reader: LLM, horizon: int
) -> float:
    """Mean reader loss over the same decisions with the candidate as a fixed context plus
    the raw steps since (no rewriting)."""
    rendered = writer.render(state)
    losses = []
    for k in _horizon(traj, j, horizon):
        d = traj.steps[k]
        msgs = reader_prompt(traj, window_view(traj, rendered, j, k), d.observation)
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
) -> WritePoint:
    """Fork the input state at write point ``j``, sample ``k`` candidates, score each."""
    d = traj.steps[j]
    state_in = d.state
    if not isinstance(state_in, WrittenState):
        raise TypeError(f"write point {j}: the logged state is not a written state")
    prompt = writer.messages(state_in, d.transition)
    cands = []
    for w in candidate_writers(writer, k, temperature):
        new, _ = await w.write(state_in, d.transition, writer_llm)
        rec = await recursive_score(traj, j, new, writer, writer_llm, reader, horizon)
        win = await window_score(traj, j, new, writer, reader, horizon)
        cands.append(Candidate(new.text, new, rec, win))
    return WritePoint(
        traj.run, traj.seed, j, prompt, tuple(cands), len(_horizon(traj, j, horizon))
    )


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


