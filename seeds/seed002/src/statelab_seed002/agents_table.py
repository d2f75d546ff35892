"""Seed 002's agent-variant table (Table 6's rows: success, avg steps, state accuracy) and its
report section, from the lab's agent metrics (:mod:`statelab.analysis.agentmetrics`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.analysis._md import md_row
from statelab.analysis.agentmetrics import (
    avg_steps_solved,
    describe_agent,
    group_keys,
    state_accuracy_by,
    stored_by_agent,
    success_rate,
)
from statelab.analysis.sections import Blocks, ReportInputs, reading, report_section
from statelab.run.store import Store


def row_label(spelling: str, stored: Any = None) -> str:
    """The agent's own label (``Goal+State+Thought+Act`` for seed 002's rows)."""
    return str(describe_agent(spelling, stored)["label"] or spelling)


#: Table 6 orders its rows by the fields written: goal, then state, then thought (as binary
#: digits), JSON turns after text ones, decomposing agents and all others last
_RANK = {"states-goal": 4, "tracks-state": 2, "thinks": 1, "json-turns": 8, "decomposes": 100}


def _rank(spelling: str, stored: Any = None) -> int:
    tags = set(describe_agent(spelling, stored)["tags"])
    if "structured-turns" not in tags:
        return 200
    return sum(w for tag, w in _RANK.items() if tag in tags)


def agent_table(
    episodes: pd.DataFrame, steps: pd.DataFrame | None = None, by: Sequence[str] | str = "agent"
) -> pd.DataFrame:
    """Rows = agent variants (Table 6's order first): n, success, avg steps, state accuracy."""
    keys = group_keys(by)
    out = success_rate(episodes, keys).merge(avg_steps_solved(episodes, keys), on=keys)
    if steps is not None and not steps.empty:
        acc = state_accuracy_by(episodes, steps, keys)[[*keys, "accuracy"]]
        out = out.merge(acc.rename(columns={"accuracy": "state_acc"}), on=keys, how="left")
    else:
        out["state_acc"] = float("nan")
    if "agent" in keys:
        stored = stored_by_agent(episodes)
        agents = [str(a) for a in out["agent"]]
        out.insert(keys.index("agent") + 1, "row", [row_label(a, stored.get(a)) for a in agents])
        order = sorted(range(len(out)), key=lambda i: (_rank(agents[i], stored.get(agents[i])), i))
        out = out.iloc[order].reset_index(drop=True)
    return out


def _fmt(v: Any, pct: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{100 * v:.1f}" if pct else f"{v:.2f}"
    return str(v)


def ablation_markdown(table: pd.DataFrame, title: str = "Agent variants (seed 002)") -> str:
    """The ablation table as Markdown: success and state accuracy in %, env steps of solved
    episodes and, when known, their model calls (the anchor's "steps", its Table 5)."""
    keys = [c for c in table.columns if c not in ("n", "success", "solved", "avg_steps",
                                                    "avg_calls", "state_acc")]  # fmt: skip
    calls = "avg_calls" in table
    head = [*keys, "n", "success %", "avg steps (solved)"]
    head += ["avg model calls (solved; the anchor's steps)"] if calls else []
    head.append("state acc %")
    lines = [f"### {title}", "", md_row(head), "|" + "---|" * len(head)]
    for r in table.itertuples(index=False):
        d = r._asdict()
        cells = [_fmt(d[k]) for k in keys]
        cells += [_fmt(d["n"]), _fmt(d["success"], True), _fmt(d["avg_steps"])]
        cells += [_fmt(d["avg_calls"])] if calls else []
        cells.append(_fmt(d["state_acc"], True))
        lines.append(md_row(cells))
    return "\n".join(lines) + "\n"


# -- the report hook ------------------------------------------------------------------------
def agent_metrics(store: Store | str | Path, out_dir: Path) -> tuple[str, dict[str, Path]]:
    """The ablation table's Markdown when a seed-002 agent ran ("" otherwise), and the files
    written: ``agent_metrics.json`` (the table) in ``out_dir``."""
    with reading(store) as st:
        own = ["run", "seed", "rollout", "status", "success", "steps", "agent_calls"]
        runs = st.table("runs", ["run", "agent", "env", "model", "components"])
        episodes = st.table("episodes", own).merge(runs, on="run")
        stored = stored_by_agent(episodes)
        if not any(
            "structured-turns" in describe_agent(a, stored.get(a))["tags"]
            for a in episodes["agent"].astype(str).unique()
        ):
            return "", {}
        steps = st.table("steps", ["run", "seed", "t", "reply", "gold"])
    by = [k for k in ("env", "model") if episodes[k].nunique() > 1] + ["agent"]
    table = agent_table(episodes, steps, by)
    section = ablation_markdown(table)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "agent_metrics.json"
    path.write_text(table.to_json(orient="records", indent=1))
    return section, {"agent_metrics": path}


@report_section("seed002-agents", order=30)
def _agents_section(inputs: ReportInputs) -> Blocks | None:
    """Seed 002's agent-variant table, when a run's agent writes structured turns."""
    md, files = agent_metrics(inputs.store, inputs.out_dir)
    return Blocks([md], files) if md else None



__all__ = ["ablation_markdown", "agent_metrics", "agent_table", "row_label"]
