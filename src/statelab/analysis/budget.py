"""Reward within budget (seed 004, section 5 'Metrics', Figs. 3-5): the mean reward an agent
has reached by each fraction of its action budget, one line per world-model variant.

- An episode's budget ``B`` is its run's ``max_steps`` (the experiment's) or, when unset, the
  env's own budget. Its value by fraction ``f`` reads its first ``floor(f * B)`` env steps, as
  the seed's authors do (:func:`curve_mode`): on an env where a win is the full score
  (household, BabyAI) it is 1 when the episode was won within those steps, else 0 (BabyAI's
  shaped reward is not used); on an env with partial credit (ScienceWorld, a win at 70 of 100
  points) it is the best score reached within them (0 within no step, as the authors'
  ``anytime_return_at_fraction`` gives at ``floor(f * B) = 0``), held after the episode
  ends. An episode that ended earlier (won, lost, derailed) keeps its final value. Queries
  and rejected proposals are no env steps, so they cost nothing here, as in the seed.
- Envs are grouped by family, the name before ``/`` (``scienceworld/boil`` and its 23
  siblings make one ScienceWorld plot, the BabyAI tasks one BabyAI plot, as in Fig. 3); each
  episode is read against its own task's budget.
- A *repetition* is one rollout index (seed 004's "three runs": ``rollouts: 3``): its curve is
  the mean over every episode of that rollout in the group (all tasks and seeds). A line is the
  mean over repetitions; the band is their standard deviation (ddof 1; none with one
  repetition).
- One PNG per env family (``reward_within_budget_<family>.png``); one panel per combination of
  the other axes that vary (agent, model, ...), a line per world model, and the expert's as a
  grey dashed ceiling. A table in the report gives each line at 25, 50, 75 and 100% of the
  budget.
- The section applies when a run has a world model other than ``none``, or when the
  experiment's ``report`` layout sets ``reward_within_budget: true``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from statelab.analysis._components import is_expert, tags
from statelab.analysis._md import md_row, md_text
from statelab.analysis.sections import Blocks, ReportInputs, reading, report_section
from statelab.core import MODEL_FREE
from statelab.envs import env_family
from statelab.run.records import FINISHED
from statelab.run.store import Store

#: budget fractions the curves are read at
FRACTIONS: tuple[float, ...] = tuple(i / 20 for i in range(21))
#: fractions the report's table shows
SHOWN = (0.25, 0.5, 0.75, 1.0)
#: the line of the expert runs (they have no world model)
EXPERT = "expert"
#: what a world model does that ``none`` does not (its tags)
_WORLD_MODEL_TAGS = {"answers-queries", "validates"}
_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3")


def budget_of(spec: dict[str, Any], env: str) -> int:
    """The action budget of a run: its ``max_steps``, else the env's own."""
    if spec.get("max_steps"):
        return int(spec["max_steps"])
    from statelab.envs import env_class

    return int(env_class(env).max_steps)


def curve_mode(env: str) -> str:
    """How the curves read an episode of ``env``: ``"score"`` on an env with partial credit
    (its ``win_score`` below 1: the running best score), else ``"success"`` (won or not)."""
    from statelab.envs import env_class

    return "score" if env_class(env).win_score < 1.0 else "success"


def episode_curves(
    episodes: pd.DataFrame, steps: pd.DataFrame, fractions: Sequence[float] = FRACTIONS
) -> pd.DataFrame:
    """The value reached by each fraction of the budget, per episode (see the module doc).

    ``episodes``: ``run, seed, rollout, budget`` and optionally ``mode`` (:func:`curve_mode`;
    default ``"score"``), ``success`` and ``steps`` (read in ``"success"`` mode); ``steps``:
    ``run, seed, rollout, t, reward`` (``"score"`` mode: the step rewards sum to the score).
    Returns ``run, seed, rollout, fraction, reward``."""
    key = ["run", "seed", "rollout"]
    by_ep = {k: g.sort_values("t") for k, g in steps.groupby(key)}
    rows = []
    for ep in episodes.itertuples(index=False):
        k = (ep.run, ep.seed, ep.rollout)
        limits = [math.floor(f * int(ep.budget) + 1e-9) for f in fractions]
        if getattr(ep, "mode", "score") == "success":
            won, used = bool(ep.success), int(ep.steps)
            values = [1.0 if won and used <= limit else 0.0 for limit in limits]
        else:
            g = by_ep.get(k)
            t = g["t"].to_numpy() if g is not None else np.zeros(0)
            r = g["reward"].fillna(0.0).to_numpy(dtype=float) if g is not None else np.zeros(0)
            best = np.maximum.accumulate(np.cumsum(r)) if len(r) else r
            values = [_last(best[t <= limit]) for limit in limits]
        rows += [(*k, float(f), v) for f, v in zip(fractions, values, strict=True)]
    return pd.DataFrame(rows, columns=[*key, "fraction", "reward"])


def _last(values: np.ndarray) -> float:
    return float(values[-1]) if len(values) else 0.0


def line_curves(curves: pd.DataFrame, runs: pd.DataFrame, group: Sequence[str]) -> pd.DataFrame:
    """Mean and SD over repetitions, per ``group`` (columns of ``runs``) and fraction.

    ``curves`` as :func:`episode_curves` gives it; ``runs``: ``run`` and the ``group``
    columns. Repetition ``i`` of a group is the mean over the group's episodes of rollout
    ``i`` (every run and seed in it: all the tasks of an env family); returns ``*group,
    fraction, mean, sd, n`` (``n`` repetitions, ``sd`` NaN when n is 1)."""
    eps = curves.merge(runs[["run", *group]], on="run")
    reps = eps.groupby([*group, "rollout", "fraction"], as_index=False)["reward"].mean()
    g = reps.groupby([*group, "fraction"])["reward"]
    out = g.agg(mean="mean", sd=lambda x: x.std(ddof=1) if len(x) > 1 else math.nan, n="size")
    return out.reset_index()


def _read(st: Store) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    runs = st.table("runs")
    cols = ["run", "seed", "rollout", "success", "steps"]
    episodes = st.table("episodes", cols, {"status": FINISHED})
    meta = st.experiment()
    return runs, episodes, meta[1] if meta else {}


def _curves(st: Store, eps: pd.DataFrame, size: int = 5000) -> pd.DataFrame:
    """:func:`episode_curves` of ``eps`` (in its order), the steps read a few episodes at a
    time and only for the episodes read in ``"score"`` mode (a ``"success"`` one needs none)."""
    key = ["run", "seed", "rollout"]
    eps = eps.assign(_order=range(len(eps)))
    score = eps[eps["mode"] != "success"]
    parts, seen = [], []
    if len(score):
        runs = tuple(dict.fromkeys(score["run"]))
        for frame in st.episode_frames("steps", ["t", "reward"], {"run": runs}, size=size):
            if frame.empty:
                continue
            mine = score.merge(frame[key].drop_duplicates(), on=key)
            parts.append(episode_curves(mine, frame))
            seen.append(mine[key])
    done = pd.concat(seen, ignore_index=True) if seen else pd.DataFrame(columns=key)
    rest = eps.merge(done, on=key, how="left", indicator=True)
    rest = rest[rest["_merge"] == "left_only"].drop(columns="_merge")
    parts.append(episode_curves(rest, rest.iloc[:0][key].assign(t=0, reward=0.0)))
    curves = pd.concat([p for p in parts if len(p)] or parts[-1:], ignore_index=True)
    curves = curves.merge(eps[[*key, "_order"]], on=key)
    curves = curves.sort_values("_order", kind="stable").drop(columns="_order")
    return curves.reset_index(drop=True)


def _applies(runs: pd.DataFrame, config: dict[str, Any]) -> bool:
    layout = config.get("report") or {}
    if layout.get("reward_within_budget"):
        return True
    if "worldmodel" not in runs:
        return False
    stored = runs["components"] if "components" in runs else [None] * len(runs)
    return any(
        _WORLD_MODEL_TAGS & tags("worldmodel", w, c)
        for w, c in zip(runs["worldmodel"], stored, strict=True)
    )


def _line(row: pd.Series) -> str:
    if is_expert(row.get("agent"), row.get("components")):
        return EXPERT
    w = row.get("worldmodel")
    return str(w) if isinstance(w, str) and w and w != MODEL_FREE else "none"


def _panel_axes(runs: pd.DataFrame) -> list[str]:
    """The axes other than env and world model that vary among the model runs."""
    model_runs = runs[runs["line"] != EXPERT]
    skip = {"env", "family", "worldmodel", "run", "label", "spec", "components", "tags", "line"}
    skip |= {"budget", "mode"}
    return [c for c in model_runs.columns if c not in skip and model_runs[c].nunique() > 1]


def _panel(row: pd.Series, axes: Sequence[str]) -> str:
    return " / ".join(str(row[a]) for a in axes) if axes else "all runs"


def _plot(table: pd.DataFrame, env: str, path: Path, order: Sequence[str]) -> None:
    panels = [p for p in dict.fromkeys(table["panel"]) if p != EXPERT]
    fig = Figure(figsize=(4.2 * max(1, len(panels)), 3.4), layout="constrained")
    FigureCanvasAgg(fig)
    axs = fig.subplots(1, max(1, len(panels)), squeeze=False)[0]
    lines = [x for x in order if x != EXPERT and x in set(table["line"])]
    colour = {x: _COLOURS[i % len(_COLOURS)] for i, x in enumerate(lines)}
    expert = table[table["line"] == EXPERT]
    for ax, panel in zip(axs, panels or ["all runs"], strict=False):
        part = table[table["panel"] == panel]
        for line in lines:
            d = part[part["line"] == line].sort_values("fraction")
            if d.empty:
                continue
            ax.plot(d["fraction"], d["mean"], color=colour[line], label=line)
            sd = d["sd"].fillna(0.0)
            ax.fill_between(
                d["fraction"],
                d["mean"] - sd,
                d["mean"] + sd,
                color=colour[line],
                alpha=0.2,
                linewidth=0,
            )
        if not expert.empty:
            e = expert.sort_values("fraction")
            ax.plot(e["fraction"], e["mean"], color="#999999", linestyle="--", label=EXPERT)
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel("fraction of the action budget")
        ax.set_xlim(0, 1)
        ax.grid(alpha=0.3)
    axs[0].set_ylabel("mean reward")
    axs[0].legend(fontsize=8, loc="upper left")
    fig.suptitle(f"Reward within budget: {env}", fontsize=10)
    fig.savefig(path, dpi=110)


def _file_name(env: str) -> str:
    return "reward_within_budget_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", env) + ".png"


def reward_within_budget(
    store: Store | str | Path, out_dir: Path
) -> tuple[str, dict[str, Path]]:
    """The section's Markdown and its PNGs and JSON, when it applies (else "" and none).
    The random floor's runs are left out (their world model is "-", not the base's)."""
    with reading(store) as st:
        return _reward_within_budget(st, out_dir)


def _reward_within_budget(st: Store, out_dir: Path) -> tuple[str, dict[str, Path]]:
    runs, episodes, config = _read(st)
    floor = runs["tags"].fillna("").str.contains('"floor"') if "tags" in runs else False
    runs = runs[~floor] if isinstance(floor, pd.Series) else runs
    if runs.empty or episodes.empty or not _applies(runs, config):
        return "", {}
    runs = runs.copy()
    runs["line"] = runs.apply(_line, axis=1)
    runs["budget"] = [
        budget_of(json.loads(s), e) for s, e in zip(runs["spec"], runs["env"], strict=True)
    ]
    runs["family"] = [env_family(str(e)) for e in runs["env"]]
    runs["mode"] = [curve_mode(str(e)) for e in runs["env"]]
    axes = _panel_axes(runs)
    runs["panel"] = [
        EXPERT if line == EXPERT else _panel(row, axes)
        for line, (_, row) in zip(runs["line"], runs.iterrows(), strict=True)
    ]
    eps = episodes.merge(runs[["run", "budget", "mode"]], on="run")
    table = line_curves(_curves(st, eps), runs, ["family", "panel", "line"])
    order = list(dict.fromkeys(runs["line"]))  # the grid's order: none (the base) first
    rank = {x: i for i, x in enumerate(order)}
    table = table.sort_values(
        ["family", "panel", "line"],
        key=lambda c: c.map(rank) if c.name == "line" else c,
        kind="stable",
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    plots: list[tuple[str, Path]] = []
    md = [
        "## Reward within budget",
        "",
        "Mean reward reached by each fraction of the action budget (seed 004, as its authors "
        "read it): the share of episodes won within those steps (household, BabyAI), or the "
        "best score reached within them (ScienceWorld, 0 to 1); the band in the plots is the "
        "SD over repetitions (rollouts).",
        "",
    ]
    head = "| env | panel | world model | n | " + " | ".join(f"{int(f * 100)}%" for f in SHOWN)
    md += [head + " |", "|" + "---|" * (4 + len(SHOWN))]
    for env, part in table.groupby("family", sort=False):
        path = out_dir / _file_name(str(env))
        _plot(part, str(env), path, order)
        files[f"reward_within_budget:{env}"] = path
        plots.append((str(env), path))
        for (panel, line), d in part.groupby(["panel", "line"], sort=False):
            at = d.set_index("fraction")
            cells = []
            for f in SHOWN:
                m, s = at.loc[f, "mean"], at.loc[f, "sd"]
                cells.append(f"{m:.2f}" + ("" if math.isnan(s) else f" ± {s:.2f}"))
            n = int(d["n"].iloc[0])
            md.append(md_row([env, panel, line, n, *cells]))
    md.append("")
    md += [f"![reward within budget: {md_text(env)}]({p.name})" for env, p in plots]
    json_path = out_dir / "reward_within_budget.json"
    json_path.write_text(table.to_json(orient="records", indent=1))
    files["reward_within_budget"] = json_path
    return "\n".join(md) + "\n", files


@report_section("reward-within-budget", order=40)
def _section(inputs: ReportInputs) -> Blocks | None:
    """Seed 004's reward-within-budget curves."""
    md, files = reward_within_budget(inputs.store, inputs.out_dir)
    return Blocks([md], files) if md else None


__all__ = [
    "FRACTIONS",
    "budget_of",
    "curve_mode",
    "episode_curves",
    "line_curves",
    "reward_within_budget",
]
