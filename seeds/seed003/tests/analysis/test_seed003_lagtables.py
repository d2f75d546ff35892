"""Seed 003's Table 7, round-by-round κ contrasts, Appendix I's lag grid and the a*-tie check,
every printed number recomputed by hand from a constructed store with known answers: two
readers (m1, m2), three DSSR seeds averaged per game, a failed episode that drops its game, a
won rollout-1 episode that is no game; the tie check and the start rooms from episodes played
on a small env whose plan length is known at every step. Also: two filler protocols in one
store are two report rows."""

from __future__ import annotations

import json
import uuid
from typing import Any, ClassVar

import gymnasium as gym
import pytest

from statelab.analysis.stats import paired_bootstrap
from statelab.core import ConfigError, Env, Observation
from statelab.envs import ENVS, register_env
from statelab.envs import _registry as env_registry
from statelab.facts import TextFacts
from statelab.run.config import parse_experiment
from statelab.run.records import EpisodeRecord
from statelab.run.runner import run_sync
from statelab.run.store import Store
from statelab_seed003.analysis.audit import AuditPoint
from statelab_seed003.analysis.episodes import audit_rows, cooking_cells
from statelab_seed003.analysis.gates import tables
from statelab_seed003.analysis.kappas import relative_change
from statelab_seed003.analysis.lagtables import (
    lag_bin,
    lag_grid,
    start_rooms,
    table7_cells,
    tie_check,
    tie_md,
    tie_records,
)
from statelab_seed003.analysis.measures import AUDIT_TABLE
from statelab_seed003.analysis.plan import Plan
from statelab_seed003.analysis.report import seed003_markdown

GAMES = (1000, 1001, 1002, 1003)
S1, S2 = "bounded:summary:128", "bounded:summary:256"
D1 = [f"bounded:dssr=x/s{i}:128" for i in range(3)]
D2 = [f"bounded:dssr=x/s{i}:256" for i in range(3)]
# wins[(model, history, lag)]: the games won; everything else is lost
WINS = {
    ("m1", S2, 0): {1000},
    ("m1", D2[0], 0): {1000, 1001},
    ("m1", D2[1], 0): {1000},
    ("m1", D2[2], 0): {1000, 1001, 1002},
    ("m1", D2[0], 20): {1000},
    **{("m2", h, f): set(GAMES) for h in D2 for f in (0, 20)},
}
FAILED = {("m1", D2[1], 20, 1003)}
ROW_S1 = "bounded:summary · reader m1 · writer w"


def _components(history: str) -> dict[str, Any]:
    budget = history.rsplit(":", 1)[-1]
    return {"history": {"spelling": history, "label": history, "tags": [],
                        "args": {"budget": int(budget)}}}  # fmt: skip


def _point(h: str, g: int, lag: int, kappa: float, **kw: Any) -> dict[str, Any]:
    budget = int(h.rsplit(":", 1)[-1])
    p = AuditPoint(f"m1|{h}|{lag}", g, kw.pop("t", 0), h, lag, budget, 0, "look", None,
                   kw.pop("full", None), None, kw.pop("beta", None), kappa, **kw)  # fmt: skip
    return p.__dict__


# Table 7's points (SUMMARY, B = 128, m1, F′ = 10: a run with no episode): lag bins [0, 5, 10]
REL = [
    _point(S1, 1000, 10, 1.0, t=1, beta=0.1, full=0.5, rel_lag=2, rel_gain=1.0, rel_is_reveal=1),
    _point(S1, 1000, 10, 3.0, t=2, beta=0.3, full=0.7, rel_lag=3, rel_gain=0.9, rel_is_reveal=0),
    _point(S1, 1001, 10, 2.0, t=1, beta=-0.2, full=0.2, rel_lag=12, rel_gain=2.0, rel_is_reveal=1),
    _point(S1, 1002, 10, 0.5, t=1, rel_lag=None, rel_gain=0.1),  # tried, undefined
    _point(S1, 1003, 10, 9.0, t=1),  # the lag was not tried: not in Table 7
    _point(S2, 1000, 10, 7.0, t=1, rel_lag=2, rel_gain=1.0),  # B = 256: another table
]
# κ contrasts, B = 128, m1: DSSR (three seeds) vs SUMMARY
KAPPA = [
    _point(S1, 1000, 0, 2.0, t=5), _point(S1, 1000, 0, 2.0, t=6), _point(S1, 1001, 0, 4.0, t=5),
    _point(S1, 1000, 20, 1.0), _point(S1, 1001, 40, 1.0),
    _point(D1[0], 1000, 0, 1.0), _point(D1[1], 1000, 0, 1.0), _point(D1[2], 1001, 0, 2.0),
    _point(D1[0], 1002, 0, 5.0),  # SUMMARY has no point in 1002: not paired
    _point(D1[0], 1000, 20, 1.0), _point(D1[1], 1001, 40, 1.0),
]  # fmt: skip


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "exp" / "store.sqlite"
    path.parent.mkdir()
    st = Store(path, ("env", "model", "history", "writer"))
    for model in ("m1", "m2"):
        for h in [S1, S2, *D1, *D2]:
            for lag in (0, 10, 20, 40):
                run = f"{model}|{h}|{lag}"
                axes = {"env": f"cooking:lag={lag}", "model": model, "history": h, "writer": "w"}
                st.save_run(run, run, axes, {**axes, "agent": "reader"}, _components(h))
                for g in GAMES if lag != 10 else ():
                    failed = (model, h, lag, g) in FAILED
                    st.commit_episode(
                        EpisodeRecord(run, g, "failed" if failed else "done",
                                      success=g in WINS.get((model, h, lag), set()))
                    )  # fmt: skip
    # a rollout-1 episode (a continuation) that won: never a game
    st.commit_episode(EpisodeRecord(f"m1|{S2}|0", 1001, "done", rollout=1, success=True))
    st.append({AUDIT_TABLE: REL + KAPPA})
    st.close()
    return path


def _cells(path):
    st = Store(path, readonly=True)
    try:
        cells = cooking_cells(st)
        return cells, audit_rows(st, cells.row_of_run, AUDIT_TABLE)
    finally:
        st.close()


def _plan(path, **kw):
    writers = {"SUMMARY": [S1], "DSSR": D1, "SUMMARY 256": [S2], "DSSR 256": D2}
    base = {"name": "t", "validation": str(path), "readers": {"R1": "m1", "R2": "m2"},
            "writers": writers}  # fmt: skip
    return Plan.model_validate({**base, **kw})


def test_lag_bins():
    edges = [0, 5, 10]
    assert [lag_bin(x, edges) for x in (0, 4, 5, 9, 10, 99, None)] == [
        "0–4", "0–4", "5–9", "5–9", "≥10", "≥10", None,
    ]  # fmt: skip


def test_table7_bins_kappa_beta_and_full_loss(store, tmp_path):
    _, audit = _cells(store)
    cells = table7_cells(audit, [0, 5, 10], 128)
    assert list(cells) == [ROW_S1]  # only the points where the lag was tried, at B = 128
    c = cells[ROW_S1]
    low = c["0–4"]  # two points of game 1000: lags 2 and 3
    assert (low["points"], low["cookbook"]) == (2, 1)
    assert (low["kappa"].mean, low["beta"].mean, low["full"].mean) == pytest.approx((2.0, 0.2, 0.6))
    assert (low["kappa"].low, low["kappa"].high) == (2.0, 2.0)  # one game: no spread
    assert c["5–9"]["points"] == 0
    high = c["≥10"]
    assert (high["points"], high["kappa"].mean, high["beta"].mean) == (1, 2.0, -0.2)
    assert (c["undefined"]["points"], c["undefined"]["kappa"].mean) == (1, 0.5)
    md, _ = tables(_plan(store, table7={"bins": [0, 5, 10], "budget": 128}), tmp_path / "o")
    assert (
        f"| {ROW_S1} | 0–4 | 2 | 2.00 [2.00, 2.00] | 0.20 [0.20, 0.20] | 0.60 [0.60, 0.60] | 1 |"
        in md
    )
    assert (
        f"| {ROW_S1} | ≥10 | 1 | 2.00 [2.00, 2.00] | -0.20 [-0.20, -0.20] | 0.20 [0.20, 0.20] | 1 |"
        in md
    )
    assert not any(x.startswith(f"| {ROW_S1} | 5–9 |") for x in md)  # empty bin: no row
    text = "\n".join(md)
    # cookbook: 2 of the 3 points with a defined lag
    assert "at 2 of 3 points with a defined lag (66.7%)" in text
    with pytest.raises(ValueError, match="bins"):
        _plan(store, table7={"bins": [0, 5, 5]})


def test_kappa_contrasts_relative_change_at_zero_lag_and_pooled(store, tmp_path):
    # F′ = 0, games 1000 and 1001 (1002 has no SUMMARY point): DSSR (1 + 1 + 2) / 3 = 4/3,
    # SUMMARY (2 + 2 + 4) / 3 = 8/3: -50%; each game alone is -50% too, so every resample is
    # -50 and so is the interval. Pooled F′ in {20, 40}: 1.0 against 1.0 -> 0%.
    plan = _plan(store, kappa_contrasts={"pairs": [["DSSR", "SUMMARY"]], "reader": "R1"})
    md, _ = tables(plan, tmp_path / "o")
    assert "| DSSR vs SUMMARY | -50 [-50, -50]% (2 games) | 0 [0, 0]% (2 games) |" in md
    plan = _plan(store, kappa_contrasts={"pairs": [["DSSR", "SUMMARY"]], "reader": "R2"})
    md, _ = tables(plan, tmp_path / "o")
    assert "| DSSR vs SUMMARY | – | – |" in md  # R2 has no audited point
    # a spread: game 1 halves κ, game 2 keeps it; points pooled per side
    i = relative_change({1: [1.0], 2: [3.0]}, {1: [2.0], 2: [3.0]}, resamples=2000)
    assert i.mean == pytest.approx(100 * (4 / 2) / (5 / 2) - 100)  # -20%
    assert (i.low, i.high) == pytest.approx((-50.0, 0.0)) and i.games == 2
    assert relative_change({1: [1.0]}, {1: [0.0]}).games == 0  # b's mean 0: undefined
    with pytest.raises(ValueError, match="not in writers"):
        _plan(store, kappa_contrasts={"pairs": [["DSSR", "NOPE"]]})


def test_lag_grid_gains_and_the_start_room_split(store, tmp_path):
    cells, _ = _cells(store)
    writers = {"SUMMARY": [S2], "DSSR": D2}
    # rooms: games 1000 and 1001 start their Phase B in the kitchen
    rooms = {(e["run"], e["seed"]): "Kitchen" if e["seed"] < 1002 else "hall" for e in cells.eps}
    md = lag_grid(cells.eps, writers, ["DSSR"], "SUMMARY", 256, "m1", rooms)
    blocks = "\n".join(md).split("Success (%), ")
    every, kitchen, elsewhere = blocks[1], blocks[2], blocks[3]

    def row(block, name):
        return next(x for x in block.splitlines() if x.startswith(f"| {name} |"))

    # all: DSSR at F′ = 0 per game 1, 2/3, 1/3, 0 -> 50%; at 20 (1003 failed for seed 1):
    # 1/3, 0, 0 -> 11.1%; at 40 nothing won; SUMMARY 25% and 0%; the gains 25.0 and 11.1
    dssr = paired_bootstrap({1000: 1.0, 1001: 2 / 3, 1002: 1 / 3, 1003: 0.0}).text(1, 100)
    assert row(every, "DSSR") == f"| DSSR | {dssr} | 11.1 [0.0, 33.3] | 0.0 [0.0, 0.0] |"
    assert row(every, "SUMMARY").startswith("| SUMMARY | 25.0 [0.0, 75.0] | 0.0 [0.0, 0.0] |")
    gain = paired_bootstrap({1000: 0.0, 1001: 2 / 3, 1002: 1 / 3, 1003: 0.0}).text(1, 100)
    assert row(every, "DSSR − SUMMARY").startswith(
        f"| DSSR − SUMMARY | {gain} | 11.1 [0.0, 33.3] |"
    )
    # the kitchen: games 1000, 1001 -> DSSR (1 + 2/3) / 2 = 83.3%, SUMMARY 50%; elsewhere
    # 1002, 1003 -> 16.7% and 0%
    assert row(kitchen, "DSSR").split(" | ")[1].startswith("83.3 [66.7, 100.0]")
    assert row(kitchen, "SUMMARY").split(" | ")[1] == "50.0 [0.0, 100.0]"
    assert row(elsewhere, "DSSR").split(" | ")[1] == "16.7 [0.0, 33.3]"
    assert row(elsewhere, "DSSR − SUMMARY").split(" | ")[1] == "16.7 [0.0, 33.3]"
    # the plan, without the start rooms (those replay the env): R2 wins everything
    plan = _plan(store, lag_grid={"rows": ["DSSR 256"], "baseline": "SUMMARY 256",
                                  "reader": "R2", "by_start_room": False})  # fmt: skip
    md, _ = tables(plan, tmp_path / "o")
    assert "| DSSR 256 | 100.0 [100.0, 100.0] | 100.0 [100.0, 100.0] | 0.0 [0.0, 0.0] |" in md
    assert not any("kitchen" in x for x in md)


def test_a_section_on_a_split_the_plan_does_not_name_is_refused(store, tmp_path):
    plan = _plan(store, table7={"split": "test"})
    with pytest.raises(ConfigError, match="table7 on test needs"):
        tables(plan, tmp_path / "o")


def test_the_shipped_plan_reads_its_lag_tables_from_experiments_that_run_them():
    from pathlib import Path

    import yaml

    from statelab_seed003.analysis.plan import load_plan

    root = Path(__file__).parents[4]
    plan = load_plan(root / "configs/seed003/analysis.yaml")

    def grid(where):
        cfg = yaml.safe_load((root / where).read_text())
        return cfg, set(cfg["grid"]["history"])

    cfg, hist = grid(plan.lag_grid.experiment)
    assert cfg["seeds"] == "validation" and cfg["model"] == plan.readers["R1"]
    assert cfg["grid"]["env"] == [f"cooking:lag={f}" for f in (0, 5, 10, 20, 40)]
    for w in [plan.lag_grid.baseline, *plan.lag_grid.rows]:
        assert set(plan.writers[w]) <= hist and all(h.endswith(":256") for h in plan.writers[w])
    _, hist = grid(plan.validation)
    assert all(set(plan.writers[x]) <= hist for p in plan.kappa_contrasts.pairs for x in p)
    for where in (plan.table7.experiment, plan.tie_check.experiment):
        cfg, hist = grid(where)
        assert cfg["seeds"] == "validation" and "bounded:summary:128" in hist
    assert {"OUTCOME", "NO-HINT"} <= set(plan.table2.rows)
    assert ("DSSR", "OUTCOME") in plan.table2.contrasts


# -- the tie check and the start rooms, replayed --------------------------------------------
class _Expert:
    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        return str(info["privileged"]["a_star"])


class Walk(Env):
    """Cells 0..4, start at 0, win at 4. a* is "go right"; "jump" also moves right (a tie);
    "go left" moves back; "wait" stays. The plan is "go right" to the end; the room is the
    kitchen for even seeds, the hall for odd ones."""

    name = "walk"
    max_steps = 6
    history_len = 8
    facts_type: ClassVar[type] = TextFacts
    default_format = "natural"
    manual = "Walk to the end."
    optimal_action = True
    static_actions = False
    MOVES: ClassVar[dict[str, int]] = {"go right": 1, "jump": 1, "go left": -1, "wait": 0}

    def _obs(self) -> Observation:
        text = f"You are at {self.pos}."
        return Observation(text, TextFacts(text), tuple(sorted(self.MOVES)), "reach the end")

    def _priv(self) -> dict[str, Any]:
        plan = ("go right",) * (4 - self.pos)
        return {"privileged": {"a_star": plan[0] if plan else None, "policy": plan,
                               "room": self.room}}  # fmt: skip

    def _reset(self, rng_seed: int | None, options: dict[str, Any]) -> tuple[Observation, dict]:
        self.pos, self.room = 0, "kitchen" if (rng_seed or 0) % 2 == 0 else "hall"
        return self._obs(), self._priv()

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        self.pos = max(0, self.pos + self.MOVES.get(action, 0))
        return self._obs(), float(self.pos == 4), self.pos == 4, self._priv()

    def score(self) -> float:
        return float(self.pos == 4)

    def success(self) -> bool:
        return self.pos == 4

    def expert(self) -> _Expert:
        return _Expert()


@pytest.fixture
def walked(tmp_path):
    name = f"walk-{uuid.uuid4().hex[:8]}"
    gym_id = f"statelab-test/Walk{uuid.uuid4().hex[:8]}-v0"
    register_env(name, Walk, gym_id)
    # jump (shortens: a tie), go left (longer), wait (as long), then a* to the end of 6 steps
    script = tmp_path / "moves.json"
    script.write_text(json.dumps(["jump", "go left", "wait", "go right", "go right", "go right"]))
    exp = parse_experiment({
        "name": "walked", "model": f"scripted:{script}", "seeds": [0, 1], "max_steps": 6,
        "grid": {"env": [name], "agent": ["reader"]}, "out": str(tmp_path), "cache": None,
        "expert": False, "random": False,
    })  # fmt: skip
    run_sync(exp, progress=None)
    path = exp.out_dir / "store.sqlite"
    st = Store(path, readonly=True)
    try:
        eps = [(r["run"], int(r["seed"])) for r in st.rows("episodes", ["run", "seed"])]
    finally:
        st.close()
    yield path, sorted(eps)
    ENVS.unregister(name)
    env_registry.ENV_CLASSES.pop(name, None)
    env_registry.GYM_IDS.pop(name, None)
    gym.registry.pop(gym_id, None)


def test_tie_check_counts_steps_off_a_star_by_what_they_did_to_the_plan(walked):
    path, eps = walked
    assert len(eps) == 2
    st = Store(path, readonly=True)
    try:
        assert [r["status"] for r in st.rows("episodes", ["status"])] == ["done", "done"]
    finally:
        st.close()
    recs = tie_records(path, eps, sample=100)
    # each episode: t1 jump (plan 4 -> 3), t2 go left (3 -> 4), t3 wait (4 -> 4)
    assert [(r["t"], r["action"], r["before"], r["after"]) for r in recs[:3]] == [
        (1, "jump", 4, 3), (2, "go left", 3, 4), (3, "wait", 4, 4),
    ]  # fmt: skip
    assert tie_check(recs) == {"steps": 6, "shortened": 2, "same": 2, "longer": 2}
    # a sample of 4: the first episode's three steps, then the second's jump
    assert tie_check(tie_records(path, eps, sample=4)) == {
        "steps": 4, "shortened": 2, "same": 1, "longer": 1,
    }  # fmt: skip
    text = "\n".join(tie_md(tie_check(recs)))
    assert "Of 6 sampled steps" in text and "shortened the oracle plan in 2 (33.3%)" in text
    assert "no step" in tie_md(tie_check([]))[0]


def test_start_rooms_are_the_room_of_the_first_decision(walked):
    path, eps = walked
    rooms = start_rooms(path, eps)
    assert {seed: room for (_run, seed), room in rooms.items()} == {0: "kitchen", 1: "hall"}


# -- the report keys on the filler protocol ------------------------------------------------
def test_two_filler_protocols_in_one_store_are_two_rows(tmp_path):
    path = tmp_path / "exp" / "store.sqlite"
    path.parent.mkdir()
    st = Store(path, ("env", "model", "history", "writer"))
    wins = {"post": {1000, 1001}, "pre": {1000}}
    for proto in ("post", "pre"):
        for h in (S1, "bounded:guide:128"):
            run = f"{proto}|{h}"
            env = "cooking:40" + ("+filler=pre" if proto == "pre" else "")
            axes = {"env": env, "model": "m1", "history": h, "writer": "w"}
            st.save_run(run, run, axes, {**axes, "agent": "reader"}, _components(h))
            for g in GAMES:
                won = g in wins[proto] and h == S1
                st.commit_episode(EpisodeRecord(run, g, "done", success=won))
    st.close()
    st = Store(path, readonly=True)
    try:
        cells = cooking_cells(st)
        md, _ = seed003_markdown(st, tmp_path)
    finally:
        st.close()
    rows = {e["row"] for e in cells.eps}
    assert rows == {
        "bounded:summary · filler post", "bounded:summary · filler pre",
        "bounded:guide · filler post", "bounded:guide · filler pre",
    }  # fmt: skip
    post = next(x for x in md if x.startswith("| bounded:summary · filler post | 128 | 4 |"))
    pre = next(x for x in md if x.startswith("| bounded:summary · filler pre | 128 | 4 |"))
    assert "| 50.0 [0.0, 100.0] |" in post and "| 25.0 [0.0, 75.0] |" in pre
    # each protocol's guide row is paired with that protocol's summary: -50 and -25 points
    diffs = md[next(i for i, x in enumerate(md) if x.startswith("### Success difference")) :]
    pre = next(x for x in diffs if x.startswith("| bounded:guide · filler pre | 128 |"))
    post = next(x for x in diffs if x.startswith("| bounded:guide · filler post | 128 |"))
    assert pre.split(" | ")[2].startswith("-25.0 [") and post.split(" | ")[2].startswith("-50.0 [")
