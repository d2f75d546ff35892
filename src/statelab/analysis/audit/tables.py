"""The audit's tables and plot: δ under each context, β, κ and "lost vs full" with
game-clustered intervals, the relevance lag and the skipped points; per env and run, and per
step since the episode's start (registered as the ``audit`` report section).

Intervals are game-clustered (:func:`statelab.analysis.stats.clustered_bootstrap`):
the 2.5–97.5 percentiles of 10,000 resamples of games (a game is an episode seed), each
drawn game bringing all its points, in both terms of a difference (paired).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.analysis.audit.run import EPISODES_TABLE, POINTS_TABLE
from statelab.analysis.sections import Blocks, ReportInputs, report_section
from statelab.analysis.stats import Interval, clustered_bootstrap
from statelab.run.store import Store

#: steps since the episode's start, binned (right-open; the last bin is open-ended)
STEP_BINS = (0, 5, 10, 20)
DELTAS = ("nll_own", "nll_full", "nll_oracle", "nll_readtime")


def step_bin(k: int) -> str:
    """The bin of step index ``k``: ``0–4``, ``5–9``, ``10–19``, ``20+``."""
    edges = [*STEP_BINS, math.inf]
    for lo, hi in itertools.pairwise(edges):
        if lo <= k < hi:
            return f"{lo}+" if math.isinf(hi) else f"{lo}–{int(hi) - 1}"
    raise ValueError(k)


def points_frame(st: Store) -> pd.DataFrame:
    """Every audited point, with its run's label and its step bin."""
    df = st.table(POINTS_TABLE)
    if df.empty:
        return df
    labels = dict(st.runs_frame()[["run", "label"]].itertuples(index=False))
    df["label"] = df["run"].map(labels).fillna(df["run"])
    df["bin"] = df["k"].astype(int).map(step_bin)
    return df


def by_game(df: pd.DataFrame, col: str) -> dict[Any, list[float]]:
    """``col``'s defined values by game (episode seed)."""
    out: dict[Any, list[float]] = {}
    for seed, v in zip(df["seed"], df[col], strict=True):
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            out.setdefault(int(seed), []).append(float(v))
    return out


def interval(df: pd.DataFrame, col: str) -> Interval:
    """Mean of ``col`` over points with its game-clustered interval."""
    return clustered_bootstrap(by_game(df, col))


def summary(df: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """One row per group: points, games, mean δ under each context, β, κ and lost (each with
    its interval), and the relevance lag (median where defined, and how often defined)."""
    rows = []
    for key, grp in df.groupby(list(keys), sort=True):
        key_t = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(keys, key_t, strict=True))
        row.update(points=len(grp), games=grp["seed"].nunique())
        for c in DELTAS:
            vals = pd.to_numeric(grp[c], errors="coerce").dropna()
            row[c] = float(vals.mean()) if len(vals) else math.nan
        for c in ("beta", "kappa", "lost"):
            row[c] = interval(grp, c)
        lags = pd.to_numeric(grp["rel_lag"], errors="coerce").dropna()
        row["rel_lag"] = float(lags.median()) if len(lags) else math.nan
        tried = int(grp["rel_gain"].notna().sum())
        row["rel_defined"] = f"{len(lags)}/{tried}" if tried else "–"
        rows.append(row)
    return pd.DataFrame(rows)


def _cell(v: Any) -> str:
    if isinstance(v, Interval):
        return v.text()
    if isinstance(v, float):
        return "–" if math.isnan(v) else f"{v:.2f}"
    return str(v).replace("|", "\\|")  # a run label's separators, inside a table cell


def markdown(table: pd.DataFrame, names: dict[str, str] | None = None) -> str:
    """A summary table as Markdown."""
    names = names or {}
    cols = list(table.columns)
    head = "| " + " | ".join(names.get(c, c) for c in cols) + " |"
    rule = "|" + "---|" * len(cols)
    body = ["| " + " | ".join(_cell(r[c]) for c in cols) + " |" for _, r in table.iterrows()]
    return "\n".join([head, rule, *body])


NAMES = {"nll_own": "δ own", "nll_full": "δ full", "nll_oracle": "δ true state",
         "nll_readtime": "δ read-time", "beta": "β [95% CI]", "kappa": "κ [95% CI]",
         "lost": "lost vs full [95% CI]", "rel_lag": "rel. lag (median)",
         "rel_defined": "lag defined", "bin": "steps since start"}  # fmt: skip


def skipped(st: Store) -> dict[str, dict[str, int]]:
    """Skipped steps by run label and reason, and the episodes that failed (``error``)."""
    labels = dict(st.runs_frame()[["run", "label"]].itertuples(index=False))
    out: dict[str, dict[str, int]] = {}
    for r in st.rows(EPISODES_TABLE, ["run", "skipped", "error"]):
        cell = out.setdefault(str(labels.get(r["run"], r["run"])), {})
        for why, n in json.loads(r["skipped"] or "{}").items():
            cell[why] = cell.get(why, 0) + int(n)
        if r["error"]:
            cell["failed episodes"] = cell.get("failed episodes", 0) + 1
    return out


def plot(df: pd.DataFrame, path: Path) -> Path:
    """κ and lost vs full (mean per step bin) per run."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6))
    FigureCanvasAgg(fig)
    order = [step_bin(b) for b in STEP_BINS]
    for ax, col, title in zip(fig.subplots(1, 2), ("kappa", "lost"),
                              ("κ (write-time regret)", "lost vs full"), strict=True):  # fmt: skip
        for label, grp in df.groupby("label", sort=True):
            means = grp.assign(v=pd.to_numeric(grp[col], errors="coerce")).groupby("bin")["v"]
            ys = [means.mean().get(b, math.nan) for b in order]
            ax.plot(order, ys, marker="o", label=str(label)[:48])
        ax.set_title(title)
        ax.set_xlabel("steps since start")
        ax.set_ylabel("nats")
        ax.axhline(0, color="grey", lw=0.5)
    fig.axes[0].legend(fontsize=6)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    return path


def audit_markdown(st: Store, out_dir: Path) -> tuple[list[str], dict[str, Path]]:
    """The audit section's blocks and files ([] when the store holds no audit)."""
    df = points_frame(st)
    if df.empty:
        return [], {}
    blocks = ["## Decision sufficiency (statelab audit)",
              "Reader NLL (nats) of a* under each context; β = δ read-time − δ full, "
              "κ = δ own − δ read-time, lost = δ own − δ full (docs/audit.md)."]  # fmt: skip
    cols = ["env", "label", "points", "games", *DELTAS, "beta", "kappa", "lost", "rel_lag",
            "rel_defined"]  # fmt: skip
    blocks.append(markdown(summary(df, ["env", "label"])[cols], NAMES))
    blocks.append("### By steps since the episode's start")
    by_bin = summary(df, ["label", "bin"])[["label", "bin", "points", "kappa", "lost"]]
    blocks.append(markdown(by_bin, NAMES))
    skips = skipped(st)
    if any(skips.values()):
        lines = [f"- {label}: " + ", ".join(f"{n} {why}" for why, n in sorted(c.items()))
                 for label, c in sorted(skips.items()) if c]  # fmt: skip
        blocks.append("Steps without a scorable a* (skipped, never guessed):\n" + "\n".join(lines))
    png = plot(df, out_dir / "audit_kappa.png")
    blocks.append(f"![κ and lost by steps since start]({png.name})")
    return blocks, {"audit_kappa": png}


@report_section("audit", order=15)
def _section(inputs: ReportInputs) -> Blocks | None:
    """The general audit's tables, when the store holds audited points."""
    blocks, files = audit_markdown(inputs.store, inputs.out_dir)
    return Blocks(blocks, files) if blocks else None


def state_markdown(st: Store) -> list[str]:
    """The state-accuracy blocks ([] when no run writes a state on an env that tracks one)."""
    from statelab.analysis.audit.stateacc import FIELDS, written_state_accuracy

    table = written_state_accuracy(st)
    if table.empty:
        return []
    shown = table.copy()
    for c in (*FIELDS, "accuracy"):
        shown[c] = shown[c].map(lambda v: "–" if math.isnan(v) else f"{100 * v:.1f}")
    return ["## State accuracy of written states",
            "Each written state (StateAct's fields, a model-written memory or map) against the "
            "env's tracked truth, field by field, in % (docs/audit.md).",
            markdown(shown)]  # fmt: skip


@report_section("state-accuracy", order=16)
def _state_section(inputs: ReportInputs) -> Blocks | None:
    """Seed 002's tracking accuracy for every written state."""
    blocks = state_markdown(inputs.store)
    return Blocks(blocks) if blocks else None
