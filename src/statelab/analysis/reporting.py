"""From a results store to the report files (tables, plots, JSON), then every registered
report section that applies (the lab's and the plugins': :mod:`statelab.analysis.sections`).

The report reads only what it shows: the episodes and runs tables, and behaviour counts
aggregated in SQL from a few ``steps`` columns (:meth:`Store.behaviour_frames`); no call's
messages, no observation text. Each section gets the same frames (:class:`ReportInputs`) and
returns its blocks; report.md is written once, the blocks in the sections' declared order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statelab.analysis._comparisons import Test
from statelab.analysis._md import md_document
from statelab.analysis.behaviour import with_behaviour
from statelab.analysis.report import build_report, write_files
from statelab.analysis.sections import ReportInputs, ordered
from statelab.analysis.stats import Adjust
from statelab.core import ConfigError
from statelab.run.axes import NAMES
from statelab.run.store import Store


@dataclass
class Report:
    """A written report: report.md's text, report.json's data and every file by name."""

    markdown: str
    data: dict[str, Any]
    files: dict[str, Path]


def make_report(
    store_path: str | Path,
    out_dir: str | Path,
    *,
    test: Test = "permutation",
    adjust: Adjust = "holm",
) -> Report:
    """Write the report of the store's experiment into ``out_dir``. ``test`` picks what marks
    ``*``: the exact sign-flip permutation test (default) or the seeds' ``"bootstrap"``;
    ``adjust`` how the p values of the many runs tested against one baseline are adjusted:
    ``"holm"`` (default), ``"bh"`` (Benjamini-Hochberg) or ``"none"``."""
    out = Path(out_dir)
    store = Store(store_path)
    try:
        meta = store.experiment()
        episodes = store.episodes_frame()
        if meta is None or episodes.empty:
            raise ConfigError(f"{store_path} holds no finished episodes yet")
        counts, per_run = store.behaviour_frames()
        runs = store.runs_frame()
        name, config = meta
        inputs = ReportInputs(store, Path(store_path), out, config, runs, episodes)
        labels = dict(zip(runs["run"], runs["label"], strict=True))
        # One row per episode; summarise groups rollouts by their config seed (``grp``)
        # itself, so every figure is computed per episode first (success, tokens, Fig. 1).
        frame = with_behaviour(episodes, counts).drop(columns=["run"])
        frame = frame.rename(columns={"label": "run"})
        main = build_report(
            frame,
            config.get("baseline"),
            out,
            title=name,
            axes=[a for a in NAMES if a in frame.columns],
            layout=config.get("report"),
            test=test,
            adjust=adjust,
            run_info=per_run.assign(run_id=per_run["run"], run=per_run["run"].map(labels)),
        )
        blocks, files = list(main.blocks), dict(main.paths)
        for section in ordered():  # each decides from the frames whether it applies
            got = section.fn(inputs)
            if got is not None:
                blocks += got.blocks
                files.update(got.files)
    finally:
        store.close()
    files = write_files(blocks, main.payload, out, files)
    md = files["markdown"]
    md.write_text(md_document(md.read_text()))  # no terminal control survives in report.md
    return Report(files["markdown"].read_text(), json.loads(files["json"].read_text()), files)
