"""Seed 003's gates, selection, Tables 2 and 14 and Figures 4, 9 and 10, every number
recomputed by hand from raw episodes with known answers: two readers (R1 = m1, R2 = m2) in one
store are two cells, three DSSR seeds are averaged per game, a failed episode drops its game
from the group and every contrast with it, and a rollout-1 episode (a continuation's) is no
game at all. Gates: a clear pass, a clear fail, and a borderline interval whose lower bound
sits exactly on the threshold (fail: the rule is strict)."""

from __future__ import annotations

import pytest

from statelab.analysis.stats import Interval
from statelab.core import ConfigError
from statelab.run.records import EpisodeRecord
from statelab.run.store import Store
from statelab_seed003.analysis.audit import AuditPoint
from statelab_seed003.analysis.episodes import cooking_cells
from statelab_seed003.analysis.gates import evaluate_gates, select, tables, verdict
from statelab_seed003.analysis.measures import AUDIT_TABLE
from statelab_seed003.analysis.plan import Gate, Plan
from statelab_seed003.analysis.report import seed003_markdown
from statelab_seed003.analysis.tables import (
    fig4,
    fig4_md,
    gain_slope,
    group_kappa,
    group_success,
    pooled_success,
    table14,
)

GAMES = (2000, 2001, 2002, 2003)
S, ORB = "bounded:summary:128", "oracle-bounded:128"
D = [f"bounded:dssr=x/s{i}:128" for i in range(3)]
# wins[(model, history, lag)] = the games won; everything else is lost
WINS = {
    ("m1", S, 0): {2000},
    ("m1", D[0], 0): {2000, 2001},
    ("m1", D[1], 0): {2000},
    ("m1", D[2], 0): {2000, 2001, 2002},
    ("m1", D[0], 20): {2000},
    ("m1", D[0], 40): {2000},
    ("m1", "full", 0): {2000, 2001, 2002},
    ("m1", "full", 20): {2000, 2001, 2002},
    ("m1", "full", 40): {2000, 2001, 2002},
    ("m1", ORB, 0): set(GAMES),
    ("m1", "oracle-bounded:64", 0): {2000, 2001},
    **{("m2", h, 0): set(GAMES) for h in D},
}
FAILED = {("m1", D[1], 20, 2003)}  # the model errored: no outcome


def _components(history):
    budget = history.rsplit(":", 1)[-1] if history != "full" else None
    tags = ["reads-privileged"] if history.startswith("oracle") else []
    return {"history": {"spelling": history, "label": history, "tags": tags,
                        "args": {"budget": int(budget)} if budget else {}}}  # fmt: skip


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "exp" / "store.sqlite"  # <out>/<experiment>/store.sqlite
    path.parent.mkdir()
    st = Store(path, ("env", "model", "history", "writer"))
    hists = [S, ORB, "oracle-bounded:64", "full", *D]
    for model in ("m1", "m2"):
        for h in hists:
            for lag in (0, 20, 40):
                run = f"{model}|{h}|{lag}"
                env = f"cooking:lag={lag}"
                axes = {"env": env, "model": model, "history": h, "writer": "w"}
                st.save_run(run, run, axes, {**axes, "agent": "reader"}, _components(h))
                for g in GAMES:
                    failed = (model, h, lag, g) in FAILED
                    st.commit_episode(
                        EpisodeRecord(run, g, "failed" if failed else "done",
                                      success=g in WINS.get((model, h, lag), set()))
                    )  # fmt: skip
    # a rollout-1 episode (a continuation) that won: never a game of the cell
    st.commit_episode(EpisodeRecord("m1|" + S + "|0", 2001, "done", rollout=1, success=True))
    # audited points (κ): the DSSR seeds at F′ = 0 under m1
    pts = [(D[0], 2000, 1.0), (D[0], 2000, 2.0), (D[1], 2000, 3.0), (D[2], 2001, 0.0)]
    rows = []
    for t, (h, g, k) in enumerate(pts):
        p = AuditPoint(f"m1|{h}|0", g, t, h, 0, 128, 0, "look", None, None, None, None, k)
        rows.append(p.__dict__)
    st.append({AUDIT_TABLE: rows})
    st.append({"test_openings": [{"opened": "t", "experiment": "x", "config_hash": "h",
                                  "env": "cooking", "split": "test", "seeds": "[]",
                                  "opening": 1, "forced": 0, "writers": "[]"}]})  # fmt: skip
    st.close()
    return path


def _eps(path):
    st = Store(path, readonly=True)
    try:
        return cooking_cells(st)
    finally:
        st.close()


def _plan(path, **kw):
    base = {
        "name": "t",
        "validation": str(path),
        "test": str(path),
        "readers": {"R1": "m1", "R2": "m2"},
        "writers": {"SUMMARY": [S], "DSSR": D, "DSSR again": D, "ORACLE": [ORB]},
    }
    return Plan.model_validate({**base, **kw})


def test_cells_key_on_the_reader_and_leave_out_failed_episodes_and_rollouts(store):
    cells = _eps(store)
    rows = {e["row"] for e in cells.eps}
    assert {
        "bounded:summary · reader m1 · writer w",
        "bounded:summary · reader m2 · writer w",
    } <= rows
    assert cells.failed == {f"m1|{D[1]}|20": 1}
    # 2 models x 7 histories x 3 lags x 4 games, less the failed one; no rollout 1
    assert len(cells.eps) == 2 * 7 * 3 * 4 - 1
    assert group_success(cells.eps, [S], 0, "m1") == {2000: 1.0, 2001: 0.0, 2002: 0.0, 2003: 0.0}
    assert group_success(cells.eps, D, 0, "m2") == dict.fromkeys(GAMES, 1.0)


def test_three_seeds_average_per_game_and_a_failed_episode_drops_the_game(store):
    eps = _eps(store).eps
    assert group_success(eps, D, 0, "m1") == {2000: 1.0, 2001: 2 / 3, 2002: 1 / 3, 2003: 0.0}
    at20 = group_success(eps, D, 20, "m1")
    assert set(at20) == {2000, 2001, 2002} and at20[2000] == pytest.approx(1 / 3)
    pooled = pooled_success(eps, D, [20, 40], "m1")
    assert pooled == pytest.approx({2000: 1 / 3, 2001: 0.0, 2002: 0.0})
    slope = gain_slope(eps, D, [S], [0, 20, 40], "m1")
    assert slope == pytest.approx({2000: (1 / 3) / 40, 2001: (-2 / 3) / 40, 2002: (-1 / 3) / 40})


def test_the_report_shows_two_readers_in_one_store_as_two_rows(store, tmp_path):
    st = Store(store, readonly=True)
    try:
        md, _ = seed003_markdown(st, tmp_path)
    finally:
        st.close()
    text = "\n".join(md)
    # R1's summary wins 1 of 4 at F′ = 0, R2's none: two rows, not one overwritten
    r1 = next(x for x in md if x.startswith(f"| {S.rsplit(':', 1)[0]} · reader m1"))
    r2 = next(x for x in md if x.startswith(f"| {S.rsplit(':', 1)[0]} · reader m2"))
    assert "| 25.0 [0.0, 75.0] |" in r1 and "| 0.0 [0.0, 0.0] |" in r2
    assert "Failed episodes: 1 (in 1 run(s))" in text


def test_table2_cells_and_the_pooled_contrasts(store, tmp_path):
    plan = _plan(store, table2={"rows": ["DSSR", "SUMMARY"],
                                "contrasts": [["DSSR", "SUMMARY"]]})  # fmt: skip
    md, files = tables(plan, tmp_path / "out")
    dssr_r1 = next(x for x in md if x.startswith("| DSSR | R1 |"))
    # F′ = 0: (1 + 2/3 + 1/3 + 0) / 4 = 50%; F′ = 20: games 2000-2002 only, 1/9 = 11.1%
    assert dssr_r1.split(" | ")[2].startswith("50.0 [") and " 11.1 [" in dssr_r1
    assert next(x for x in md if x.startswith("| DSSR | R2 |")).split(" | ")[2] == (
        "100.0 [100.0, 100.0]"
    )
    contrast = next(x for x in md if x.startswith("| DSSR − SUMMARY | R1 |"))
    # F′ = 0: differences 0, 2/3, 1/3, 0 -> +25.0; pooled {20, 40}: 1/3, 0, 0 -> 11.1
    assert "| 25.0 [" in contrast and "| 11.1 [0.0, 33.3] |" in contrast
    assert files["tables"].read_text().count("Table 2") == 1


def test_table14_rows(store):
    eps = _eps(store).eps
    md = table14(eps, [64, 128, 256], "m1")
    assert md[4].startswith("| full | – | 75.0 [") and md[4].count("75.0 [") == 3
    assert md[5].startswith("| oracle-bounded | 64 | 50.0 [")
    assert md[6].startswith("| oracle-bounded | 128 | 100.0 [100.0, 100.0] |")
    assert any(x.startswith("| bounded:summary | 128 | 25.0 [") for x in md)
    assert not any("| 256 |" in x for x in md)  # no B = 256 run: no row


def test_kappa_pools_the_seeds_points_by_game(store, tmp_path):
    st = Store(store, readonly=True)
    try:
        audit = st.rows(AUDIT_TABLE)
    finally:
        st.close()
    k = group_kappa(audit, D, 0)
    assert (k.mean, k.games, k.points) == (1.5, 2, 4)  # (1 + 2 + 3 + 0) / 4
    assert group_kappa(audit, D[:1], 0).mean == 1.5 and group_kappa(audit, D, 20).games == 0
    plan = _plan(store, fig9={"K=12 (3 seeds)": "DSSR"}, fig10={"seed 0": "DSSR"})
    md, files = tables(plan, tmp_path / "out")
    line = next(x for x in md if x.startswith("| K=12 (3 seeds) |"))
    assert line.split(" | ")[1].startswith("1.50 [")
    assert files["fig9"].is_file() and files["fig10"].is_file()


def test_fig4_counts_points_without_a_directive_and_the_scores_preference(tmp_path):
    recs = [
        {"lag": 40, "post_reveal": True, "coverage": [0, 0, 0], "score": [1, 2, 3]},
        {"lag": 40, "post_reveal": True, "coverage": [2, 0, 1], "score": [0.5, 1.0, 0.2]},
        {"lag": 40, "post_reveal": False, "coverage": [0, 0], "score": [1, 2]},
        {"lag": 0, "post_reveal": True, "coverage": [1, 1], "score": [1, 2]},
    ]
    got = fig4(recs)
    assert got[40] == {"post_reveal": 2, "none_hold": 1, "pairs": 3, "prefer_complete": 2}
    assert got[0] == {"post_reveal": 1, "none_hold": 0, "pairs": 0, "prefer_complete": 0}
    md = fig4_md(got)
    assert "| 40 | 2 | 1 (50.0%) | 3 | 2 (66.7%) |" in md and "| 0 | 1 | 0 (0.0%) | 0 | – |" in md
    md, _ = tables(Plan.model_validate({"name": "t"}), tmp_path / "o", fig4_records=recs)
    assert "| 40 | 2 | 1 (50.0%) | 3 | 2 (66.7%) |" in md


def test_gates_pass_fail_and_borderline(store):
    gates = [
        # R2: DSSR wins every game at F′ = 0, SUMMARY none: every difference 1 -> pass
        {"id": "G1a", "split": "validation", "what": "R2 zero lag", "a": "DSSR",
         "b": "SUMMARY", "lags": [0], "reader": "R2"},
        # R1 at F′ = 0: differences 0, 2/3, 1/3, 0; four zeros drawn w.p. 1/16 > 2.5%, so
        # the lower bound is exactly 0: on the threshold, and the rule is strict -> fail
        {"id": "G1b", "split": "validation", "what": "R1 zero lag", "a": "DSSR",
         "b": "SUMMARY", "lags": [0], "reader": "R1"},
        # the same by its mean (25 points) -> pass
        {"id": "G1c", "split": "validation", "what": "R1 mean", "a": "DSSR", "b": "SUMMARY",
         "lags": [0], "reader": "R1", "rule": "mean"},
        # the lag-gain slope: mean of the per-game slopes -1/180 per step -> fail
        {"id": "G2b", "split": "test", "what": "slope", "kind": "slope", "a": "DSSR",
         "b": "SUMMARY", "lags": [0, 20, 40], "reader": "R1"},
    ]  # fmt: skip
    got = {r.gate.id: r for r in evaluate_gates(_plan(store, gates=gates))}
    assert got["G1a"].verdict == "pass" and got["G1a"].interval.low == 1.0
    assert got["G1b"].interval.low == 0.0 and got["G1b"].interval.mean == pytest.approx(0.25)
    assert got["G1b"].verdict == "fail" and got["G1c"].verdict == "pass"
    assert got["G2b"].interval.mean == pytest.approx(-1 / 180) and got["G2b"].verdict == "fail"
    assert got["G2b"].interval.games == 3  # game 2003 failed at F′ = 20: left out
    assert "G2b (test) slope: -0.56 [" in got["G2b"].line()  # -100/180 points per step
    assert "points/step, 3 games" in got["G2b"].line()
    assert "G1b (validation) R1 zero lag: 25.0 [0.0, " in got["G1b"].line()
    assert got["G1b"].line().endswith("lower bound > 0: FAIL")


def test_verdict_rule_is_strict_and_no_games_fail():
    g = Gate(id="G", split="test", what="w", a="x", b="y", lags=[0], above=0.05)
    assert verdict(g, Interval(0.1, 0.05, 0.2, 10, 10)) == "fail"
    assert verdict(g, Interval(0.1, 0.0501, 0.2, 10, 10)) == "pass"
    assert verdict(g, Interval(float("nan"), float("nan"), float("nan"), 0, 0)) == "fail"


def test_g2_is_refused_on_a_test_store_never_opened(tmp_path):
    path = tmp_path / "store.sqlite"
    st = Store(path, ("env", "history"))
    st.close()
    gate = {"id": "G2a", "split": "test", "what": "w", "a": "S", "b": "S", "lags": [0]}
    plan = Plan.model_validate(
        {"name": "t", "test": str(path), "writers": {"S": [S]}, "gates": [gate]}
    )
    with pytest.raises(ConfigError, match="never opened"):
        evaluate_gates(plan)


def test_gates_before_the_test_opening_evaluate_g1_and_say_g2_is_pending(store, tmp_path):
    """The seed's order: G1 and the selection on validation, then the test opening; the
    command runs before a test store exists and prints G2 as pending, not evaluated."""
    import yaml
    from typer.testing import CliRunner

    from statelab.cli import app
    from statelab_seed003.analysis.gates import test_pending

    gates = [
        {"id": "G1a", "split": "validation", "what": "R1 level", "kind": "level", "a": "DSSR",
         "lags": [0], "reader": "R1"},
        {"id": "G2a", "split": "test", "what": "R1 gain", "a": "DSSR", "b": "SUMMARY",
         "lags": [0], "reader": "R1"},
    ]  # fmt: skip
    missing = tmp_path / "nothing" / "store.sqlite"
    plan = _plan(store, gates=gates).model_dump(exclude_none=True) | {"test": str(missing)}
    (tmp_path / "plan.yaml").write_text(yaml.safe_dump(plan))
    assert "no test store yet" in (test_pending(Plan.model_validate(plan)) or "")
    res = CliRunner().invoke(app, ["seed003", "gates", str(tmp_path / "plan.yaml")])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    g1 = evaluate_gates(_plan(store, gates=gates[:1]))[0].line()
    assert g1 in lines and g1.startswith("G1a (validation) R1 level: ")
    assert [x for x in lines if x.startswith("G2a")] == [
        f"G2a (test) R1 gain: not evaluated: no test store yet ({missing}): run the test "
        "opening after G1 and the selection"
    ]
    # the fixture's store records a test opening: nothing pending, G2 is evaluated
    assert test_pending(_plan(store, gates=gates)) is None


def test_selection_takes_the_best_validation_mean_and_ties_keep_the_order(store):
    plan = _plan(store, selection={"candidates": ["SUMMARY", "DSSR", "DSSR again"],
                                   "lags": [0, 20, 40], "reader": "R1"})  # fmt: skip
    got = select(plan)
    # DSSR: games 2000-2002 (2003 failed at 20): (5/9 + 2/9 + 1/9) / 3 = 8/27; SUMMARY 1/12
    assert [g[0] for g in got] == ["DSSR", "DSSR again", "SUMMARY"]
    assert got[0][1] == pytest.approx(8 / 27) and got[0][2] == 3
    assert got[2][1] == pytest.approx(1 / 12) and got[2][2] == 4


def test_a_plan_naming_an_unknown_writer_is_refused():
    with pytest.raises(ValueError, match="not in writers"):
        Plan.model_validate({"name": "t", "table2": {"rows": ["DSSR"]}})


def test_statelab_gates_and_tables_print_verdicts_and_write_the_tables(store, tmp_path):
    import yaml
    from typer.testing import CliRunner

    from statelab.cli import app

    gate = {"id": "G1a", "split": "validation", "what": "R2 zero lag", "a": "DSSR",
            "b": "SUMMARY", "lags": [0], "reader": "R2"}  # fmt: skip
    plan = _plan(store, gates=[gate], out=str(tmp_path / "an"),
                 selection={"candidates": ["SUMMARY", "DSSR"], "lags": [0], "reader": "R1"},
                 table2={"rows": ["DSSR"]})  # fmt: skip
    path = tmp_path / "analysis.yaml"
    path.write_text(yaml.safe_dump(plan.model_dump(mode="json")))
    res = CliRunner().invoke(app, ["seed003", "gates", str(path)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("G1a (validation) R2 zero lag: 100.0 [100.0, 100.0] points")
    assert lines[0].endswith(": PASS")
    assert "selected DSSR" in lines[1] and lines[2] == "  DSSR: 50.0% over 4 games"
    res = CliRunner().invoke(app, ["seed003", "tables", str(path)])
    assert res.exit_code == 0, res.output
    assert "| DSSR | R1 | 50.0 [" in (tmp_path / "an" / "seed003_tables.md").read_text()
    old = CliRunner().invoke(app, ["gates", str(path)])  # the old name: the same, after a note
    assert old.exit_code == 0 and old.stdout == CliRunner().invoke(
        app, ["seed003", "gates", str(path)]
    ).stdout
    assert old.stderr.startswith("note: `statelab gates` moved to `statelab seed003 gates`")


def test_the_shipped_plan_names_only_writers_and_readers_its_experiments_run():
    from pathlib import Path

    import yaml

    from statelab_seed003.analysis.plan import load_plan

    root = Path(__file__).parents[4]
    plan = load_plan(root / "configs/seed003/analysis.yaml")
    grids = {}
    for split in ("validation", "test"):
        cfg = yaml.safe_load((root / getattr(plan, split)).read_text())
        assert cfg["seeds"] == split
        grids[split] = (
            set(cfg["grid"]["history"]),
            set(cfg["grid"].get("model", [cfg.get("model")])),
        )
    assert plan.selection is not None
    picks = {w for c in plan.selection.candidates for w in plan.writers[c]}
    for g in plan.gates:
        hist, models = grids[g.split]
        a = picks if g.a == "selected" else set(plan.writers[g.a])  # any candidate may be picked
        assert a | set(plan.writers[g.b or g.a] if g.a != "selected" else []) <= hist, g.id
        assert g.b is None or set(plan.writers[g.b]) <= hist, g.id
        assert plan.readers[g.reader or "R1"] in models, g.id
    test_hist, test_models = grids["test"]
    used = [*plan.table2.rows, *plan.fig9.values(), *plan.fig10.values()]
    assert all(set(plan.writers[w]) <= test_hist for w in used)
    assert set(plan.readers.values()) == test_models  # R1 and R2 both play the test split
    assert all(set(plan.writers[c]) <= grids["validation"][0] for c in plan.selection.candidates)
    assert {g.id for g in plan.gates} == {"G1a", "G1b", "G2a", "G2b", "G2c"}
    assert {g.id for g in plan.gates if g.a == "selected"} == {"G1a", "G1b"}


def test_the_report_lists_test_audits_and_amendments(store, tmp_path):
    from statelab.run.ledgers import AUDITS_TABLE, add_amendment

    out = store.parent.parent  # the ledgers' out holds the experiment's folder
    assert out == tmp_path
    add_amendment(out, "A5", "pool the three seeds in G2b", stage="the report")
    st = Store(store)
    st.append({AUDITS_TABLE: [{"started": "2026-01-02T00:00:00+00:00", "experiment": "x",
                               "config_hash": "h", "env": "cooking", "split": "test",
                               "audit": 1, "forced": 0}]})  # fmt: skip
    md, _ = seed003_markdown(st, tmp_path)
    st.close()
    text = "\n".join(md)
    assert "**The test split was audited**: 1 audit(s) recorded, first at 2026-01-02" in text
    assert "- amendment A5 (before the report)" in text
    assert text.count("pool the three seeds in G2b") == 1


# -- Table 14's DSSR row: the three seeds' mean at every budget ---------------------------------
T14 = {b: [f"bounded:dssr=x/s{i}:{b}" for i in range(3)] for b in (64, 128)}
T14_GAMES = (2000, 2001, 2002)
# wins[(budget, seed, lag)]; everything else lost
T14_WINS = {
    (64, 0, 0): {2000, 2001, 2002},  # seed 0 alone: 100%; the mean: (2/3 + 1/3 + 1/3) / 3
    (64, 1, 0): {2000},
    (128, 1, 0): {2000, 2001},  # the mean: (2/3 + 2/3 + 1/3) / 3 = 55.6%
    (128, 2, 0): {2000, 2001, 2002},
    (64, 0, 20): {2001},  # seed 1's game 2002 failed: 2 games, (0 + 1/3) / 2 = 16.7%
}


@pytest.fixture
def frontier(tmp_path):
    path = tmp_path / "test" / "store.sqlite"
    path.parent.mkdir()
    st = Store(path, ("env", "model", "history", "writer"))
    hists = ["full", "bounded:summary:64", *T14[64], *T14[128]]
    for model in ("m1", "m2"):
        for h in hists:
            for lag in (0, 20):
                run = f"{model}|{h}|{lag}"
                axes = {"env": f"cooking:lag={lag}", "model": model, "history": h, "writer": "w"}
                st.save_run(run, run, axes, {**axes, "agent": "reader"}, _components(h))
                dssr = "dssr" in h
                b, i = (int(h.rsplit(":", 1)[1]), int(h.split("/s")[1][0])) if dssr else (0, -1)
                for g in T14_GAMES:
                    failed = (model, b, i, lag, g) == ("m1", 64, 1, 20, 2002)
                    won = model == "m2" or g in T14_WINS.get((b, i, lag), set())
                    st.commit_episode(EpisodeRecord(run, g, "failed" if failed else "done",
                                                    success=won))  # fmt: skip
    st.close()
    return path


def test_table14_prints_dssr_as_the_three_seeds_mean_at_every_budget(frontier, tmp_path):
    plan = Plan.model_validate({
        "name": "t", "test": str(frontier), "readers": {"R1": "m1", "R2": "m2"},
        "writers": {"DSSR": T14[128]},
        "table14": {"budgets": [64, 128, 256], "reader": "R1", "means": ["DSSR"]},
    })  # fmt: skip
    md, _ = tables(plan, tmp_path / "out")
    rows = {tuple(x.split(" | ")[:2]): x for x in md if x.startswith("| ")}
    at64, at128 = rows[("| DSSR", "64")], rows[("| DSSR", "128")]
    assert at64.split(" | ")[2].startswith("44.4 [") and at64.split(" | ")[3].startswith("16.7 [")
    assert at128.split(" | ")[2].startswith("55.6 [") and " | 0.0 [0.0, 0.0] |" in at128
    assert ("| DSSR", "256") not in rows  # no DSSR episode at B = 256: no row
    assert not any(x.startswith("| bounded:dssr=") for x in md)  # no row per seed
    assert rows[("| bounded:summary", "64")].split(" | ")[2] == "0.0 [0.0, 0.0]"
    assert any(x.startswith("DSSR: each game's mean over 3 writers (bounded:dssr=x/s0") for x in md)
    # without `means` each seed is its own row, seed 0 alone at 100%
    eps = _eps(frontier).eps
    plain = table14(eps, [64, 128, 256], "m1")
    assert any(x.startswith("| bounded:dssr=x/s0 | 64 | 100.0 [100.0, 100.0] |") for x in plain)
    with pytest.raises(ValueError, match="writer 'DSSR 64' is not in writers"):
        Plan.model_validate({"name": "t", "table14": {"means": ["DSSR 64"]}})


@pytest.mark.parametrize("name", ["analysis.yaml", "analysis_gpu.yaml"])
def test_the_shipped_table14_averages_the_three_seeds_the_test_plays_at_every_budget(name):
    from pathlib import Path

    import yaml

    from statelab.analysis.audit.measures import form_of
    from statelab_seed003.analysis.plan import load_plan

    root = Path(__file__).parents[4]
    plan = load_plan(root / "configs/seed003" / name)
    assert plan.table14 is not None and plan.table14.means == ["DSSR"]
    assert plan.table14.budgets == [64, 128, 256] and len(plan.writers["DSSR"]) == 3
    test = set(yaml.safe_load((root / str(plan.test)).read_text())["grid"]["history"])
    forms = {form_of(s) for s in plan.writers["DSSR"]}
    assert len(forms) == 3
    for b in plan.table14.budgets:
        assert {f"{f}:{b}" for f in forms} <= test, b
