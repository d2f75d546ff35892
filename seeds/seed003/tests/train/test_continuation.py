"""Episode continuations with a known answer (no torch: a constructed deterministic model).

The continuation of the state the logged writer wrote at a write point, with the run's own
models, must be the logged episode itself: the same actions, observations and return. Checked
on the cooking env (Phase A played in the reset, Phase-A and Phase-B write points) and on
hanoi (no prelude)."""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import replace

import pytest

from statelab.core import LLM, Completion, GenParams

SUMMARY = "bounded:summary:64"


class Model(LLM):
    """A deterministic writer and reader: the writer's reply and the reader's scores are
    functions of the prompt (and the writer's sampling seed), so the state steers the reader."""

    model_id = "constructed"

    async def complete(self, messages, params: GenParams) -> Completion:
        body = messages[-1]["content"]
        obs = body.split("New observation:\n")[-1].split("\n")[0]
        return Completion(f"Saw: {obs[:40]} #{zlib.crc32(body.encode()) % 7} s{params.seed % 5}")

    async def score(self, messages, continuations):
        text = "".join(m["content"] for m in messages)
        return [-float(zlib.crc32((text + c).encode()) % 97) for c in continuations]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _store(tmp_path, env: str, seeds: list[int], max_steps: int):
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    model = Model()
    exp = parse_experiment(
        {
            "name": "c", "model": "scripted:unused", "seeds": seeds,
            "grid": {"env": [env], "agent": ["reader"], "history": [SUMMARY]},
            "out": str(tmp_path / "results"), "cache": None, "max_steps": max_steps,
            "expert": False, "random": False,
        }
    )  # fmt: skip
    assert run_sync(exp, progress=None, llm_factory=lambda s: model).failed == 0
    return exp.out_dir / "store.sqlite", model


def _logged(path, traj):
    from statelab.run.store import Store

    st = Store(path, readonly=True)
    try:
        (ep,) = st.rows("episodes", ["reward", "success"], {"run": traj.run, "seed": traj.seed})
    finally:
        st.close()
    actions = tuple(d.action for d in traj.steps)
    observations = tuple(d.transition.observation.text for d in traj.steps)
    rewards = tuple(d.transition.reward for d in traj.steps)
    return actions, observations, rewards, float(ep["reward"]), bool(ep["success"])


def _continue(traj, phase, j, state, model, steps=None):
    from statelab_seed003.train.continuation import continue_episode

    return asyncio.run(
        continue_episode(traj, phase, j, state, traj.memory, model, model, steps=steps)
    )


def _check_every_point_reproduces(path, model, traj):
    actions, observations, rewards, ret, success = _logged(path, traj)
    n = len(traj.steps)
    for j in range(n - 1):  # the state written at b<j> is the one in front of step j + 1
        got = _continue(traj, "b", j, traj.steps[j + 1].state, model)
        assert (got.actions, got.observations, got.rewards) == (actions, observations, rewards)
        assert got.ret == pytest.approx(ret) and got.success == success
        assert got.continued == n - (j + 1) and got.ended
    return actions, ret


@pytest.fixture(scope="module")
def cooking(tmp_path_factory):
    pytest.importorskip("textworld")
    from statelab_seed003.train.data import trajectories

    path, model = _store(tmp_path_factory.mktemp("cont"), "cooking:lag=2", [1], 4)
    (traj,) = list(trajectories(path, histories=[SUMMARY]))
    return path, model, traj


def test_a_forked_cooking_episode_continued_from_the_logged_state_is_the_logged_episode(cooking):
    path, model, traj = cooking
    _check_every_point_reproduces(path, model, traj)


def test_a_phase_a_fork_carries_the_candidate_through_the_rest_of_the_prelude(cooking):
    path, model, traj = cooking
    actions, observations, _, ret, _ = _logged(path, traj)
    n = len(traj.prelude)
    states = [*traj.prelude_states[1:], traj.steps[0].state]  # the output of prelude write j
    for j in sorted({0, traj.reveal, n - 1}):
        got = _continue(traj, "a", j, states[j], model)
        assert (got.actions, got.observations) == (actions, observations)
        assert got.ret == pytest.approx(ret) and got.continued == len(traj.steps)


def test_the_horizon_cuts_the_continuation_and_another_state_changes_it(cooking):
    path, model, traj = cooking
    actions, _, rewards, _, _ = _logged(path, traj)
    got = _continue(traj, "b", 0, traj.steps[1].state, model, steps=1)
    assert got.actions == actions[:2] and got.continued == 1
    assert got.ret == pytest.approx(sum(rewards[:2]))
    assert not got.ended  # cut by the horizon, not ended by the env (max_steps is 4)
    # other states at the same point: the reader sees them, so its decisions differ here (the
    # constructed reader's scores are hashes of its prompt: one other state may still happen to
    # lead to the logged choices, so several are tried and one must differ)
    alts = [
        _continue(traj, "b", 0, replace(traj.steps[1].state, text=f"Recipe: nothing {i}."), model)
        for i in range(4)
    ]
    assert all(alt.actions[:1] == actions[:1] for alt in alts)
    assert any(alt.actions[1:] != actions[1:] for alt in alts)


def test_a_fork_that_does_not_replay_the_log_is_refused(cooking):
    from statelab.run.replay import ReplayMismatch

    _, model, traj = cooking
    steps = list(traj.steps)
    bad = replace(steps[0].transition, observation=replace(steps[0].observation, text="elsewhere"))
    steps[0] = replace(steps[0], transition=bad)
    forged = replace(traj, steps=steps)
    with pytest.raises(ReplayMismatch, match="step 0"):
        _continue(forged, "b", 1, traj.steps[2].state, model)
    prelude = [replace(traj.prelude[0], action="jump"), *traj.prelude[1:]]
    with pytest.raises(ReplayMismatch, match="prelude"):
        _continue(replace(traj, prelude=prelude), "b", 0, traj.steps[1].state, model)


def test_continuations_are_generic_a_hanoi_episode_without_a_prelude(tmp_path):
    from statelab_seed003.train.data import trajectories

    path, model = _store(tmp_path, "hanoi", [0, 1], 5)
    got = list(trajectories(path, histories=[SUMMARY]))
    assert len(got) == 2 and not got[0].prelude
    for traj in got:
        _check_every_point_reproduces(path, model, traj)


ONION = "take white onion from fridge"  # +1 in train game 4 (F' = 0; Phase A opens with look)


class Steered(LLM):
    """The reader takes the onion when its state says so, else looks; the writer writes
    "take white onion" for an even sampling seed (``parity``) or always "look around"."""

    model_id = "steered"

    def __init__(self, parity: bool) -> None:
        self.parity = parity

    async def complete(self, messages, params: GenParams) -> Completion:
        onion = self.parity and params.seed % 2 == 0
        return Completion("take white onion" if onion else "look around")

    async def score(self, messages, continuations):
        state = messages[-1]["content"].split("Current observation:")[0]
        want = ONION if "take white onion" in state else "look"
        return [0.0 if c.endswith(f". {want}") else -5.0 for c in continuations]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


@pytest.fixture(scope="module")
def onion(tmp_path_factory):
    """A logged episode of game 4 that never took the onion (the writer only looks)."""
    pytest.importorskip("textworld")
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync
    from statelab_seed003.train.data import trajectories

    exp = parse_experiment(
        {
            "name": "o", "model": "scripted:unused", "seeds": [4],
            "grid": {"env": ["cooking:lag=0"], "agent": ["reader"], "history": [SUMMARY]},
            "out": str(tmp_path_factory.mktemp("onion") / "results"), "cache": None,
            "max_steps": 3, "expert": False, "random": False,
        }
    )  # fmt: skip
    model = Steered(parity=False)
    assert run_sync(exp, progress=None, llm_factory=lambda s: model).failed == 0
    path = exp.out_dir / "store.sqlite"
    (traj,) = list(trajectories(path, histories=[SUMMARY]))
    assert ONION not in [d.action for d in traj.steps]
    return path, traj


def test_the_outcome_writer_scores_by_continuations_and_pairs_by_return(
    onion, tmp_path, monkeypatch
):
    """``score: outcome`` end to end with the trainers replaced (no torch): every candidate's
    outcome is the return of its continuation (recomputed here), Figure 2 is written from the
    stored rows, and the DPO pairs are the best-vs-worst by return."""
    import json
    from pathlib import Path

    import statelab.llm
    from statelab.state.bounded import BoundedWriter
    from statelab_seed003.analysis.fig2 import figure2
    from statelab_seed003.train import pipeline
    from statelab_seed003.train._config import WriterConfig
    from statelab_seed003.train.continuation import continue_episode
    from statelab_seed003.train.trainers import TrainResult

    path, traj = onion
    model = Steered(parity=True)
    monkeypatch.setattr(statelab.llm, "make_llm", lambda spec: model)
    pairs_seen: list = []

    def fake_sft(examples, out, **kw):
        return TrainResult(Path(out), len(examples), 1, 0.0, [0.5])

    def fake_dpo(pairs, out, **kw):
        pairs_seen.extend(pairs)
        return TrainResult(Path(out), len(pairs), 1, 0.0, [0.7])

    monkeypatch.setattr(pipeline, "sft", fake_sft)
    monkeypatch.setattr(pipeline, "dpo", fake_dpo)
    cfg = WriterConfig(
        name="o", store=str(path), histories=[SUMMARY], reader="hf:x", score="outcome",
        candidates=3, k=1, ks=[2], phases=["b"], points=1, rounds=2, continue_steps=1,
        budget=64, out=str(tmp_path),
    )  # fmt: skip
    summary = pipeline.train_writer(cfg)
    assert (summary["score"], summary["k"], summary["candidates"]) == ("outcome", 1, 3)
    rows = [
        json.loads(x) for x in (tmp_path / "o" / "scores_round1.jsonl").read_text().splitlines()
    ]
    rows0 = [
        json.loads(x) for x in (tmp_path / "o" / "scores_round0.jsonl").read_text().splitlines()
    ]
    assert rows0 and all(c["outcome"] is not None for r in rows0 for c in r["candidates"])
    # the outcome of round 0's first candidate, recomputed from its text
    row = rows0[0]
    writer = BoundedWriter(traj.render_obs, "summary", 64, seed=0)
    state_in = traj.input_state(row["phase"], row["j"])
    for c in row["candidates"]:
        state = replace(state_in, text=c["text"], t=state_in.t + 1)
        got = asyncio.run(
            continue_episode(traj, "b", row["j"], state, writer, model, model, steps=1)
        )
        assert got.ret == pytest.approx(c["outcome"])
    # Figure 2 of each round, from its rows
    fig = json.loads((tmp_path / "o" / "fig2_round0.json").read_text())["cells"]
    want = figure2(rows0)
    assert [(c["form"], c["k"], c["defined"]) for c in fig] == [
        (c.form, c.k, c.defined) for c in want
    ]
    assert {c["k"] for c in fig} == {1, 2}
    # round 1's pairs: best vs worst return where the returns and the texts differ
    expect = []
    for r in rows:
        cs = r["candidates"]
        hi = max(cs, key=lambda c: c["outcome"])
        lo = min(cs, key=lambda c: c["outcome"])
        if hi["outcome"] > lo["outcome"] and hi["text"] != lo["text"]:
            expect.append((hi["text"], lo["text"]))
    assert [(c, w) for _, c, w in pairs_seen] == expect
    info = summary["rounds"][1]
    assert info["pairs"] == len(expect) and ("skipped" in info) == (not expect)
    # the onion candidates win a point within the one continued action, the others none
    for r in rows0 + rows:
        for c in r["candidates"]:
            assert c["outcome"] == (1.0 if c["text"] == "take white onion" else 0.0)
    assert expect and all(c == "take white onion" for c, _ in expect)
