"""DSSR's scores on a constructed episode with known answers (no torch: fake models).

The reader knows a* exactly when its prompt names the carrot (loss ~0), and is uniform over
the two commands otherwise (loss ln 2). The candidate state holds the carrot; the logged raw
steps never mention it. A lossy writer drops everything at its first rewrite, so the recursive
score sees the carrot at the first decision only, while the window score (the candidate as a
fixed context) sees it at every decision."""

from __future__ import annotations

import asyncio
import math

import pytest

from statelab.core import LLM, Completion, GenParams, Message, Observation, Transition, Usage
from statelab.state.bounded import BoundedWriter, WrittenState
from statelab.train.data import Decision, Trajectory
from statelab.train.dssr import (
    Candidate,
    WritePoint,
    preference_pairs,
    recursive_score,
    score_write_point,
    window_score,
)

COMMANDS = ("go north", "take carrot")
A_STAR = "take carrot"


class Reader(LLM):
    model_id = "fake:reader"

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        raise AssertionError("the reader only scores")

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        knows = "carrot" in messages[-1]["content"].split("Commands:")[0]
        return [(0.0 if A_STAR in c else -60.0) if knows else 0.0 for c in continuations]


class Writer(LLM):
    """``lossy``: writes "nothing kept"; else copies the previous state. With ``by_seed``,
    the reply depends on the sampling seed (even: the carrot; odd: nothing)."""

    model_id = "fake:writer"

    def __init__(self, lossy: bool, by_seed: bool = False) -> None:
        self.lossy, self.by_seed = lossy, by_seed
        self.seeds: list[int | None] = []

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.seeds.append(params.seed)
        if self.by_seed:
            text = "Recipe: carrot" if (params.seed or 0) % 2 == 0 else "nothing kept"
        elif self.lossy:
            text = "nothing kept"
        else:
            text = messages[-1]["content"].split("Previous state:\n")[1].split("\n\nLast action")[0]
        return Completion(text, Usage(1, 1))


def obs(text: str) -> Observation:
    return Observation(text=text, facts=None, admissible=COMMANDS, goal="Cook a meal.")


def trajectory(n: int = 4) -> Trajectory:
    writer = BoundedWriter(lambda o: o.text, "summary", 64)
    steps = []
    for t in range(n):
        steps.append(
            Decision(
                t=t,
                observation=obs(f"Room {t}. You see a door."),
                state=WrittenState("Cook a meal.", "Nothing yet."),
                memory="",
                admissible=COMMANDS,
                action="go north",
                a_star=A_STAR,
                transition=Transition(t, "go north", "", 0.0, obs(f"Room {t + 1}."), False, False),
            )
        )
    return Trajectory("r", 0, "bounded:summary:64", "Cook.", lambda o: o.text, writer, [], steps)


def test_the_recursive_score_differs_from_the_window_score_for_a_lossy_writer():
    traj = trajectory()
    writer = BoundedWriter(lambda o: o.text, "summary", 64)
    cand = WrittenState("Cook a meal.", "Recipe: carrot")
    rec = asyncio.run(recursive_score(traj, 0, cand, writer, Writer(lossy=True), Reader(), 3))
    win = asyncio.run(window_score(traj, 0, cand, writer, Reader(), 3))
    # decisions 1, 2, 3: the lossy writer keeps the carrot for decision 1 only
    assert rec == pytest.approx(2 * math.log(2) / 3, abs=1e-6)
    assert win == pytest.approx(0.0, abs=1e-6)
    # a writer that keeps its state: the two forms agree
    keep = asyncio.run(recursive_score(traj, 0, cand, writer, Writer(lossy=False), Reader(), 3))
    assert keep == pytest.approx(win, abs=1e-6)


def test_candidates_are_forked_and_scored_and_the_best_is_the_one_that_kept_the_fact():
    traj = trajectory()
    writer = BoundedWriter(lambda o: o.text, "summary", 64)
    fake = Writer(lossy=False, by_seed=True)
    point = asyncio.run(score_write_point(traj, 0, writer, fake, Reader(), k=4, horizon=2))
    assert len(point.candidates) == 4 and point.decisions == 2
    assert point.prompt == writer.messages(traj.steps[0].state, traj.steps[0].transition)
    # four forks, four sampling seeds (then the roll-forward writes: one per candidate)
    first = fake.seeds[::2]
    assert len(set(first)) == 4
    texts = [c.text for c in point.candidates]
    assert texts == ["Recipe: carrot" if s % 2 == 0 else "nothing kept" for s in first]
    assert set(texts) == {"Recipe: carrot", "nothing kept"}
    # the carrot candidates see the carrot at decision 1 (the roll-forward write then decides
    # decision 2: this fake's reply for that seed drops it), the others never
    assert point.best().text == "Recipe: carrot"
    assert point.best().recursive == pytest.approx(math.log(2) / 2, abs=1e-6)
    assert point.worst().recursive == pytest.approx(math.log(2), abs=1e-6)
    assert preference_pairs([point]) == [(point.prompt, "Recipe: carrot", "nothing kept")]


def test_preference_pairs_respect_the_gap():
    def point(best: float, worst: float, same: bool = False) -> WritePoint:
        c = (Candidate("a", None, best, 0.0), Candidate("a" if same else "b", None, worst, 0.0))
        return WritePoint("r", 0, 0, [{"role": "user", "content": f"{best} {worst}"}], c, 1)

    points = [point(1.0, 1.29), point(1.0, 1.3), point(0.2, 2.0), point(0.0, 1.0, same=True)]
    pairs = preference_pairs(points)
    assert [p[0] for p in pairs] == [points[1].prompt, points[2].prompt]
    assert all(c == "a" and r == "b" for _, c, r in pairs)
    assert preference_pairs(points, gap=1.0) == [(points[2].prompt, "a", "b")]
    single = WritePoint("r", 0, 0, [], (Candidate("a", None, 0.0, 0.0),), 1)
    assert preference_pairs([single]) == []  # K = 1: no pair
