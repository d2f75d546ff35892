"""Seed 001's Table 1 and Figures 4 and 5, from a results store.

Rows: every (thinking mode x tool library x collision check x close-up) combination present
in the store, for the ``tools`` and ``plan`` agents (:mod:`statelab.agents.tools`): thinking
from the agent's ``think`` option, the library from the agent (``plan``: primitives, the
model writes the actions; ``tools``: the geodesic tools), the collision check from ``cc``, the
close-up from a ``zoom`` grounding. Rows come in the seed's order, close-up first; the expert
(if run) closes the table as the ceiling. Columns:

- success % (N): episodes that reached the target, over finished episodes;
- time per decision: mean wall seconds of a decision (its model calls plus statelab's own
  work; auxiliary calls such as a history summary and the offline descriptions excluded;
  a cached call counts the time it took when it was made);
- tokens generated per decision: mean output tokens of the decision's model calls;
- decisions without a model call: share of decisions the collision check took alone (the
  agent's ``model_call`` mark; steps without the mark: no tokens in or out).

Files: ``table1.md``, ``table1.json``, ``table1_success.png`` (success per variant),
``fig4_geodesics.png`` and ``fig4_clusters.png`` (the library used: sampled geodesics and
their k-medoids clusters) and ``fig5_episode.png`` (the best variant's first successful
episode, replayed: full grid before, observation, close-up, full grid after each decision).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from statelab.analysis._components import arguments, tags
from statelab.analysis._md import md_row
from statelab.analysis.sections import Blocks, ReportInputs, reading, report_section
from statelab.run.records import FINISHED
from statelab.run.store import Store
from statelab.tools.library import Geometry, LibrarySpec, build_geometry, cache_root

#: (thinking, geodesic tools, collision check) in the order of the seed's Table 1
SEED_ORDER = [
    (False, False, False),
    (False, True, False),
    (True, False, False),
    (True, True, False),
    (True, True, True),
    (False, True, True),
]
COLUMNS = [
    "model", "agent", "grounding", "thinking", "geodesic", "collision_check", "closeup", "n",
    "successes", "success_pct", "decisions", "time_s", "tokens", "no_model_share",
]  # fmt: skip


def read_tables(store: Store | str | Path) -> dict[str, pd.DataFrame]:
    """The store's runs, episodes and steps tables (an open store, or a path read-only)."""
    with reading(store) as st:
        return {t: st.table(t) for t in ("runs", "episodes", "steps")}


def _tags(run: Any, axis: str) -> set[str]:
    """The tags of a run's component on ``axis`` (stored with the run, else its own)."""
    return tags(axis, getattr(run, axis, None), getattr(run, "components", None))


def flags(run: Any) -> dict[str, bool] | None:
    """Table 1's columns from the run's component tags; None when its agent neither uses
    tools nor plans its moves (not a Table 1 row)."""
    agent = _tags(run, "agent")
    if not agent & {"uses-tools", "plans-moves"}:
        return None
    return {
        "thinking": "thinks" in agent,
        "geodesic": "uses-tools" in agent,
        "collision_check": "collision-check" in agent,
        "closeup": "close-up" in _tags(run, "grounding"),
    }


def applies(runs: pd.DataFrame) -> bool:
    """Whether some run's agent uses tools or plans its moves (a Table 1 agent)."""
    return any(flags(r) is not None for r in runs.itertuples())


def _model_call(meta: Any, tokens: bool) -> bool:
    try:
        return bool(json.loads(meta)["model_call"])
    except (TypeError, ValueError, KeyError):
        return tokens


def _model_calls(steps: pd.DataFrame) -> pd.Series:
    """Per step: whether the decision called the model (the agent's mark in the step's
    ``meta``, else whether it spent tokens)."""
    tokens = (steps["agent_in"].fillna(0) + steps["agent_out"].fillna(0)) > 0
    called = [_model_call(m, bool(t)) for m, t in zip(steps["meta"], tokens, strict=True)]
    return pd.Series(called, index=steps.index, dtype=bool)


def table1(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per Table 1 run (plus the expert), columns :data:`COLUMNS`."""
    runs, eps, steps = tables["runs"], tables["episodes"], tables["steps"]
    steps = steps.assign(model_call=_model_calls(steps))
    rows: list[dict[str, Any]] = []
    for run in runs.itertuples():
        f = flags(run)
        expert = "expert" in _tags(run, "agent")
        if f is None and not expert:
            continue
        done = eps[(eps["run"] == run.run) & (eps["status"].isin(FINISHED))]
        st = steps[steps["run"] == run.run]
        n = len(done)
        rows.append(
            {
                "model": run.model,
                "agent": run.agent,
                "grounding": run.grounding,
                "thinking": bool(f and f["thinking"]),
                "geodesic": bool(f and f["geodesic"]),
                "collision_check": bool(f and f["collision_check"]),
                "closeup": bool(f and f["closeup"]),
                "n": n,
                "successes": int(done["success"].sum()),
                "success_pct": 100.0 * float(done["success"].mean()) if n else math.nan,
                "decisions": len(st),
                "time_s": float((st["latency"] + st["overhead"]).mean()) if len(st) else math.nan,
                "tokens": float(st["agent_out"].mean()) if len(st) else math.nan,
                "no_model_share": float((~st["model_call"]).mean()) if len(st) else math.nan,
            }
        )
    df = pd.DataFrame(rows, columns=COLUMNS)
    experts = {str(r.agent) for r in runs.itertuples() if "expert" in _tags(r, "agent")}
    df.attrs["experts"] = experts
    if df.empty:
        return df

    def order(r: pd.Series) -> tuple[Any, ...]:
        key = (r["thinking"], r["geodesic"], r["collision_check"])
        first = len(SEED_ORDER) + 1 if r["agent"] in experts else SEED_ORDER.index(key)
        return (first, not r["closeup"], str(r["model"]), str(r["agent"]))

    out = df.iloc[sorted(range(len(df)), key=lambda i: order(df.iloc[i]))].reset_index(drop=True)
    out.attrs["experts"] = experts
    return out


def _experts(df: pd.DataFrame) -> pd.Series:
    """Which rows are the expert's (by its agent's ``expert`` tag, kept by :func:`table1`)."""
    return df["agent"].isin(df.attrs.get("experts", set()))


def _tick(flag: bool) -> str:
    return "✓" if flag else "×"


def _seconds(s: float) -> str:
    if math.isnan(s):
        return "-"
    return f"{s / 60:.1f} min" if s >= 60 else f"{s:.2f} s"


def _num(x: float, fmt: str) -> str:
    return "-" if math.isnan(x) else format(x, fmt)


def table1_markdown(df: pd.DataFrame) -> str:
    """The seed's Table 1 layout (one line per row; a model column when there are several)."""
    expert_rows = _experts(df)
    many = df["model"][~expert_rows].nunique() > 1
    head = [
        "Run", *(["Model"] if many else []), "Thinking", "Geodesic tools", "Collision check",
        "Zoom (close-up)", "Time / decision", "Tokens generated / decision",
        "Decisions without a model call", "Success % (N)",
    ]  # fmt: skip
    lines = [md_row(head), "|" + "---|" * len(head)]
    for r, expert in zip(df.itertuples(), expert_rows, strict=True):
        run = "expert (ceiling)" if expert else f"{r.agent} / {r.grounding}"
        flags = ["-"] * 4 if expert else [
            _tick(r.thinking), _tick(r.geodesic), _tick(r.collision_check), _tick(r.closeup)
        ]  # fmt: skip
        cells = [run, *([str(r.model)] if many else []), *flags]
        share = math.nan if expert else r.no_model_share
        cells += [
            _seconds(r.time_s),
            "-" if expert else _num(r.tokens, ".0f"),
            "-" if math.isnan(share) else f"{100 * share:.0f}%",
            f"{_num(r.success_pct, '.0f')}{'' if math.isnan(r.success_pct) else '%'} ({r.n})",
        ]
        lines.append(md_row(cells))
    return "\n".join(lines)


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def success_png(df: pd.DataFrame, path: Path) -> None:
    """Success % per variant, horizontal bars annotated with successes / N."""
    fig = _figure(8, 0.5 * len(df) + 1.2)
    ax = fig.add_subplot(1, 1, 1)
    expert_rows = list(_experts(df))
    labels = [
        "expert" if e else f"{r.agent} / {r.grounding}"
        for r, e in zip(df.itertuples(), expert_rows, strict=True)
    ]
    y = np.arange(len(df))[::-1]
    values = df["success_pct"].fillna(0).to_numpy()
    colours = ["#BBBBBB" if e else "#4C72B0" for e in expert_rows]
    ax.barh(y, values, color=colours)
    for yi, v, r in zip(y, values, df.itertuples(), strict=True):
        ax.text(v + 1, yi, f"{r.successes}/{r.n}", va="center", fontsize=8)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlim(0, 110)
    ax.set_xlabel("success %")
    ax.set_title("Success per variant (seed 001, Table 1)")
    fig.tight_layout()
    fig.savefig(path, format="png")


def _library_geometries(tables: dict[str, pd.DataFrame]) -> list[Geometry]:
    """The libraries the tools runs used: found in the cache by the key the agent stored,
    else rebuilt from the agent's spelling on the default grid."""
    keys: dict[str, str] = {}
    for row in tables["steps"].itertuples():
        try:
            key = json.loads(row.meta).get("library")
        except (TypeError, ValueError, AttributeError):
            continue
        if key:
            keys.setdefault(str(key), str(row.run))
    out: list[Geometry] = []
    for key in keys:
        path = cache_root() / key / "library.json"
        if path.is_file():
            out.append(Geometry.from_json(json.loads(path.read_text())))
    if not out:
        for run in tables["runs"].itertuples():
            if "uses-tools" in _tags(run, "agent"):
                o = arguments("agent", run.agent, getattr(run, "components", None))
                spec = LibrarySpec(n_cars=o["cars"], n=o["n"], k=o["k"], seed=o["seed"])
                out.append(build_geometry(spec))
                break
    return out


def episode_png(tables: dict[str, pd.DataFrame], df: pd.DataFrame, path: Path) -> bool:
    """Figure 5: replay the best variant's first successful episode (else its first one):
    per decision, the full grid before, the observation, the close-up, the grid after."""
    from statelab.envs import make_env

    runs, eps, steps = tables["runs"], tables["episodes"], tables["steps"]
    cands = df[~_experts(df)].sort_values("success_pct", ascending=False, kind="stable")
    for r in cands.itertuples():
        hit = runs[(runs["agent"] == r.agent) & (runs["grounding"] == r.grounding)]
        hit = hit[hit["model"] == r.model]
        if hit.empty:
            continue
        run = hit.iloc[0]
        done = eps[(eps["run"] == run["run"]) & (eps["status"].isin(FINISHED))].sort_values("seed")
        if done.empty:
            continue
        ep = done[done["success"] == 1].head(1)
        ep = ep if len(ep) else done.head(1)
        seed = int(ep["seed"].iloc[0])
        actions = steps[(steps["run"] == run["run"]) & (steps["seed"] == seed)].sort_values("t")
        env: Any = make_env(str(run["env"]))
        if not all(hasattr(env, m) for m in ("render_full", "render_window", "render_zoom")):
            return False
        env.reset(seed=seed)
        panels: list[list[np.ndarray]] = []
        for action in list(actions["action"])[:10]:
            before = [env.render_full(), env.render_window(), env.render_zoom()]
            env.step(str(action))
            panels.append([*before, env.render_full()])
        if not panels:
            continue
        fig = _figure(10, 2.6 * len(panels))
        titles = ("full grid, before", "observation", "close-up", "full grid, after")
        for i, (row, act) in enumerate(zip(panels, actions["action"], strict=False)):
            for j, img in enumerate(row):
                ax = fig.add_subplot(len(panels), 4, 4 * i + j + 1)
                ax.imshow(img, interpolation="nearest")
                ax.set_xticks([])
                ax.set_yticks([])
                ax.set_title(
                    f"turn {i + 1}: {titles[j]}" + (f" ({act})" if j == 3 else ""), fontsize=7
                )
        outcome = "success" if bool(ep["success"].iloc[0]) else "failure"
        fig.suptitle(f"{r.agent} / {r.grounding}, episode seed {seed}: {outcome}", fontsize=9)
        fig.tight_layout()
        fig.savefig(path, format="png")
        return True
    return False


def write_table1(
    store: Store | str | Path, out_dir: str | Path
) -> tuple[str, dict[str, Path]]:
    """Write Table 1 and its figures into ``out_dir``; return a Markdown section and the
    written files (nothing when the store has no Table 1 run)."""
    tables = read_tables(store)
    if not applies(tables["runs"]):
        return "", {}
    from statelab.tools.library import library_figures

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    df = table1(tables)
    files = {"table1": out / "table1.md", "table1_json": out / "table1.json"}
    body = table1_markdown(df)
    files["table1"].write_text(f"# Seed 001, Table 1\n\n{body}\n")
    files["table1_json"].write_text(
        json.dumps(json.loads(df.to_json(orient="records")), indent=1) + "\n"
    )
    files["table1_success"] = out / "table1_success.png"
    success_png(df, files["table1_success"])
    section = [
        "## Seed 001, Table 1",
        "",
        body,
        "",
        "Time / decision: mean wall seconds per decision (model calls and statelab's own work; "
        "offline tool descriptions and auxiliary calls excluded). Decisions without a model "
        "call: taken by the collision check alone.",
        "",
        f"![Success per variant]({files['table1_success'].name})",
        "",
    ]
    geometries = _library_geometries(tables)
    if geometries:
        figs = library_figures(geometries[0], out)
        files.update(figs)
        spec = geometries[0].spec
        section += [
            f"Tool library ({spec.n} geodesics, K = {spec.k}): {', '.join(geometries[0].tools)}.",
            "",
            f"![Sampled geodesics]({figs['fig4_geodesics'].name})",
            f"![k-medoids clusters]({figs['fig4_clusters'].name})",
            "",
        ]
    fig5 = out / "fig5_episode.png"
    if episode_png(tables, df, fig5):
        files["fig5_episode"] = fig5
        section += [f"![A replayed episode of the best variant]({fig5.name})", ""]
    return "\n".join(section), files


@report_section("seed001-table1", order=20)
def _table1_section(inputs: ReportInputs) -> Blocks | None:
    """Seed 001's Table 1, when a run's agent uses tools or plans its moves (decided from the
    runs alone: a store without Table 1 runs reads no steps)."""
    if not applies(inputs.runs):
        return None
    section, files = write_table1(inputs.store, inputs.out_dir)
    return Blocks([section], files) if section else None
