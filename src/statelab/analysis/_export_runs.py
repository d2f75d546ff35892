"""What every tracking export carries of one statelab run (:mod:`statelab.analysis.tracking`,
:mod:`statelab.analysis.inspect_log`): read once from the store and its report.

- ``figures``: the report's public figures of the run (:data:`PUBLIC_FIGURES`: what its
  table, its tests and report.json's ``units`` give; no internal key such as ``has_memory``,
  ``n_base`` or ``sig``);
- ``seeds``: per config seed (rollouts averaged, as the report does) its score, success,
  steps and reward, with the time its last episode finished;
- ``steps``: per env step ``t``, the mean reward, the share of valid actions and the mean
  acting input tokens over the run's episodes at that step;
- ``started`` / ``finished``: when the run's episodes ran (the earliest episode's finish less
  its wall time; the latest finish), in ms since the Unix epoch;
- ``name``: a short name (the values of the axes that vary across the experiment's runs;
  the expert and the random floor by their role), ``tags``: each axis and its value.

:func:`provenance` gives the statelab version and, where statelab runs from a git checkout,
its commit: the store records neither, so these are the exporting statelab's.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from statelab.analysis._roles import FLOOR_LABEL, ROLE_EXPERT, ROLE_FLOOR
from statelab.analysis.behaviour import BEHAVIOUR_FIGURES, HIDDEN_FIGURES
from statelab.analysis.reporting import make_report
from statelab.run.store import Store

#: the report's figures a tracking run carries as metrics (the rest of a report row is its
#: identity, its role, or the report's own bookkeeping: ``sig``, ``n_base``, ``min_p`` …)
PUBLIC_FIGURES: tuple[str, ...] = (
    "n",
    "failed",
    "unscored",
    "episodes",
    "episodes_failed",
    "episodes_unscored",
    "episodes_done",
    "episodes_truncated",
    "mean",
    "sd",
    "success_rate",
    "in_per_step",
    "in_per_call",
    "out_per_step",
    "score_per_1k_in",
    "aux_in_per_step",
    "cost",
    *(b for b in BEHAVIOUR_FIGURES if b not in HIDDEN_FIGURES),
    "n_test",
    "diff",
    "ci_low",
    "ci_high",
    "p",
    "p_adj",
    "floor_diff",
    "floor_ci_low",
    "floor_ci_high",
)
#: per-seed series: each config seed's mean over its rollouts
SEED_FIGURES = ("score", "success", "steps", "reward")
_UNIX_EPOCH_JD = 2440587.5


@dataclass
class ExportRun:
    """One statelab run as the exports see it (see the module's text)."""

    run_id: str
    label: str
    name: str
    role: str
    axes: dict[str, str]
    components: dict[str, str]
    figures: dict[str, float]
    seeds: list[dict[str, Any]]
    steps: list[dict[str, Any]]
    episodes: pd.DataFrame
    started: int | None
    finished: int | None
    files: list[Path] = field(default_factory=list)

    @property
    def params(self) -> dict[str, str]:
        """The run's axes, label, id, role and each component's spelling."""
        out = {**self.axes, "label": self.label, "run_id": self.run_id, "role": self.role}
        out.update({f"component.{k}": v for k, v in sorted(self.components.items())})
        return out


@dataclass
class Exported:
    """An experiment as the exports see it: its name, config, runs and report files."""

    name: str
    config: dict[str, Any]
    axes: list[str]
    runs: list[ExportRun]
    report: dict[str, Path]
    report_data: dict[str, Any]
    folder: Path
    store: Path


def julian_ms(julian: Any) -> int | None:
    """A SQLite Julian day as ms since the Unix epoch (None when missing)."""
    if julian is None or pd.isna(julian):
        return None
    return round((float(julian) - _UNIX_EPOCH_JD) * 86_400_000.0)


def readable_episodes(episodes: pd.DataFrame) -> pd.DataFrame:
    """A run's episodes for a file or table: ``finished`` as ISO 8601 UTC, ``tags`` a JSON
    list."""
    out = episodes.copy()
    ms = out["finished"].map(julian_ms)
    out["finished"] = [
        None if m is None else pd.Timestamp(m, unit="ms", tz="UTC").isoformat() for m in ms
    ]
    out["tags"] = out["tags"].map(lambda t: json.dumps(list(t)))
    return out


def public_figures(row: dict[str, Any]) -> dict[str, float]:
    """A report row's public figures (booleans as 0/1; missing and NaN ones left out)."""
    out: dict[str, float] = {}
    for key in PUBLIC_FIGURES:
        value = row.get(key)
        if isinstance(value, bool | int | float) and not (
            isinstance(value, float) and not np.isfinite(value)
        ):
            out[key] = float(value)
    return out


def _number(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if np.isfinite(x) else None


def seed_series(episodes: pd.DataFrame) -> list[dict[str, Any]]:
    """Per config seed (``grp``), the mean of its finished episodes' figures and when its
    last episode finished."""
    out: list[dict[str, Any]] = []
    unit = "grp" if "grp" in episodes.columns else "seed"
    for seed, eps in episodes.groupby(unit, sort=True):
        done = eps[eps["status"].isin(("done", "truncated"))]
        rec: dict[str, Any] = {"seed": int(seed), "at": julian_ms(eps["finished"].max())}
        for key in SEED_FIGURES:
            vals = [v for v in map(_number, done.get(key, [])) if v is not None]
            if vals:
                rec[key] = float(np.mean(vals))
        out.append(rec)
    return out


def step_series(st: Store) -> dict[str, list[dict[str, Any]]]:
    """Per run, per env step ``t``: the mean reward, the share of valid actions and the mean
    acting input tokens over the episodes that reached it."""
    rows = st.step_means()
    out: dict[str, list[dict[str, Any]]] = {}
    for run, t, reward, valid, agent_in, n in rows:
        rec: dict[str, Any] = {"t": int(t), "episodes": int(n)}
        for key, value in (("reward", reward), ("valid", valid), ("in_tokens", agent_in)):
            if _number(value) is not None:
                rec[key] = float(value)
        out.setdefault(str(run), []).append(rec)
    return out


def short_names(rows: list[dict[str, Any]], axes: list[str]) -> list[str]:
    """Each report row's short name: the values of the axes that vary across the non-reference
    rows (``env`` only when it varies); the expert and the floor by their role. Names that
    would repeat get the run id's first 8 characters."""
    refs = {ROLE_EXPERT: "expert", ROLE_FLOOR: FLOOR_LABEL}
    others = [r for r in rows if r.get("role") not in refs]
    varying = [a for a in axes if len({str(r.get(a)) for r in others}) > 1]
    names = []
    for r in rows:
        if r.get("role") in refs:
            parts = [refs[str(r["role"])]]
            if "env" in varying:
                parts.append(str(r.get("env")))
        else:
            parts = [str(r.get(a)) for a in varying if r.get(a) not in (None, "-")]
        names.append(" ".join(parts) or str(r.get("history") or r.get("run")))
    seen = pd.Series(names).duplicated(keep=False).tolist()
    return [
        f"{n} {r.get('run_id', '')[:8]}" if d else n
        for n, r, d in zip(names, rows, seen, strict=True)
    ]


@cache
def provenance() -> dict[str, str]:
    """``version`` and, where the statelab package sits in a git work tree, ``commit`` (with
    ``dirty``: ``true`` when that tree has uncommitted changes)."""
    import statelab

    out = {"version": str(statelab.__version__)}
    here = Path(statelab.__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return out
    if len(commit) == 40:
        out.update(commit=commit, dirty="true" if status.strip() else "false")
    return out


@contextlib.contextmanager
def exported(store: Path) -> Iterator[Exported]:
    """The experiment of ``store`` with its report written to a temporary folder (removed
    on exit)."""
    with tempfile.TemporaryDirectory(prefix="statelab-export-") as tmp:
        rep = make_report(store, Path(tmp) / "report")
        st = Store(store, readonly=True)
        try:
            meta = st.experiment()
            name, config = meta if meta else (store.parent.name, {})
            runs = {r["run"]: r for r in st.runs_frame().to_dict("records")}
            episodes = st.episodes_frame()
            steps = step_series(st)
        finally:
            st.close()
        data = rep.data
        axes = [str(a) for a in data.get("axes") or []]
        rows = list(data["runs"])
        out: list[ExportRun] = []
        for row, short in zip(rows, short_names(rows, axes), strict=True):
            rid = str(row.get("run_id", ""))
            eps = episodes[episodes["run"] == rid].reset_index(drop=True)
            begun = pd.to_numeric(eps["finished"]) - pd.to_numeric(eps["wall_s"]).fillna(0) / 86400
            built = runs.get(rid, {}).get("components") or {}
            components = {}
            for axis, b in built.items():
                spelling = b.get("spelling") if isinstance(b, dict) else b
                if spelling is not None:
                    components[str(axis)] = str(spelling)
            out.append(
                ExportRun(
                    run_id=rid,
                    label=str(row["run"]),
                    name=short,
                    role=str(row.get("role", "")),
                    axes={a: str(row[a]) for a in axes if row.get(a) is not None},
                    components=components,
                    figures=public_figures(row),
                    seeds=seed_series(eps),
                    steps=steps.get(rid, []),
                    episodes=eps,
                    started=julian_ms(begun.min()) if len(eps) else None,
                    finished=julian_ms(eps["finished"].max()) if len(eps) else None,
                )
            )
        yield Exported(name, config, axes, out, dict(rep.files), data, Path(tmp), store)
