"""``statelab export --to mlflow|wandb|inspect``: an experiment's runs where a lab already
looks. One tracking run per statelab run (what each carries: :mod:`._export_runs`):

- **name and tags**: a short name (the axes that vary: ``full``, ``summary``, ``expert``),
  each axis as a tag (``env``, ``history`` …), the experiment, the run's id and role, the
  statelab version and git commit (:func:`~._export_runs.provenance`: the exporting
  statelab's; the store records neither);
- **times**: the run's start and end are when its episodes ran (the store's episodes), not
  the export's time;
- **params**: the axes, label, id, role and the spelling each component was built from;
- **metrics**: the report's public figures of that run (``mean``, ``sd``, ``n``,
  ``success_rate``, tokens per step, behaviour such as ``invalid_rate``, the test against
  the baseline, …: :data:`~._export_runs.PUBLIC_FIGURES`, no internal key); per config seed
  ``seed/score``, ``seed/success``, ``seed/steps``, ``seed/reward`` (step = the seed, time =
  when its last episode finished); per env step ``step/reward``, ``step/valid``,
  ``step/in_tokens`` (step = ``t``, means over the run's episodes);
- **artifacts**: the experiment's config (``config.json``), the report (``report.md``,
  ``report.json`` and its plots) and the run's episodes (``episodes.csv``).

MLflow writes to a local file store (``<out>/mlruns``; read it with ``mlflow ui
--backend-store-uri <out>/mlruns``) with one ``log_batch`` per run (more only past MLflow's
batch limits). MLflow 3 keeps that store in maintenance mode and asks for
``MLFLOW_ALLOW_FILE_STORE``, which this export sets for its own calls. Exporting again
replaces the runs of the same statelab run ids: the old ones are removed from the store
(not merely marked deleted), so the store holds each run once. W&B writes offline runs under
``<out>/wandb`` (``wandb sync <out>/wandb/offline-run-*`` uploads them later) in the project
``statelab`` (``WANDB_PROJECT`` overrides it), grouped by experiment (``group=``), each with
a stable W&B run id (:func:`wandb_id`: the experiment and the store's run key), so exporting
again replaces a run's offline folder and a sync updates the same W&B run, never a copy; the
episodes are a ``wandb.Table``, the plots ``wandb.Image``. ``inspect`` writes one inspect_ai
eval log per run (:mod:`statelab.analysis.inspect_log`). Nothing here touches the network.
MLflow and W&B need ``pip install 'statelab[tracking]'``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from statelab.analysis._export_runs import (
    Exported,
    ExportRun,
    exported,
    provenance,
    readable_episodes,
)
from statelab.core import ConfigError

TARGETS = ("mlflow", "wandb", "inspect")
#: MLflow's limits on one log_batch call
_BATCH_METRICS, _BATCH_PARAMS, _BATCH_TAGS, _BATCH_ALL = 1000, 100, 100, 1000


def export_tracking(store: str | Path, to: str, out: str | Path) -> list[Path]:
    """Write the store's runs to ``to`` (``mlflow``, ``wandb`` or ``inspect``) under
    ``out``; returns the folders (or, for ``inspect``, the log files) written."""
    if to not in TARGETS:
        raise ConfigError(f"--to: one of {', '.join(TARGETS)}, got {to!r}")
    if to != "inspect":
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
    with exported(store) as exp:
        config = exp.folder / "config.json"
        config.write_text(json.dumps(exp.config, indent=2, default=str) + "\n")
        report = [p for p in exp.report.values() if p.is_file()]
        for run in exp.runs:
            csv = exp.folder / run.run_id / "episodes.csv"
            csv.parent.mkdir(parents=True, exist_ok=True)
            readable_episodes(run.episodes).to_csv(csv, index=False)
            run.files = [config, *report, csv]
        if to == "mlflow":
            return [_to_mlflow(exp, out / "mlruns")]
        if to == "wandb":
            return [_to_wandb(exp, out)]
        from statelab.analysis.inspect_log import write_inspect_logs

        return write_inspect_logs(exp, out / "inspect")


def run_tags(exp: Exported, run: ExportRun) -> dict[str, str]:
    """A run's tags: each axis, the experiment, the run's id, label and role, the statelab
    version and commit (under MLflow's own ``mlflow.source.git.commit`` too)."""
    prov = provenance()
    tags = {**run.axes, "statelab.experiment": exp.name, "statelab.run_id": run.run_id}
    tags.update({"statelab.label": run.label, "statelab.role": run.role})
    tags["statelab.version"] = prov["version"]
    if "commit" in prov:
        tags.update({"statelab.commit": prov["commit"], "statelab.dirty": prov["dirty"]})
        tags["mlflow.source.git.commit"] = prov["commit"]
    return tags


def _mlflow_batches(run: ExportRun, tags: dict[str, str]) -> list[dict[str, list[Any]]]:
    """The run's metrics, params and tags as MLflow entities, in as few ``log_batch`` calls
    as MLflow's limits allow (one for any run of a few hundred seeds and steps)."""
    from mlflow.entities import Metric, Param, RunTag

    at = run.finished or 0
    metrics = [Metric(k, v, at, 0) for k, v in run.figures.items()]
    for rec in run.seeds:
        when = rec.get("at") or at
        metrics += [
            Metric(f"seed/{k}", rec[k], when, rec["seed"]) for k in rec if k not in ("seed", "at")
        ]
    for rec in run.steps:
        metrics += [
            Metric(f"step/{k}", rec[k], at, rec["t"]) for k in rec if k not in ("t", "episodes")
        ]
    params = [Param(k, str(v)[:6000]) for k, v in run.params.items()]
    run_tags = [RunTag(k, str(v)[:8000]) for k, v in tags.items()]
    batches: list[dict[str, list[Any]]] = []
    while metrics or params or run_tags:
        p, t = params[:_BATCH_PARAMS], run_tags[:_BATCH_TAGS]
        m = metrics[: min(_BATCH_METRICS, _BATCH_ALL - len(p) - len(t))]
        batches.append({"metrics": m, "params": p, "tags": t})
        metrics, params, run_tags = metrics[len(m) :], params[len(p) :], run_tags[len(t) :]
    return batches


def _hard_delete(client: Any, run_id: str, where: Path, experiment_id: str) -> None:
    """Remove an earlier export's run from the file store for good (MLflow's own ``gc`` path;
    its folder when that is missing), so a re-export leaves no deleted copy behind."""
    client.delete_run(run_id)
    store = getattr(client, "_tracking_client", None)
    store = getattr(store, "store", None)
    hard = getattr(store, "_hard_delete_run", None)
    if callable(hard):
        hard(run_id)
    shutil.rmtree(where / experiment_id / run_id, ignore_errors=True)


def _to_mlflow(exp: Exported, where: Path) -> Path:
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=where.resolve().as_uri())
    found = client.get_experiment_by_name(exp.name)
    if found is not None and found.lifecycle_stage == "deleted":
        client.restore_experiment(found.experiment_id)
    eid = found.experiment_id if found else client.create_experiment(exp.name)
    client.set_experiment_tag(eid, "statelab.version", provenance()["version"])
    for run in exp.runs:
        old = client.search_runs(
            [eid], f"tags.`statelab.run_id` = '{run.run_id}'", run_view_type=ViewType.ALL
        )
        for stale in old:
            _hard_delete(client, stale.info.run_id, where, eid)
        tags = run_tags(exp, run)
        created = client.create_run(eid, start_time=run.started, tags=tags, run_name=run.name)
        mid = created.info.run_id
        for batch in _mlflow_batches(run, tags):
            client.log_batch(mid, batch["metrics"], batch["params"], batch["tags"])
        for path in run.files:
            client.log_artifact(mid, str(path))
        client.set_terminated(mid, end_time=run.finished)
    return where


def wandb_id(experiment: str, run_key: str) -> str:
    """The W&B run id of the statelab run ``run_key`` of ``experiment``: the same on every
    export (32 hex digits of a SHA-256; W&B ids allow letters, digits, ``-`` and ``_``)."""
    return hashlib.sha256(f"{experiment}\0{run_key}".encode()).hexdigest()[:32]


def _to_wandb(exp: Exported, where: Path) -> Path:
    import wandb

    os.environ.setdefault("WANDB_SILENT", "true")
    project = os.environ.get("WANDB_PROJECT") or "statelab"
    plots = {k: p for k, p in exp.report.items() if p.suffix == ".png" and p.is_file()}
    for run in exp.runs:
        wid = wandb_id(exp.name, run.run_id)
        for old in (where / "wandb").glob(f"offline-run-*-{wid}"):  # an earlier export's
            shutil.rmtree(old)
        tags = run_tags(exp, run)
        config: dict[str, Any] = {**run.params}
        config["statelab"] = {k: v for k, v in tags.items() if "." in k}
        config.update(started=_iso(run.started), finished=_iso(run.finished))
        config["experiment"] = exp.config
        wb = wandb.init(
            project=_project(project),
            group=_project(exp.name),
            job_type=run.role or None,
            id=wid,
            name=run.name,
            tags=[f"{k}={v}"[:64] for k, v in run.axes.items()],
            dir=str(where),
            mode="offline",
            config=config,
            reinit="create_new",
            settings=wandb.Settings(
                save_code=False, disable_git=True, console="off", x_disable_stats=True
            ),
        )
        wb.define_metric("seed")
        wb.define_metric("seed/*", step_metric="seed")
        wb.define_metric("t")
        wb.define_metric("step/*", step_metric="t")
        for rec in run.seeds:
            wb.log(
                {
                    "seed": rec["seed"],
                    **{f"seed/{k}": rec[k] for k in rec if k not in ("seed", "at")},
                }
            )
        for rec in run.steps:
            wb.log(
                {"t": rec["t"], **{f"step/{k}": rec[k] for k in rec if k not in ("t", "episodes")}}
            )
        episodes = readable_episodes(run.episodes)
        episodes = episodes.astype(object).where(episodes.notna(), None)
        wb.log(
            {
                "episodes": wandb.Table(dataframe=episodes),
                **{f"plots/{k}": wandb.Image(str(p)) for k, p in plots.items()},
            }
        )
        wb.summary.update(run.figures)
        wb.summary.update({"started": _iso(run.started), "finished": _iso(run.finished)})
        (Path(wb.dir) / "statelab_metrics.json").write_text(json.dumps(run.figures, indent=1))
        for path in run.files:  # copies, not W&B's links: the report folder is temporary
            if path not in plots.values():  # the plots are in the run's media already
                shutil.copyfile(path, Path(wb.dir) / path.name)
        wb.finish()
    return where / "wandb"


def _iso(ms: int | None) -> str | None:
    import datetime as dt

    if ms is None:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="milliseconds")


def _project(name: str) -> str:
    """W&B project and group names may not hold ``/\\#?%:``."""
    bad = "/\\#?%:"
    return "".join("-" if c in bad else c for c in name)[:128] or "statelab"
