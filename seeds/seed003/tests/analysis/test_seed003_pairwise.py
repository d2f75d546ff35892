"""Seed 003's §5.5 pairwise differences among trained writers and the tables of a store holding
both filler protocols, every printed number recomputed by hand from a constructed store with
known answers: three DSSR seeds averaged per game, a failed episode that drops its game, won
rollout-1 episodes that are no games, a second reader (m2, winning everything) that the R1
section must not see, and privileged or model-free histories that are no LLM writer."""

from __future__ import annotations

from typing import Any

import pytest

from statelab.analysis.stats import paired_bootstrap
from statelab.run.records import EpisodeRecord
from statelab.run.store import Store
from statelab_seed003.analysis.audit import AuditPoint
from statelab_seed003.analysis.episodes import cooking_cells
from statelab_seed003.analysis.gates import evaluate_gates, select, tables
from statelab_seed003.analysis.measures import AUDIT_TABLE
from statelab_seed003.analysis.pairwise import excludes_zero, llm_ceiling, pairwise_md
from statelab_seed003.analysis.plan import Pairwise, Plan

GAMES = (2000, 2001, 2002, 2003)
D = [f"bounded:dssr=x/s{i}:128" for i in range(3)]
OUT, K1 = "bounded:dssr=x/outcome:128", "bounded:dssr=x/k1:128"
S64, D64, ORB64, LK64 = (
    "bounded:summary:64",
    "bounded:dssr=x/s0:64",
    "oracle-bounded:64",
    "last-k:64",
)
# wins[(model, history, lag)]: the games won; everything else is lost
WINS = {
    ("m1", D[0], 0): {2000, 2001},
    ("m1", D[1], 0): {2000},
    ("m1", D[2], 0): {2000, 2001, 2002},
    ("m1", D[0], 20): {2000},
    ("m1", OUT, 0): {2000},
    ("m1", OUT, 20): {2000, 2001},
    ("m1", OUT, 40): {2001},
    ("m1", K1, 0): set(GAMES),
    **{("m2", h, 0): set(GAMES) for h in (*D, OUT)},  # R2 wins everything: not R1's section
    ("m1", S64, 20): {2000, 2001, 2002},  # 75%: the best LLM-written state at B = 64
    ("m1", D64, 0): {2000, 2001},  # 2002 failed: 2 of 3 games
    ("m1", ORB64, 0): set(GAMES),  # privileged: no LLM writer
    ("m1", LK64, 0): set(GAMES),  # raw steps: no LLM writer
}
FAILED = {("m1", D[1], 20, 2003), ("m1", D64, 0, 2002)}
ROLLOUT_WINS = [("m1", S64, 20, 2003), ("m1", D[1], 0, 2003)]  # continuations: no games


def _components(history: str) -> dict[str, Any]:
    budget = int(history.rsplit(":", 1)[-1])
    tags = ["reads-privileged"] if history.startswith("oracle") else (
        [] if history.startswith("last-k") else ["needs-model"])  # fmt: skip
    return {"history": {"spelling": history, "label": history, "tags": tags,
                        "args": {"budget": budget}}}  # fmt: skip


def _save(st: Store, run: str, model: str, h: str, env: str) -> None:
    axes = {"env": env, "model": model, "history": h, "writer": "w"}
    st.save_run(run, run, axes, {**axes, "agent": "reader"}, _components(h))


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "test" / "store.sqlite"
    path.parent.mkdir()
    st = Store(path, ("env", "model", "history", "writer"))
    for model in ("m1", "m2"):
        for h in (*D, OUT, K1, S64, D64, ORB64, LK64):
            for lag in (0, 20, 40):
                run = f"{model}|{h}|{lag}"
                _save(st, run, model, h, f"cooking:lag={lag}")
                for g in GAMES:
                    failed = (model, h, lag, g) in FAILED
                    won = g in WINS.get((model, h, lag), set())
                    st.commit_episode(EpisodeRecord(run, g, "failed" if failed else "done",
                                                    success=won))  # fmt: skip
    for model, h, lag, g in ROLLOUT_WINS:
        st.commit_episode(EpisodeRecord(f"{model}|{h}|{lag}", g, "done", rollout=1, success=True))
    st.close()
    return path


def _plan(path, **kw):
    writers = {"DSSR": D, "OUTCOME": [OUT], "K=1": [K1]}
    base = {"name": "t", "test": str(path), "readers": {"R1": "m1", "R2": "m2"},
            "writers": writers}  # fmt: skip
    return Plan.model_validate({**base, **kw})


PAIRWISE = {"rows": ["DSSR", "OUTCOME", "K=1"], "reader": "R1", "spread": "DSSR"}


def _cols(line):
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def _pt(values):
    i = paired_bootstrap(dict(enumerate(values)))
    return f"{i.text(1, 100)}{' *' if excludes_zero(i) else ''} ({i.games} games)"


def test_pairwise_differences_among_trained_writers(store, tmp_path):
    md, _ = tables(_plan(store, pairwise=PAIRWISE), tmp_path / "o")
    text = "\n".join(md)
    row = {_cols(x)[0]: _cols(x) for x in md if x.startswith("| ") and " − " in x[:20]}
    del row["a − b"]  # the header
    # per game at F′ = 0: DSSR 1, 2/3, 1/3, 0 (the seeds' mean; the won rollout of seed 1 on
    # 2003 is no game); OUTCOME 1, 0, 0, 0; K=1 1, 1, 1, 1
    assert row["DSSR − OUTCOME"][2] == _pt([0, 2 / 3, 1 / 3, 0])
    assert row["DSSR − OUTCOME"][2].startswith("25.0 [0.0, ")
    assert row["DSSR − K=1"][2] == _pt([0, -1 / 3, -2 / 3, -1])
    assert row["OUTCOME − K=1"][2] == _pt([0, -1, -1, -1])
    assert row["OUTCOME − K=1"][2].startswith("-75.0 [")
    # pooled over F′ ∈ {20, 40}: DSSR's seed 1 failed on 2003 at 20, so DSSR has 2000-2002:
    # (1/3 + 0) / 2, 0, 0; OUTCOME (1 + 0) / 2, (1 + 1) / 2, 0, 0; K=1 0 everywhere
    assert row["DSSR − OUTCOME"][3] == _pt([1 / 6 - 1 / 2, -1, 0])
    assert row["DSSR − OUTCOME"][3].startswith("-44.4 [")
    assert row["DSSR − OUTCOME"][3].endswith("(3 games)")
    assert row["DSSR − K=1"][3] == _pt([1 / 6, 0, 0])
    assert row["OUTCOME − K=1"][3] == _pt([1 / 2, 1, 0, 0])
    assert all(r[1] == "R1" for r in row.values())  # R2 is not asked for
    # significance: DSSR − K=1 and OUTCOME − K=1 at F′ = 0; none pooled
    assert row["OUTCOME − K=1"][2].endswith(" * (4 games)")
    assert row["DSSR − K=1"][2].endswith(" * (4 games)")
    assert not any(" * " in c for c in row["DSSR − OUTCOME"])
    assert "Reader R1: 2 of 3 pairwise intervals exclude 0 at F′ = 0, 0 of 3 pooled" in text
    # the seeds' zero-lag spread: 2/4, 1/4, 3/4 (the rollout of seed 1 does not count)
    assert (
        f"{D[0]}: 50.0% (4 games); {D[1]}: 25.0% (4 games); {D[2]}: 75.0% (4 games);"
        " spread 25.0–75.0%." in text
    )
    # B = 64: ORACLE-B and last-k win everything but write no LLM state; the summary at
    # F′ = 20 wins 3 of 4 (its rollout on 2003 is no game); DSSR at F′ = 0 wins 2 of the 3
    # games that finished (2002 failed)
    assert (
        f"At B = 64, reader R1, the highest success of an LLM-written state over every F′: "
        f"75.0% ({S64} at F′ = 20, 4 games)." in text
    )


def test_the_llm_ceiling_leaves_out_failed_episodes_and_other_readers(store):
    st = Store(store, readonly=True)
    try:
        eps = cooking_cells(st).eps
    finally:
        st.close()
    assert llm_ceiling(eps, 64, "m1") == (S64, 20, 0.75, 4)
    mine = [e for e in eps if e["history"] != S64]
    assert llm_ceiling(mine, 64, "m1") == (D64, 0, 2 / 3, 3)  # the failed game is no loss
    assert llm_ceiling(eps, 64, "m2") == (D64, 0, 0.0, 4)  # m2 lost every B = 64 game
    assert llm_ceiling(eps, 256, "m1") is None
    md = pairwise_md(eps, _plan(store).writers, Pairwise(rows=["DSSR", "K=1"]), {"R2": "m2"})
    # m2: DSSR wins every game at F′ = 0, K=1 none; both lose at 20 and 40
    assert f"| DSSR − K=1 | R2 | {_pt([1, 1, 1, 1])} | {_pt([0, 0, 0, 0])} |" in md
    assert any("none (no LLM-written state" in x for x in
               pairwise_md(eps, _plan(store).writers, Pairwise(rows=["DSSR", "K=1"],
                                                               ceiling_budget=32), {}))  # fmt: skip


def test_a_plan_naming_an_unknown_pairwise_writer_is_refused(store):
    with pytest.raises(ValueError, match="not in writers"):
        _plan(store, pairwise={"rows": ["DSSR", "NOPE"]})
    with pytest.raises(ValueError, match="not in readers"):
        _plan(store, pairwise={"rows": ["DSSR", "K=1"], "reader": "R3"})


# -- a store holding both filler protocols --------------------------------------------------
S, G = "bounded:summary:128", "bounded:guide:128"
# (protocol, history, lag) -> the games won by m1
PWINS = {
    ("post", S, 0): {2000, 2001},
    ("post", G, 0): {2000, 2001, 2002, 2003},
    ("pre", S, 0): {2000},
    ("pre", G, 0): set(),
    ("post", S, 40): {2000},
    ("pre", G, 40): {2000, 2001},
}


@pytest.fixture
def two_protocols(tmp_path):
    path = tmp_path / "both" / "store.sqlite"
    path.parent.mkdir()
    st = Store(path, ("env", "model", "history", "writer"))
    rows = []
    for proto in ("post", "pre"):
        for h in (S, G):
            for lag in (0, 40):
                run = f"{proto}|{h}|{lag}"
                env = f"cooking:lag={lag}" + ("+filler=pre" if proto == "pre" else "")
                _save(st, run, "m1", h, env)
                for g in GAMES:
                    won = g in PWINS.get((proto, h, lag), set())
                    st.commit_episode(EpisodeRecord(run, g, "done", success=won))
                # κ: post halves SUMMARY's κ with GUIDE, pre doubles it
                k = {("post", S): 2.0, ("post", G): 1.0, ("pre", S): 1.0, ("pre", G): 2.0}[proto, h]
                p = AuditPoint(run, 2000, 1, h, lag, 128, 0, "look", None, None, None, None, k)
                rows.append(p.__dict__)
    st.append({AUDIT_TABLE: rows})
    st.close()
    return path


def test_tables_of_a_two_protocol_store_are_printed_per_protocol(two_protocols, tmp_path):
    plan = Plan.model_validate({
        "name": "t", "test": str(two_protocols), "validation": str(two_protocols),
        "readers": {"R1": "m1"}, "writers": {"SUMMARY": [S], "GUIDE": [G]},
        "table2": {"rows": ["GUIDE", "SUMMARY"], "contrasts": [["GUIDE", "SUMMARY"]],
                   "pooled_lags": [40]},
        "pairwise": {"rows": ["GUIDE", "SUMMARY"], "reader": "R1", "ceiling_budget": None},
        "kappa_contrasts": {"pairs": [["GUIDE", "SUMMARY"]], "pooled_lags": [40]},
        "fig10": {"GUIDE": "GUIDE"},
    })  # fmt: skip
    md, files = tables(plan, tmp_path / "o")

    def block(title):
        i = md.index(title)
        return md[i : next((j for j in range(i + 1, len(md)) if md[j].startswith("### ")), len(md))]

    post = block("### Table 2: test success (%) by writer and reader · filler post")
    pre = block("### Table 2: test success (%) by writer and reader · filler pre")
    # F′ = 0 and 40: post GUIDE 100% and 0%, SUMMARY 50% and 25%; pre GUIDE 0% and 50%,
    # SUMMARY 25% and 0% (mixed, one game's episodes would overwrite the other's)
    assert "| GUIDE | R1 | 100.0 [100.0, 100.0] | 0.0 [0.0, 0.0] |" in post
    assert "| SUMMARY | R1 | 50.0 [0.0, 100.0] | 25.0 [0.0, 75.0] |" in post
    assert "| GUIDE | R1 | 0.0 [0.0, 0.0] | 50.0 [0.0, 100.0] |" in pre
    assert "| SUMMARY | R1 | 25.0 [0.0, 75.0] | 0.0 [0.0, 0.0] |" in pre
    gain = _cols(next(x for x in post if x.startswith("| GUIDE − SUMMARY | R1 |")))
    assert gain[2] == paired_bootstrap({0: 0, 1: 0, 2: 1, 3: 1}).text(1, 100)
    gain = _cols(next(x for x in pre if x.startswith("| GUIDE − SUMMARY | R1 |")))
    assert gain[3] == paired_bootstrap({0: 1, 1: 1, 2: 0, 3: 0}).text(1, 100)
    pair = block("### §5.5: pairwise differences among trained writers (B = 128) · filler pre")
    assert any(x.startswith("| GUIDE − SUMMARY | R1 | " + _pt([-1, 0, 0, 0])) for x in pair)
    # κ at F′ = 0 and 40 on game 2000: GUIDE halves it under post, doubles it under pre
    kpost = block("### Round-by-round κ contrasts (B = 128): relative change of mean κ (%)"
                  " · filler post")  # fmt: skip
    kpre = block("### Round-by-round κ contrasts (B = 128): relative change of mean κ (%)"
                 " · filler pre")  # fmt: skip
    assert "| GUIDE vs SUMMARY | -50 [-50, -50]% (1 games) | -50 [-50, -50]% (1 games) |" in kpost
    assert "| GUIDE vs SUMMARY | 100 [100, 100]% (1 games) | 100 [100, 100]% (1 games) |" in kpre
    fig = block("### Figure 10: κ by F′ (test split, game-clustered 95% intervals) · filler pre")
    assert "| GUIDE | 2.00 [2.00, 2.00] | 2.00 [2.00, 2.00] |" in fig
    assert {files["fig10 post"].name, files["fig10 pre"].name} == {
        "seed003_fig10_post.png", "seed003_fig10_pre.png"}  # fmt: skip
    assert sum(x.startswith("### Table 2") for x in md) == 2


def test_gates_and_selection_read_one_protocol(two_protocols):
    gate = {"id": "G1a", "split": "validation", "what": "GUIDE - SUMMARY at 0", "a": "GUIDE",
            "b": "SUMMARY", "lags": [0], "rule": "mean"}  # fmt: skip
    plan = Plan.model_validate({
        "name": "t", "validation": str(two_protocols), "writers": {"SUMMARY": [S], "GUIDE": [G]},
        "gates": [gate, {**gate, "id": "G1p", "protocol": "pre"}],
        "selection": {"candidates": ["SUMMARY", "GUIDE"], "lags": [0, 40]},
    })  # fmt: skip
    got = {r.gate.id: r for r in evaluate_gates(plan)}
    # post: GUIDE 1, 1, 1, 1 - SUMMARY 1, 1, 0, 0 = +50; pre: 0 - (1, 0, 0, 0) = -25
    assert got["G1a"].interval.mean == pytest.approx(0.5) and got["G1a"].verdict == "pass"
    assert got["G1p"].interval.mean == pytest.approx(-0.25) and got["G1p"].verdict == "fail"
    # the selection (post): GUIDE (1 + 0) / 2 per game = 50%; SUMMARY (2 + 1) / 8 = 37.5%
    ranked = select(plan)
    assert [(c, m, n) for c, m, n in ranked] == [("GUIDE", 0.5, 4), ("SUMMARY", 0.375, 4)]


def test_appendix_f_kappa_at_f40_minus_f0_per_protocol(tmp_path):
    """κ at F = 40 minus F = 0 per writer, per protocol: pre SUMMARY (0.9 + 0.5) / 2 − (1.0 +
    1.2 + 0.8) / 3 = −0.30 over games 1 and 2 (game 3 has no F = 0 point: not in the
    difference, but in the F = 40 mean); post SUMMARY 1.5 − 1.0 = +0.50; another reader's
    point is left out."""
    path = tmp_path / "f" / "store.sqlite"
    path.parent.mkdir()
    st = Store(path, ("env", "model", "history", "writer"))
    points = {  # (protocol, lag) -> [(game, κ)]
        ("pre", 0): [(1, 1.0), (1, 1.2), (2, 0.8)],
        ("pre", 40): [(1, 0.9), (2, 0.5), (3, 3.0)],
        ("post", 0): [(1, 1.0), (2, 1.0)],
        ("post", 40): [(1, 1.5), (2, 1.5)],
    }
    rows = []
    for (proto, lag), pts in points.items():
        for model in ("m1", "m2"):
            run = f"{model}|{proto}|{lag}"
            _save(st, run, model, S, f"cooking:lag={lag}+filler={proto}")
            for t, (g, k) in enumerate(pts):
                kappa = k if model == "m1" else 9.0
                p = AuditPoint(run, g, t, S, lag, 128, 0, "look", None, None, None, None, kappa)
                rows.append(p.__dict__)
    st.append({AUDIT_TABLE: rows})
    st.close()
    plan = Plan.model_validate({
        "name": "t", "validation": str(path), "readers": {"R1": "m1"},
        "writers": {"SUMMARY": [S]},
        "filler_kappa": {"rows": ["SUMMARY"], "lags": [0, 40], "reader": "R1"},
    })  # fmt: skip
    md, _ = tables(plan, tmp_path / "o")
    pre = md.index("### Appendix F: κ at F = 40 minus F = 0 (B = 128), nats · filler pre")
    post = md.index("### Appendix F: κ at F = 40 minus F = 0 (B = 128), nats · filler post")
    line = next(x for x in md[pre:] if x.startswith("| SUMMARY |"))
    cols = _cols(line)
    assert cols[1].startswith("1.00 [") and cols[2].startswith("1.47 [")  # (0.9+0.5+3)/3
    assert cols[3].startswith("-0.30 [") and cols[3].endswith("(2 games)")
    line = next(x for x in md[post:] if x.startswith("| SUMMARY |"))
    assert (
        line == "| SUMMARY | 1.00 [1.00, 1.00] | 1.50 [1.50, 1.50] | 0.50 [0.50, 0.50] (2 games) |"
    )


def test_the_shipped_plan_names_the_writers_its_experiments_run_for_these_sections():
    from pathlib import Path

    import yaml

    from statelab_seed003.analysis.plan import load_plan

    root = Path(__file__).parents[4]
    plan = load_plan(root / "configs/seed003/analysis.yaml")
    assert plan.pairwise is not None and plan.filler_kappa is not None
    test = yaml.safe_load((root / str(plan.test)).read_text())
    assert plan.pairwise.split == "test" and test["seeds"] == "test"
    for w in [*plan.pairwise.rows, plan.pairwise.spread]:
        assert set(plan.writers[str(w)]) <= set(test["grid"]["history"]), w
    assert len(plan.writers["DSSR"]) == 3 and plan.pairwise.ceiling_budget == 64
    assert any(h.endswith(":64") for h in test["grid"]["history"] if not h.startswith("oracle"))
    cfg = yaml.safe_load((root / str(plan.filler_kappa.experiment)).read_text())
    assert cfg["seeds"] == "validation" and cfg["model"] == plan.readers["R1"]
    envs = set(cfg["grid"]["env"])
    assert {f"cooking:lag={f}" for f in plan.filler_kappa.lags} <= envs
    assert {f"cooking:lag={f}+filler=pre" for f in plan.filler_kappa.lags} <= envs
    assert all(set(plan.writers[w]) <= set(cfg["grid"]["history"]) for w in plan.filler_kappa.rows)
