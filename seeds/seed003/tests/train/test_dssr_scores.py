"""DSSR's scores on a constructed episode with known answers (no torch: fake models).

The reader knows a* exactly when its prompt names the carrot (loss ~0), and is uniform over
the two commands otherwise (loss ln 2). The candidate state holds the carrot; the logged raw
steps never mention it. A lossy writer drops everything at its first rewrite, so the recursive
score sees the carrot at the first decision only, while the window score (the candidate as a
fixed context) sees it at every decision."""

from __future__ import annotations

import asyncio
import math
from dataclasses import replace

import pytest

from statelab.core import LLM, Completion, GenParams, Message, Observation, Transition, Usage
from statelab.state.bounded import BoundedWriter, WrittenState
from statelab_seed003.train._points import window_view
from statelab_seed003.train.data import Decision, Trajectory
from statelab_seed003.train.dssr import (
    At,
    Candidate,
    WritePoint,
    arm_points,
    eligible_points,
    preference_pairs,
    recursive_score,
    score_write_point,
    window_score,
    write_points,
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


def state(text: str) -> WrittenState:
    return WrittenState("Cook a meal.", text)


#: Phase A of the constructed episode: explore, the reveal (prelude index 1), one filler step
PRELUDE = [("go east", "Kitchen. A cookbook."), ("examine cookbook", "You read it."),
           ("go west", "Corridor.")]  # fmt: skip


def with_prelude(
    prelude_texts: tuple[str, ...] = ("", "Nothing yet.", "Nothing yet."),
    step_texts: tuple[str, ...] | None = None,
) -> Trajectory:
    """The constructed episode with a Phase A of three writes (the reveal is the second) and
    the given input states; the recipe's directives are "slice the carrot", "fry the carrot"."""
    traj = trajectory()
    traj.prelude = [Transition(0, a, a, 0.0, obs(o), False, False) for a, o in PRELUDE]
    traj.prelude_states = [state(t) for t in prelude_texts]
    traj.reveal = 1
    traj.directives = ("slice the carrot", "fry the carrot")
    if step_texts is not None:
        traj.steps = [
            replace(d, state=state(x)) for d, x in zip(traj.steps, step_texts, strict=True)
        ]
    return traj


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
    point = asyncio.run(score_write_point(traj, 0, writer, fake, Reader(), candidates=4, k=2))
    assert len(point.candidates) == 4 and point.decisions == 2
    assert point.prompt == writer.messages(traj.steps[0].state, traj.steps[0].transition)
    # four forks, four sampling seeds (the forks' writes go as one batch, then the
    # roll-forward writes: one per candidate)
    first = fake.seeds[:4]
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


# -- Phase-A write points ------------------------------------------------------------------------


def test_a_phase_a_point_is_scored_through_the_rest_of_the_prelude_then_phase_b():
    traj = with_prelude()
    writer = BoundedWriter(lambda o: o.text, "summary", 64)
    cand = state("Recipe: carrot")
    lossy, keep = Writer(lossy=True), Writer(lossy=False)

    def rec(j: int, w: Writer) -> float:
        return asyncio.run(recursive_score(traj, j, cand, writer, w, Reader(), 2, phase="a"))

    # a0: two prelude writes before decision 0 (the lossy writer drops the carrot at the
    # first), so decisions 0 and 1 are both at ln 2; it makes 2 + 1 writes
    assert rec(0, lossy) == pytest.approx(math.log(2), abs=1e-6)
    # a2 (the last prelude write): decision 0 sees the candidate itself, decision 1 a rewrite
    assert rec(2, lossy) == pytest.approx(math.log(2) / 2, abs=1e-6)
    assert rec(0, keep) == pytest.approx(0.0, abs=1e-6)
    # the window form keeps the candidate: 0 at both decisions, with the prelude's raw steps
    win = asyncio.run(window_score(traj, 0, cand, writer, Reader(), 2, phase="a"))
    assert win == pytest.approx(0.0, abs=1e-6)
    view = window_view(traj, "S", 1, 1, phase="a")
    assert view == "S\n\nSteps since:\n> go west\nCorridor.\n> go north\nRoom 1."


def test_a_phase_a_point_forks_the_rolled_input_state_and_records_its_phase():
    traj = with_prelude(("", "Nothing yet.", "Recipe: slice the carrot"))
    writer = BoundedWriter(lambda o: o.text, "summary", 64)
    fake = Writer(lossy=False, by_seed=True)
    point = asyncio.run(
        score_write_point(traj, 2, writer, fake, Reader(), candidates=4, k=2, phase="a")
    )
    assert (point.phase, point.j, point.decisions) == ("a", 2, 2)
    assert point.prompt == writer.messages(traj.prelude_states[2], traj.prelude[2])
    assert "Recipe: slice the carrot" in point.prompt[-1]["content"]
    assert "Corridor." in point.prompt[-1]["content"]  # it consumes the filler step
    # as at a Phase-B point: the carrot candidates are best (ln 2 / 2), the others ln 2
    assert point.best().text == "Recipe: carrot"
    assert point.best().recursive == pytest.approx(math.log(2) / 2, abs=1e-6)
    assert point.worst().recursive == pytest.approx(math.log(2), abs=1e-6)
    assert point.to_dict()["phase"] == "a"
    b = asyncio.run(score_write_point(traj, 0, writer, fake, Reader(), candidates=1, k=2))
    assert b.phase == "b" and b.to_dict()["phase"] == "b"


def test_write_points_come_from_the_chosen_phases():
    traj = with_prelude()
    a = [At("a", 0), At("a", 1), At("a", 2)]
    b = [At("b", 0), At("b", 1), At("b", 2)]  # step 3 is the last: nothing after it
    assert eligible_points(traj) == a + b
    assert eligible_points(traj, ("b",)) == b
    assert eligible_points(traj, ("a",)) == a
    # within a horizon of 1 step every point still has its next decision
    assert eligible_points(traj, horizon=1) == a + b
    # no rolled prelude (a trajectory without one): Phase B only
    assert eligible_points(trajectory()) == b
    import random

    got = write_points(traj, 4, random.Random(0))
    assert len(got) == 4 and got == sorted(got) and set(got) <= set(a + b)
    assert write_points(traj, 10, random.Random(0), phases=("a",)) == a


def test_a4_keeps_exactly_the_post_reveal_points_whose_input_state_holds_a_directive():
    # inputs: a0, a1 (the reveal's write) are pre-reveal; a2 and b0..b2 post-reveal
    traj = with_prelude(
        ("", "Nothing yet.", "Recipe: SLICE  the\ncarrot, then fry it."),
        ("Fry the carrot.", "Went north.", "recipe: slice the carrot", "done"),
    )
    pool = eligible_points(traj)
    assert [traj.post_reveal(*p) for p in pool] == [False, False, True, True, True, True]
    assert [traj.holds_directive(*p) for p in pool] == [False, False, True, True, False, True]
    assert arm_points(traj, pool, "main") == pool
    assert arm_points(traj, pool, "a4") == [
        At("a", 0), At("a", 1), At("a", 2), At("b", 0), At("b", 2)
    ]  # fmt: skip
    import random

    drawn = write_points(traj, 10, random.Random(1), arm="a4")
    assert At("b", 1) not in drawn and len(drawn) == 5
    with pytest.raises(ValueError, match="arm"):
        arm_points(traj, pool, "a5")


def test_directives_are_the_directions_that_name_an_ingredient():
    from statelab_seed003.train.data import recipe_directives

    recipe = (
        "Recipe #1\nIngredients:\n  red potato\n  carrot\nDirections:\n  slice the red potato\n"
        "  fry the carrot\n  prepare meal\n"
    )
    assert recipe_directives(recipe) == ("slice the red potato", "fry the carrot")
    assert recipe_directives(None) == () and recipe_directives("no recipe") == ()


# -- K, the look-ahead, apart from the number of candidates ----------------------------------


def test_k_1_forms_pairs_when_there_are_several_candidates():
    traj = trajectory()
    writer = BoundedWriter(lambda o: o.text, "summary", 64)
    fake = Writer(lossy=False, by_seed=True)
    point = asyncio.run(
        score_write_point(traj, 0, writer, fake, Reader(), candidates=4, k=1, ks=(1, 2))
    )
    assert len(point.candidates) == 4 and point.decisions == 1 and point.ks == (1, 2)
    # S_1: the carrot candidates see it at their one decision (0), the others ln 2
    assert point.best().recursive == pytest.approx(0.0, abs=1e-6)
    assert point.worst().recursive == pytest.approx(math.log(2), abs=1e-6)
    assert preference_pairs([point]) == [(point.prompt, "Recipe: carrot", "nothing kept")]
    # S_2 recorded beside it: the roll-forward write (an odd seed for this fake) drops it
    best = point.best()
    assert best.score("recursive", 2) == pytest.approx(math.log(2) / 2, abs=1e-6)
    assert best.score("window", 2) == pytest.approx(0.0, abs=1e-6)
    row = point.to_dict()
    assert row["ks"] == [1, 2] and row["candidates"][0]["recursive_k"].keys() == {"1", "2"}


def test_an_outcome_scored_point_chooses_best_and_worst_by_return():
    traj = trajectory()
    writer = BoundedWriter(lambda o: o.text, "summary", 64)

    async def outcome(state) -> float:  # a known return: the state's length
        return float(len(state.text))

    point = asyncio.run(
        score_write_point(
            traj, 0, writer, Writer(lossy=False, by_seed=True), Reader(), candidates=3, k=1,
            outcome=outcome,
        )
    )  # fmt: skip
    assert [c.outcome for c in point.candidates] == [float(len(c.text)) for c in point.candidates]
    assert point.best("outcome").text == "Recipe: carrot"  # 14 characters > 12
    assert point.worst("outcome").text == "nothing kept"
    assert preference_pairs([point], 0.0, "outcome") == [
        (point.prompt, "Recipe: carrot", "nothing kept")
    ]
    assert preference_pairs([point], 2.0, "outcome") == [
        (point.prompt, "Recipe: carrot", "nothing kept")
    ]
    assert preference_pairs([point], 2.5, "outcome") == []  # a margin of 2 points
    tied = WritePoint("r", 0, 0, [], tuple(replace(c, outcome=1.0) for c in point.candidates), 1)
    assert preference_pairs([tied], 0.0, "outcome") == []  # equal returns: no pair
    assert point.to_dict()["candidates"][0]["outcome"] == point.candidates[0].outcome


def test_the_old_horizon_spelling_is_refused_in_one_line(tmp_path):
    from statelab.core import ConfigError
    from statelab_seed003.train._config import WriterConfig, load_config

    cfg = tmp_path / "w.yaml"
    cfg.write_text("name: w\nstore: s.sqlite\nreader: hf:x\nk: 4\nhorizon: 2\n")
    with pytest.raises(ConfigError, match=r"look-ahead is `k`.*`candidates`") as e:
        load_config(cfg, "writer")
    assert "\n" not in str(e.value)
    got = WriterConfig(name="w", store="s", reader="hf:x", k=1, candidates=3)
    assert (got.k, got.candidates, got.score, got.measures_outcomes()) == (1, 3, "recursive", False)
    out = WriterConfig(name="w", store="s", reader="hf:x", score="outcome")
    assert out.measures_outcomes() and out.pair_gap() == 0.0
