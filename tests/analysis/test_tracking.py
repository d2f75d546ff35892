"""``statelab export --to mlflow|wandb``: one tracking run per statelab run, its params the
axes, its metrics the report's figures, its artifacts the report and the run's episodes;
written offline and read back here."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_wandb_writes_offline_runs_with_the_reports_figures(store: Path, tmp_path: Path) -> None:
    pytest.importorskip("wandb", reason="needs the tracking extra")
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
    assert seen == set(want)


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
    assert bad.exit_code == 2 and "--to: one of mlflow, wandb" in bad.stderr
