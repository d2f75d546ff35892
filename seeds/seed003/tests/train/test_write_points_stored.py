"""Phase-A write points and the A4 arm on a stored cooking episode (no torch: a constructed
model). The run's summary writer replies alternate "I walked around and saw the <first
ingredient>." / "Recipe: <the recipe's first direction, in upper case>.", so every state's text
is known from its write count; only the second holds a directive (an ingredient name is none:
Phase A shows every ingredient before the reveal)."""

from __future__ import annotations

import random

import pytest

from statelab.core import LLM, Completion, GenParams

textworld = pytest.importorskip("textworld")



SUMMARY = "bounded:summary:64"


class Model(LLM):
    """Writer replies cycle through ``replies``; the reader is uniform (it only acts)."""

    model_id = "constructed"

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.n = replies, 0

    async def complete(self, messages, params: GenParams) -> Completion:
        self.n += 1
        return Completion(self.replies[(self.n - 1) % len(self.replies)])

    async def score(self, messages, continuations):
        return [0.0 for _ in continuations]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    from statelab.envs import make_env
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    env = make_env("cooking:lag=2")
    _, info = env.reset(seed=1)
    recipe = info["privileged"]["recipe"]
    key = recipe.split("Directions:")[1].strip().splitlines()[0].strip()
    food = recipe.split("Ingredients:")[1].strip().splitlines()[0].strip()
    walk = f"I walked around and saw the {food}."
    model = Model([walk, f"Recipe: {key.upper()}."])  # case differs from the recipe's line
    exp = parse_experiment(
        {
            "name": "w",
            "model": "scripted:unused",
            "seeds": [1],
            "grid": {"env": ["cooking:lag=2"], "agent": ["reader"],
                     "history": ["bounded:summary:64", "last-k:64", "oracle-bounded:64"]},
            "out": str(tmp_path_factory.mktemp("dssr") / "results"),
            "cache": None,
            "max_steps": 3,
            "expert": False,
            "random": False,
        }
    )  # fmt: skip
    assert run_sync(exp, progress=None, llm_factory=lambda s: model).failed == 0
    return exp.out_dir / "store.sqlite", info, key, walk


def test_phase_a_input_states_are_the_logged_writer_rolled_through_the_prelude(stored):
    from statelab.run.replay import replay
    from statelab_seed003.train.data import trajectories

    path, info, key, walk = stored
    (traj,) = list(trajectories(path, histories=[SUMMARY]))
    n = len(info["prelude"])
    assert len(traj.prelude) == len(traj.prelude_states) == n
    assert traj.reveal == info["privileged"]["phase_a"]["reveal"] == n - 3  # F' = 2
    # the first is the writer's initial state; then the stored replies in turn
    assert traj.prelude_states[0].text == ""
    texts = [s.text for s in traj.prelude_states[1:]]
    assert texts == [walk if i % 2 == 0 else f"Recipe: {key.upper()}." for i in range(n - 1)]
    # the last prelude write, with its stored reply, gives replay's first state
    first = next(iter(replay(path, traj.run, 1)))
    assert traj.steps[0].state == first.state
    assert first.state.text == (walk if (n - 1) % 2 == 0 else f"Recipe: {key.upper()}.")
    assert key in traj.directives and "prepare meal" not in traj.directives
    assert not any(d in walk for d in traj.directives)  # ingredient names are not directives


def test_a4_keeps_the_post_reveal_points_that_still_hold_the_directive(stored):
    from statelab_seed003.train._config import WriterConfig
    from statelab_seed003.train._writer_scores import arm_counts
    from statelab_seed003.train.data import trajectories
    from statelab_seed003.train.dssr import At, arm_points, eligible_points, write_points

    path, _, _, _ = stored
    (traj,) = list(trajectories(path, histories=[SUMMARY]))
    n, reveal = len(traj.prelude), traj.reveal
    assert reveal is not None and len(traj.steps) == 3
    pool = eligible_points(traj)
    # write count w (0: the initial state) -> the state holds the directive iff w is even > 0
    count = {p: (p.j if p.phase == "a" else n + p.j) for p in pool}
    assert pool == [At("a", j) for j in range(n)] + [
        At("b", j) for j in range(2) if any(k > j for k in traj.decision_points())
    ]
    holds = {p for p in pool if count[p] > 0 and count[p] % 2 == 0}
    assert {p for p in pool if traj.holds_directive(*p)} == holds
    kept = arm_points(traj, pool, "a4")
    post = [p for p in pool if p.phase == "b" or p.j > reveal]
    assert kept == [p for p in pool if p not in post or p in holds]
    assert set(pool) - set(kept) == {p for p in post if p not in holds} != set()
    assert set(write_points(traj, 100, random.Random(0), arm="a4")) == set(kept)
    cfg = WriterConfig(name="x", store=str(path), reader="hf:x", arm="a4")
    assert cfg.candidates == 12 and cfg.k == 12 and cfg.phases == ["a", "b"]
    want = {"kept": len(kept), "of": len(pool), "post_reveal": len(post)}
    assert arm_counts(cfg, [traj]) == want
    main = WriterConfig(name="x", store=str(path), reader="hf:x", phases=["b"])
    assert main.candidates == 12
    assert arm_counts(main, [traj])["kept"] == sum(p.phase == "b" for p in pool)


def test_train_writer_records_each_points_phase_and_the_arms_count(stored, tmp_path, monkeypatch):
    """The writer job end to end with the trainers replaced (no torch): scores_round0.jsonl
    holds a phase per point, summary.json the A4 line."""
    import json
    from pathlib import Path

    import statelab.llm
    from statelab_seed003.train import pipeline
    from statelab_seed003.train._config import WriterConfig
    from statelab_seed003.train.trainers import TrainResult

    path, _, key, walk = stored
    model = Model([walk, f"Recipe: {key}."])
    monkeypatch.setattr(statelab.llm, "make_llm", lambda spec: model)
    seen: list[list[tuple[object, str]]] = []

    def fake_sft(examples, out, **kw):
        seen.append([(m, c) for m, c in examples])
        return TrainResult(Path(out), len(examples), 1, 0.0, [0.5])

    monkeypatch.setattr(pipeline, "sft", fake_sft)
    cfg = WriterConfig(
        name="w", store=str(path), histories=[SUMMARY], reader="hf:x", arm="a4", candidates=2,
        points=100, rounds=1, k=2, out=str(tmp_path),
    )  # fmt: skip
    summary = pipeline.train_writer(cfg)
    scores = tmp_path / "w" / "scores_round0.jsonl"
    rows = [json.loads(x) for x in scores.read_text().splitlines()]
    kept = summary["write_points_kept"]
    assert (summary["arm"], summary["phases"], summary["k"]) == ("a4", ["a", "b"], 2)
    assert summary["candidates"] == 2
    assert kept["kept"] < kept["of"] and len(rows) == kept["kept"]  # every kept point drawn
    assert {r["phase"] for r in rows} == {"a", "b"}
    assert summary["rounds"][0]["by_phase"] == {
        ph: sum(r["phase"] == ph for r in rows) for ph in ("a", "b")
    }
    assert all(len(r["candidates"]) == 2 for r in rows)
    assert len(seen[0]) == len(rows)  # one best candidate per point to round 0's SFT


def test_memories_without_model_writes_roll_their_prelude_too(stored):
    """last-k and the privileged oracle (which reads the reset's privileged view, as replay
    gives it): the rolled prelude ends in replay's first state (else loading raises)."""
    from statelab_seed003.train.data import trajectories

    path, info, _, _ = stored
    got = {t.history: t for t in trajectories(path, histories=["last-k:64", "oracle-bounded:64"])}
    assert set(got) == {"last-k:64", "oracle-bounded:64"}
    for traj in got.values():
        assert len(traj.prelude_states) == len(info["prelude"])
    # the oracle renders the recipe compactly ("carrot (slice, fry)"): no direction line as
    # written, so no directive by the A4 test (which is meant for written states)
    oracle = got["oracle-bounded:64"]
    assert "Recipe:" in oracle.memory.render(oracle.input_state("a", 1))
    assert not oracle.holds_directive("a", 1)
