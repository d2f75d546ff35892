"""The test split is opened only after the selection it is pre-registered for (seed 003:
"selection is completed before the test split is opened once"). On a constructed validation
store where K = 1 round 1 beats A4 round 2, ``statelab seed003 gates`` selects K = 1 round 1,
evaluates G1 on it (``a: selected``) and records it with the store's fingerprint; the retrain
trains K = 1's stored pairs from K = 1's round 0; the test opening is refused before the
gates and passes after them, and refuses retrains of another selection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError
from statelab.run.config import load_experiment
from statelab.run.ledgers import latest_selection, store_fingerprint
from statelab.run.opening import Opening
from statelab.run.records import EpisodeRecord
from statelab.run.store import Store
from statelab_seed003.analysis.gates import evaluate_gate, evaluate_gates
from statelab_seed003.analysis.plan import Gate, load_plan
from statelab_seed003.train import retrain as retrain_mod
from statelab_seed003.train.dssr import Candidate, WritePoint
from statelab_seed003.train.trainers import TrainResult

pytest.importorskip("textworld")
runner = CliRunner()
GAMES = (1000, 1001, 1002, 1003)
S = "bounded:summary:128"


def _writers(tmp):
    return {
        "A4 round 2": f"bounded:dssr={tmp}/a4/round2:128",
        "K=1 round 1": f"bounded:dssr={tmp}/k1/round1:128",
        "SUMMARY": S,
    }


def _validation(tmp, wins):
    """Validation episodes: wins[label] = the games won at F' = 0 (reader m1)."""
    path = tmp / "val" / "seed003-validation-select" / "store.sqlite"
    path.parent.mkdir(parents=True)
    st = Store(path, ("env", "model", "history", "writer"))
    for label, h in _writers(tmp).items():
        run = f"m1|{h}"
        axes = {"env": "cooking:lag=0", "model": "m1", "history": h, "writer": "w"}
        comp = {"history": {"spelling": h, "label": h, "tags": [], "args": {"budget": 128}}}
        st.save_run(run, run, axes, {**axes, "agent": "reader"}, comp)
        for g in GAMES:
            st.commit_episode(EpisodeRecord(run, g, "done", success=g in wins[label]))
    st.close()
    return path


def _setup(tmp):
    tmp = Path(tmp)
    wins = {"A4 round 2": {1000}, "K=1 round 1": {1000, 1001, 1002}, "SUMMARY": {1000}}
    val = _validation(tmp, wins)
    test = {
        "name": "seed003-table2-test", "seeds": "test[:1]", "max_steps": 1, "random": False,
        "expert": False, "model": "scripted:replies.json", "cache": None,
        "out": str(tmp / "results"), "after_selection": "plan",
        "grid": {"env": ["cooking:lag=0"], "agent": ["reader"],
                 "history": [f"bounded:dssr={tmp}/retrain/seed0/final:128", S]},
    }  # fmt: skip
    (tmp / "test.yaml").write_text(yaml.safe_dump(test))
    plan = {
        "name": "plan", "validation": str(val), "test": str(tmp / "test.yaml"),
        "readers": {"R1": "m1"}, "writers": _writers(tmp),
        "gates": [{"id": "G1a", "split": "validation", "what": "selected - SUMMARY at F'=0",
                   "a": "selected", "b": "SUMMARY", "lags": [0], "budget": 128,
                   "reader": "R1"}],
        "selection": {"candidates": ["A4 round 2", "K=1 round 1"], "lags": [0],
                      "reader": "R1"},
    }  # fmt: skip
    (tmp / "plan.yaml").write_text(yaml.safe_dump(plan))
    # K=1's job wrote its round-0 adapter and round 1's pairs
    (tmp / "k1" / "round0").mkdir(parents=True)
    cands = (Candidate("keep the recipe", None, 1.0, 1.0), Candidate("drop it", None, 3.0, 3.0))
    point = WritePoint("r", 1, 3, [{"role": "user", "content": "write"}], cands, 2)
    retrain_mod.save_pairs([point], tmp / "k1" / "pairs_round1.jsonl")
    return tmp, val


def _fake_dpo(pairs, out, *, base, hyper, init, kind, meta):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "statelab.json").write_text(json.dumps({"base": base, "init": str(init), **meta}))
    return TrainResult(out, len(pairs), hyper.steps, 0.0, [0.1])


def test_the_gates_the_retrain_and_the_opening_follow_the_recorded_selection(
    tmp_path, monkeypatch
):
    tmp, val = _setup(tmp_path)
    exp = load_experiment(tmp / "test.yaml")
    with pytest.raises(ConfigError, match="not recorded"):  # before the gates
        Opening(exp).begin()

    res = runner.invoke(app, ["seed003", "gates", str(tmp / "plan.yaml")])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    # G1 on the selected K=1 round 1: (3 - 1) / 4 games = +50 points, as the gate on it
    plan = load_plan(tmp / "plan.yaml")
    gate = Gate(id="G1a", split="validation", what="selected - SUMMARY at F'=0",
                a="K=1 round 1", b="SUMMARY", lags=[0], budget=128, reader="R1")  # fmt: skip
    by_hand = evaluate_gate(gate, plan, _cells(val))
    assert by_hand.interval.mean == pytest.approx(0.5) and by_hand.interval.games == 4
    (g1,) = [x for x in lines if x.startswith("G1a")]
    assert g1.endswith("(selected: K=1 round 1)") and by_hand.interval.text(1, 100.0) in g1
    assert evaluate_gates(plan, ("validation",))[0].line() == g1
    assert "selected K=1 round 1" in res.output and "selection recorded" in res.output
    entry = latest_selection(tmp / "results", "plan")
    assert entry["selected"] == "K=1 round 1"
    assert entry["source"]["fingerprint"] == store_fingerprint(val)
    assert [e["id"] for e in entry["evaluated"]] == ["G1a"]
    again = runner.invoke(app, ["seed003", "gates", str(tmp / "plan.yaml")])
    assert "selection unchanged since" in again.output

    # the retrain reads the selection: K=1's round-1 pairs from K=1's round 0
    monkeypatch.setattr("statelab_seed003.train.trainers.dpo", _fake_dpo)
    cfg = {"name": "retrain", "selection": str(tmp / "plan.yaml"), "seeds": [0, 1],
           "out": str(tmp), "hyper": {"steps": 1}}  # fmt: skip
    (tmp / "retrain.yaml").write_text(yaml.safe_dump(cfg))
    done = retrain_mod.run_retrain(tmp / "retrain.yaml")
    assert done["selection"]["selected"] == "K=1 round 1"
    assert [len(v) for v in done["seeds"].values()] == [1, 1]  # one DPO round (K=1 round 1)
    meta = json.loads((tmp / "retrain" / "seed0" / "final" / "statelab.json").read_text())
    assert meta["init"] == str(tmp / "k1" / "round0")
    assert meta["retrained_from"] == str(tmp / "k1" / "pairs_round1.jsonl")
    assert done["writers"] == [f"bounded:dssr={tmp}/retrain/seed{s}/final:128" for s in (0, 1)]

    o = Opening(exp)  # the test's DSSR writer is that retrain: the opening may go ahead
    o.begin()
    o.close()
    assert o._pending[0]["selection"]["selected"] == "K=1 round 1"

    # retrains of another selection (A4's) are refused by name
    meta["selection"] = {**meta["selection"], "selected": "A4 round 2"}
    (tmp / "retrain" / "seed0" / "final" / "statelab.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="retrained from the selection 'A4 round 2'"):
        Opening(exp).begin()


def test_the_retrain_refuses_before_a_selection_and_with_rounds_named_too(tmp_path):
    tmp, _ = _setup(tmp_path)
    cfg = {"name": "retrain", "selection": str(tmp / "plan.yaml"), "out": str(tmp)}
    (tmp / "r.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match="no selection of 'plan' is recorded"):
        retrain_mod.run_retrain(tmp / "r.yaml")
    (tmp / "r2.yaml").write_text(yaml.safe_dump({**cfg, "rounds": ["x.jsonl"]}))
    with pytest.raises(ConfigError, match="not both"):
        retrain_mod.run_retrain(tmp / "r2.yaml")


def test_a_gate_naming_selected_needs_a_selection():
    from statelab_seed003.analysis.plan import Plan

    gate = {"id": "G", "split": "validation", "what": "w", "a": "selected", "b": "S", "lags": [0]}
    with pytest.raises(ValueError, match="no selection"):
        Plan.model_validate({"name": "p", "writers": {"S": [S]}, "gates": [gate]})
    with pytest.raises(ValueError, match="names the selection's pick"):
        Plan.model_validate({"name": "p", "writers": {"selected": [S]}})


def _cells(path):
    from statelab_seed003.analysis.episodes import cooking_cells

    st = Store(path, readonly=True)
    try:
        return cooking_cells(st).eps
    finally:
        st.close()
