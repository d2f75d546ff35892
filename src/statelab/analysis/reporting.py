"""From a results store to the report files (tables, plots, JSON), then every registered
report section (seed 001's Table 1, seed 002's agent metrics ...) that applies."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statelab.analysis import agentmetrics, budget, seed003, table1  # noqa: F401 - sections
from statelab.analysis._md import md_document
from statelab.analysis.report import Test, write_report
from statelab.analysis.sections import SECTIONS
from statelab.core import ConfigError
from statelab.run.axes import NAMES
from statelab.run.store import Store


@dataclass
class Report:
    markdown: str
    data: dict[str, Any]
    files: dict[str, Path]


def make_report(
    store_path: str | Path, out_dir: str | Path, *, test: Test = "permutation"
) -> Report:
    """Write the report of the store's experiment into ``out_dir``. ``test`` picks what marks
    ``*``: the exact sign-flip permutation test (default) or the seeds' ``"bootstrap"``."""
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
    # One row per episode; summarise groups rollouts by their config seed (``grp``) itself,
    # so every figure is computed per episode first (success, tokens per env step, Fig. 1).
    episodes = episodes.drop(columns=["run"]).rename(columns={"label": "run"})
    files = write_report(
        episodes,
        config.get("baseline"),
        out_dir,
        title=name,
        axes=[a for a in NAMES if a in episodes.columns],
        layout=config.get("report"),
        test=test,
    )
    for section in SECTIONS.values():  # each decides from the store whether it applies
        files.update(section(Path(store_path), Path(out_dir), files["markdown"]))
    md = files["markdown"]
    md.write_text(md_document(md.read_text()))  # no terminal control survives in report.md
    return Report(files["markdown"].read_text(), json.loads(files["json"].read_text()), files)
