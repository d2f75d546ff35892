"""``statelab export --to mlflow|wandb``: an experiment's runs where a lab already looks.

One tracking run per statelab run, named by its label:

- **params**: the run's axes (``env``, ``model``, ``agent``, ``history`` …), its label and id,
  and the spelling each component was built from;
- **metrics**: the report's figures for that run (``report.json``'s row: ``mean``, ``sd``,
  ``n``, ``success_rate``, tokens per step, behaviour such as ``invalid_rate``, the test
  against the baseline, …), every number the report prints and nothing it does not;
- **artifacts**: the report (``report.md``, ``report.json`` and its plots) and the run's own
  episodes (``episodes.csv``).

MLflow writes to a local file store (``<out>/mlruns``; read it with ``mlflow ui
--backend-store-uri <out>/mlruns``). MLflow 3 keeps that store in maintenance mode and asks
for ``MLFLOW_ALLOW_FILE_STORE``, which this export sets for its own calls. Exporting again
replaces the runs of the same statelab run ids (the old ones are marked deleted). W&B
writes offline runs under ``<out>/wandb`` (``wandb sync <out>/wandb/offline-run-*`` uploads
them later), each with a stable W&B run id (:func:`wandb_id`: the experiment and the store's
run key), so exporting again replaces a run's offline folder and a sync updates the same W&B
run, never a copy; nothing here touches the network. Needs ``pip install 'statelab[tracking]'``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from statelab.analysis.reporting import make_report
from statelab.core import ConfigError
from statelab.run.store import Store

TARGETS = ("mlflow", "wandb")
#: the report row's keys that are not figures (they become params or are dropped)
_NOT_METRICS = {"run", "run_id", "role", "baseline_run", "floor_run", "test", "paired"}


def run_params(row: dict[str, Any], axes: list[str], components: dict[str, Any]) -> dict[str, str]:
    """A run's params: its axes, label, id and each component's spelling."""
    params = {a: str(row[a]) for a in axes if a in row and row[a] is not None}
    params.update(label=str(row["run"]), run_id=str(row.get("run_id", "")))
    params["role"] = str(row.get("role", ""))
    for axis, built in sorted(components.items()):
        spelling = built.get("spelling") if isinstance(built, dict) else built
        if spelling is not None:
            params[f"component.{axis}"] = str(spelling)
    return params


def run_metrics(row: dict[str, Any], axes: list[str]) -> dict[str, float]:
    """A run's metrics: every numeric figure of its report row (booleans as 0/1; missing and
    NaN figures are left out, never invented)."""
    out: dict[str, float] = {}
    for key, value in row.items():
        if key in _NOT_METRICS or key in axes or value is None or isinstance(value, str):
            continue
        number = isinstance(value, int | float) and not math.isnan(float(value))
        if isinstance(value, bool) or number:
            out[key] = float(value)
    return out


@contextlib.contextmanager
def _report(store: Path) -> Iterator[tuple[dict[str, Any], dict[str, Path], Path]]:
    with tempfile.TemporaryDirectory(prefix="statelab-export-") as tmp:
        rep = make_report(store, Path(tmp) / "report")
        yield rep.data, dict(rep.files), Path(tmp)


def _episodes_csv(st: Store, run_id: str, folder: Path) -> Path:
    df = st.episodes_frame()
    path = folder / run_id / "episodes.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    df[df["run"] == run_id].to_csv(path, index=False)
    return path


def export_tracking(store: str | Path, to: str, out: str | Path) -> list[Path]:
    """Write the store's runs to ``to`` (``mlflow`` or ``wandb``) under ``out``; returns the
    folders written."""
    if to not in TARGETS:
        raise ConfigError(f"--to: one of {', '.join(TARGETS)}, got {to!r}")
    try:
        if to == "mlflow":
            import mlflow  # noqa: F401
        else:
            import wandb  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"--to {to} needs it installed: pip install 'statelab[tracking]'"
        ) from None
    store, out = Path(store), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    st = Store(store, readonly=True)
    try:
        meta = st.experiment()
        name = meta[0] if meta else store.parent.name
        components = {r["run"]: r["components"] for r in st.runs_frame().to_dict("records")}
        with _report(store) as (data, files, tmp):
            axes = list(data.get("axes") or [])
            runs = []
            for row in data["runs"]:
                rid = str(row.get("run_id", ""))
                runs.append(
                    (
                        row,
                        run_params(row, axes, components.get(rid, {})),
                        run_metrics(row, axes),
                        [*(p for p in files.values() if p.is_file()), _episodes_csv(st, rid, tmp)],
                    )
                )
            if to == "mlflow":
                return [_to_mlflow(name, runs, out / "mlruns")]
            return [_to_wandb(name, runs, out)]
    finally:
        st.close()


_Run = tuple[dict[str, Any], dict[str, str], dict[str, float], list[Path]]


def _to_mlflow(name: str, runs: list[_Run], where: Path) -> Path:
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=where.resolve().as_uri())
    found = client.get_experiment_by_name(name)
    eid = found.experiment_id if found else client.create_experiment(name)
    for row, params, metrics, artifacts in runs:
        rid = params["run_id"]
        for old in client.search_runs([eid], f"tags.`statelab.run_id` = '{rid}'"):
            client.delete_run(old.info.run_id)
        tags = {"statelab.run_id": rid, "mlflow.runName": str(row["run"])}
        run = client.create_run(eid, tags=tags, run_name=str(row["run"]))
        mid = run.info.run_id
        for key, text in params.items():
            client.log_param(mid, key, text[:6000])
        for key, number in metrics.items():
            client.log_metric(mid, key, number)
        for path in artifacts:
            client.log_artifact(mid, str(path))
        client.set_terminated(mid)
    return where


def wandb_id(experiment: str, run_key: str) -> str:
    """The W&B run id of the statelab run ``run_key`` of ``experiment``: the same on every
    export (32 hex digits of a SHA-256; W&B ids allow letters, digits, ``-`` and ``_``)."""
    return hashlib.sha256(f"{experiment}\0{run_key}".encode()).hexdigest()[:32]


def _to_wandb(name: str, runs: list[_Run], where: Path) -> Path:
    import wandb

    os.environ.setdefault("WANDB_SILENT", "true")
    for row, params, metrics, artifacts in runs:
        wid = wandb_id(name, params["run_id"])
        for old in (where / "wandb").glob(f"offline-run-*-{wid}"):  # an earlier export's
            shutil.rmtree(old)
        run = wandb.init(
            project=_project(name),
            id=wid,
            name=str(row["run"]),
            dir=str(where),
            mode="offline",
            config=params,
            reinit="create_new",
            settings=wandb.Settings(
                save_code=False,
                disable_git=True,
                console="off",
                x_disable_stats=True,
            ),
        )
        run.log(metrics)
        run.summary.update(metrics)
        (Path(run.dir) / "statelab_metrics.json").write_text(json.dumps(metrics, indent=1))
        for path in artifacts:  # copies, not W&B's links: the report folder is temporary
            shutil.copyfile(path, Path(run.dir) / path.name)
        run.finish()
    return where / "wandb"


def _project(name: str) -> str:
    """W&B project names may not hold ``/\\#?%:``."""
    bad = "/\\#?%:"
    return "".join("-" if c in bad else c for c in name)[:128] or "statelab"
