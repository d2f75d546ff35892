"""From a results store to the report files (tables, plots, JSON)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.analysis.report import write_report
from statelab.core import ConfigError
from statelab.run.axes import NAMES as AXES
from statelab.run.store import Store


@dataclass
class Report:
    markdown: str
    data: dict[str, Any]
    files: dict[str, Path]


SUMS = ("agent_calls", "agent_in", "agent_out", "aux_in", "aux_out", "steps")


def per_seed(episodes: pd.DataFrame) -> pd.DataFrame:
    """One row per (run, config seed): rollouts of a seed are averaged (score, success) and
    their token counts summed, so that n counts seeds, as seed 000 reports it."""
    if episodes.empty or (episodes.groupby(["run", "grp"]).size() == 1).all():
        return episodes.assign(seed=episodes["grp"])
    done = episodes[episodes.status == "done"]
    keys = ["run", "grp", *[a for a in AXES if a in episodes.columns]]
    agg = (
        done.groupby(keys, sort=False)
        .agg(
            score=("score", "mean"),
            success=("success", "mean"),
            **{c: (c, "sum") for c in SUMS},
        )
        .reset_index()
    )
    agg["status"], agg["error"] = "done", None
    failed = episodes[episodes.status != "done"]
    out = pd.concat([agg, failed[agg.columns.intersection(failed.columns)]], ignore_index=True)
    return out.assign(seed=out["grp"])


def make_report(store_path: str | Path, out_dir: str | Path) -> Report:
    import json

    store = Store(store_path)
    try:
        meta = store.experiment()
        episodes = store.episodes_frame()
    finally:
        store.close()
    if meta is None or episodes.empty:
        raise ConfigError(f"{store_path} holds no finished episodes yet")
    name, config = meta
    episodes = per_seed(episodes.drop(columns=["run"]).rename(columns={"label": "run"}))
    files = write_report(
        episodes,
        config.get("baseline"),
        out_dir,
        title=name,
        axes=AXES,
        layout=config.get("report"),
    )
    from statelab.analysis.table1 import append_table1  # seed 001: only when its agents ran

    files.update(append_table1(store_path, out_dir, files["markdown"]))
    from statelab.analysis.agentmetrics import append_agent_metrics  # seed 002 agents only

    files.update(append_agent_metrics(store_path, files["markdown"]))
    return Report(files["markdown"].read_text(), json.loads(files["json"].read_text()), files)
