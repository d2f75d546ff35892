"""``statelab export --to mlflow|wandb``: one tracking run per statelab run, named short, its
tags the axes and the statelab version and commit, its times when the episodes ran, its
params the axes, its metrics the report's public figures and a series per seed and per step,
its artifacts the config, the report and the run's episodes; written offline and read back
here with each tool's own API."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

runner = CliRunner()
# seed 0 solves nothing, seed 1 makes one legal move: known scores per run
REPLIES = ["Action: Move the top disk of rod A to the top of rod C"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("tracking")
    script = tmp / "replies.json"
    script.write_text(json.dumps(REPLIES))
    exp = parse_experiment(
        {
            "name": "track-me",
            "model": f"scripted:{script}",
            "seeds": [0, 1, 2],
            "grid": {"env": ["hanoi"], "history": ["full", "summary"]},
            "baseline": {"history": "full"},
            "out": str(tmp / "results"),
            "cache": None,
            "max_steps": 3,
        }
    )
    assert run_sync(exp, progress=None).done == 12  # 2 histories, the expert, random floor
    return exp.out_dir / "store.sqlite"


def _report_rows(store: Path, tmp: Path) -> dict[str, dict]:
    res = runner.invoke(app, ["report", str(store.parent), "--json", "--out", str(tmp / "r")])
    assert res.exit_code == 0, res.output
    return {r["run_id"]: r for r in json.loads(res.stdout)["runs"]}


def _mean_score(store: Path, run_id: str) -> float:
    eps = Store(store, readonly=True).table("episodes", where={"run": run_id})
    return float(eps["score"].mean())


def test_mlflow_holds_one_run_per_statelab_run_with_the_reports_figures(
    store: Path, tmp_path: Path
) -> None:
    pytest.importorskip("mlflow", reason="needs the tracking extra")
    from mlflow.tracking import MlflowClient

    res = runner.invoke(
        app, ["export", str(store.parent), "--to", "mlflow", "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    client = MlflowClient(tracking_uri=(tmp_path / "mlruns").resolve().as_uri())
    exp = client.get_experiment_by_name("track-me")
    got = {r.data.tags["statelab.run_id"]: r for r in client.search_runs([exp.experiment_id])}
    want = _report_rows(store, tmp_path)
    assert set(got) == set(want) and len(got) == 4
    for rid, run in got.items():
        row = want[rid]
        assert run.data.params["label"] == row["run"] and run.data.params["env"] == "hanoi"
        assert run.data.params["history"] == row["history"]
        assert run.data.metrics["mean"] == pytest.approx(row["mean"])
        # one rollout a seed: the report's mean is the mean of the stored episode scores
        assert run.data.metrics["mean"] == pytest.approx(_mean_score(store, rid))
        assert run.data.metrics["n"] == 3 and "invalid_rate" in run.data.metrics
        assert ("sd" in run.data.metrics) == (row["sd"] is not None)
        names = {a.path for a in client.list_artifacts(run.info.run_id)}
        assert {"report.md", "report.json", "scores.png", "episodes.csv"} <= names
    # a second export replaces the runs instead of adding copies
    assert (
        runner.invoke(
            app, ["export", str(store.parent), "--to", "mlflow", "--out", str(tmp_path)]
        ).exit_code
        == 0
    )
    assert len(client.search_runs([exp.experiment_id])) == 4


def _episodes(store: Path) -> pd.DataFrame:
    st = Store(store, readonly=True)
    try:
        return st.episodes_frame()
    finally:
        st.close()


def _ms(julian: float) -> int:
    return round((julian - 2440587.5) * 86_400_000)


def test_mlflow_reads_back_the_config_version_per_seed_metrics_and_real_times(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37: what MLflow's own API reads back of an export is the experiment (its config,
    the statelab version and commit, a series per seed, the times the episodes ran), not the
    report's one point per figure at the export's time."""
    pytest.importorskip("mlflow", reason="needs the tracking extra")
    import mlflow
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    import statelab
    from statelab.analysis._export_runs import PUBLIC_FIGURES, provenance

    batches: list[str] = []
    real = MlflowClient.log_batch

    def counted(self: MlflowClient, run_id: str, *args: object, **kw: object) -> None:
        batches.append(run_id)
        real(self, run_id, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(MlflowClient, "log_batch", counted)
    monkeypatch.setattr(MlflowClient, "log_metric", None)  # one batch, never a call a metric
    argv = ["export", str(store.parent), "--to", "mlflow", "--out", str(tmp_path)]
    res = runner.invoke(app, argv)
    assert res.exit_code == 0, res.output
    uri = (tmp_path / "mlruns").resolve().as_uri()
    mlflow.set_tracking_uri(uri)
    frame = mlflow.search_runs(experiment_names=["track-me"])
    client = MlflowClient(tracking_uri=uri)
    eid = client.get_experiment_by_name("track-me").experiment_id
    runs = client.search_runs([eid])
    assert len(frame) == len(runs) == 4 and sorted(batches) == sorted(r.info.run_id for r in runs)
    # short names, the axes as tags
    assert sorted(frame["tags.mlflow.runName"]) == ["expert", "full", "random floor", "summary"]
    eps = _episodes(store)
    stored_config = Store(store, readonly=True).experiment()[1]
    for run in runs:
        rid = run.data.tags["statelab.run_id"]
        mine = eps[eps["run"] == rid]
        tags = run.data.tags
        assert tags["env"] == "hanoi" and tags["history"] == mine["history"].iloc[0]
        assert tags["statelab.version"] == statelab.__version__
        if "commit" in provenance():
            assert tags["statelab.commit"] == tags["mlflow.source.git.commit"]
            assert len(tags["statelab.commit"]) == 40
        # the config, as an artifact
        local = client.download_artifacts(run.info.run_id, "config.json", str(tmp_path / rid))
        config = json.loads(Path(local).read_text())
        assert config == json.loads(json.dumps(stored_config, default=str))
        # when the episodes ran, not the export
        started = _ms(float((mine["finished"] - mine["wall_s"] / 86400).min()))
        assert abs(run.info.start_time - started) <= 1
        assert run.info.end_time == _ms(float(mine["finished"].max()))
        # a point per seed: the seed's score, at the seed
        series = client.get_metric_history(run.info.run_id, "seed/score")
        assert sorted((m.step, m.value) for m in series) == sorted(
            zip(mine["seed"].astype(int), mine["score"].astype(float), strict=True)
        )
        steps = client.get_metric_history(run.info.run_id, "step/reward")
        assert sorted(m.step for m in steps) == [1, 2, 3]  # max_steps 3: a point per step
        # the report's public figures and nothing internal
        figures = {k for k in run.data.metrics if "/" not in k}
        assert figures <= set(PUBLIC_FIGURES) and {"mean", "n", "invalid_rate"} <= figures
        assert not {"has_memory", "n_base", "sig", "min_p", "env_seeds"} & set(run.data.metrics)
    # idempotent: a second export replaces the runs, leaving no deleted copy behind
    assert runner.invoke(app, argv).exit_code == 0
    assert len(client.search_runs([eid], run_view_type=ViewType.ALL)) == 4


def test_wandb_writes_offline_runs_with_the_reports_figures(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wandb = pytest.importorskip("wandb", reason="needs the tracking extra")
    inits: list[dict] = []
    real = wandb.init

    def init(**kw: object) -> object:
        inits.append(kw)
        return real(**kw)

    monkeypatch.setattr(wandb, "init", init)
    monkeypatch.delenv("WANDB_PROJECT", raising=False)
    res = runner.invoke(app, ["export", str(store.parent), "--to", "wandb", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    runs = sorted((tmp_path / "wandb").glob("offline-run-*"))
    want = _report_rows(store, tmp_path)
    assert len(runs) == 4
    seen = set()
    for folder in runs:
        metrics = json.loads((folder / "files" / "statelab_metrics.json").read_text())
        (log,) = folder.glob("run-*.wandb")
        raw = log.read_bytes()  # the offline log W&B syncs later: config and metrics in it
        row = next(
            r
            for r in want.values()
            if r["mean"] == pytest.approx(metrics["mean"])
            and r["history"].encode() in raw
            and r["run_id"].encode() in raw
        )
        seen.add(row["run_id"])
        assert metrics["n"] == 3 and metrics["mean"] == pytest.approx(
            _mean_score(store, row["run_id"])
        )
        assert b"invalid_rate" in raw and (folder / "files" / "report.md").is_file()
        assert (folder / "files" / "episodes.csv").is_file()
        assert (folder / "files" / "config.json").is_file()
        # the episodes as a wandb.Table, the plots as wandb.Image: media W&B's UI shows
        (table,) = (folder / "files" / "media" / "table").glob("episodes_*.table.json")
        shown = json.loads(table.read_text())
        assert len(shown["data"]) == 3 and {"seed", "score", "finished"} <= set(shown["columns"])
        images = {p.name.split("_")[0] for p in (folder / "files/media/images/plots").glob("*.png")}
        assert "scores" in images
        assert b"seed/score" in raw and b"step/reward" in raw  # a series per seed, per step
    assert seen == set(want)
    # one project, the runs grouped by experiment, named short, the axes as tags
    assert {(k["project"], k["group"]) for k in inits} == {("statelab", "track-me")}
    assert sorted(k["name"] for k in inits) == ["expert", "full", "random floor", "summary"]
    assert all("env=hanoi" in k["tags"] for k in inits)


def test_exporting_to_wandb_again_keeps_one_run_per_statelab_run(
    store: Path, tmp_path: Path
) -> None:
    """Issue 36 item 3: a re-export replaced nothing (4 runs became 8, each with a new
    random id): each run's W&B id is now derived from the experiment and the run's key."""
    pytest.importorskip("wandb", reason="needs the tracking extra")
    argv = ["export", str(store.parent), "--to", "wandb", "--out", str(tmp_path)]

    def ids() -> list[str]:
        return sorted(p.name.rsplit("-", 1)[1] for p in (tmp_path / "wandb").glob("offline-run-*"))

    assert runner.invoke(app, argv).exit_code == 0
    first = ids()
    assert runner.invoke(app, argv).exit_code == 0
    assert len(first) == 4 and ids() == first  # the same runs, by the same ids


def test_a_missing_target_or_package_is_one_line(store: Path) -> None:
    bad = runner.invoke(app, ["export", str(store.parent), "--to", "tensorboard"])
    assert bad.exit_code == 2 and "--to: one of mlflow, wandb, inspect" in bad.stderr
