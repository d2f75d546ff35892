"""From episodes to seeds to one run's figures: the units every number in a report is over.

An *episode* is one play; a *seed* is one config seed (the store's ``grp``; ``seed`` when the
frame has no ``grp``), whose rollouts are its episodes. Each figure is computed per episode,
averaged over the seed's scored episodes, then averaged over seeds (seed 000 reports n over
seeds). So with several rollouts the success rate is the share of successful episodes (per
seed, then averaged), not the share of seeds with any success, and score per 1,000 input
tokens is Fig. 1's per-episode ratio, averaged, not a ratio of averages.

Episode kinds: ``failed`` (status is neither ``done`` nor ``truncated``), ``unscored``
(finished, but the score is NaN or missing) and ``scored``. A ``truncated`` episode (cut by
a per-episode limit) is scored as it stands at the cut: the env's score at its last step;
``episodes_done`` and ``episodes_truncated`` count episodes by status (scored or not).
Only scored episodes enter any figure. A seed counts in ``n``
when at least one of its episodes is scored; otherwise it is a failed seed (some episode
failed) or an unscored seed (all finished, none scored). ``n``, ``failed`` and ``unscored``
thus all count seeds; ``episodes``, ``episodes_failed`` and ``episodes_unscored`` count
episodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from statelab.analysis.behaviour import BEHAVIOUR_FIGURES
from statelab.analysis.stats import mean_sd
from statelab.run.records import DONE, FINISHED, TRUNCATED

FAILED, UNSCORED, SCORED = "failed", "unscored", "scored"

#: Per-episode figures (NaN where undefined), averaged per seed and then over seeds; the
#: behaviour figures (:mod:`statelab.analysis.behaviour`) are NaN unless the frame has them.
EPISODE_FIGURES: tuple[str, ...] = (
    "success",
    "in_per_step",
    "in_per_call",
    "out_per_step",
    "aux_in_per_step",
    "score_per_1k_in",
    *BEHAVIOUR_FIGURES,
)


def unit_column(episodes: pd.DataFrame) -> str:
    """The column that names an episode's config seed: ``grp`` when present, else ``seed``."""
    return "grp" if "grp" in episodes.columns else "seed"


def _ratio(num: pd.Series, den: pd.Series) -> np.ndarray:
    n = pd.to_numeric(num, errors="coerce").to_numpy(dtype=np.float64)
    d = pd.to_numeric(den, errors="coerce").to_numpy(dtype=np.float64)
    out = np.full(n.shape, np.nan)
    np.divide(n, d, out=out, where=np.isfinite(d) & (d > 0))
    return out


def _column(episodes: pd.DataFrame, name: str) -> pd.Series:
    if name in episodes.columns:
        return episodes[name]
    return pd.Series(np.nan, index=episodes.index, dtype=np.float64)


def episode_figures(episodes: pd.DataFrame) -> pd.DataFrame:
    """``episodes`` plus ``kind`` and the per-episode figures of :data:`EPISODE_FIGURES`.

    Tokens per env step divide by ``steps`` (the env steps taken; several acting calls may
    make one step: VoT's map, StateAct's constrained fields, ADaPT's sub-calls); tokens per
    call divide by ``agent_calls``; an episode without acting calls (the expert) has none.
    ``score_per_1k_in`` is seed 000's Fig. 1 for one
    episode: ``1000 * score / (agent_in / steps)``, the score per 1,000 of the episode's
    mean acting-agent input tokens per env step.
    """
    out = episodes.copy()
    score = pd.to_numeric(out["score"], errors="coerce").astype(np.float64)
    done = out["status"].isin(FINISHED)
    out["score"] = score
    out["kind"] = np.where(~done, FAILED, np.where(np.isfinite(score), SCORED, UNSCORED))
    out["success"] = pd.to_numeric(out["success"], errors="coerce").astype(np.float64)
    steps = _column(out, "steps")
    acting = steps.where(pd.to_numeric(out["agent_calls"], errors="coerce") > 0)  # else NaN
    out["in_per_step"] = _ratio(out["agent_in"], acting)
    out["in_per_call"] = _ratio(out["agent_in"], out["agent_calls"])
    out["out_per_step"] = _ratio(out["agent_out"], acting)
    out["aux_in_per_step"] = _ratio(_column(out, "aux_in"), steps)
    per_1k = np.full(len(out), np.nan)
    in_step = out["in_per_step"].to_numpy(dtype=np.float64)
    np.divide(score.to_numpy() * 1000.0, in_step, out=per_1k, where=in_step > 0)
    out["score_per_1k_in"] = per_1k
    for name in BEHAVIOUR_FIGURES:
        out[name] = pd.to_numeric(_column(out, name), errors="coerce").astype(np.float64)
    return out


def per_seed(episodes: pd.DataFrame) -> pd.DataFrame:
    """One run's episodes (from :func:`episode_figures`) -> one row per seed.

    Columns: ``seed``, ``kind`` of the seed, ``score`` and the :data:`EPISODE_FIGURES`
    averaged over the seed's scored episodes (NaN-skipping), and the episode counts
    ``episodes``, ``episodes_failed`` and ``episodes_unscored``, and by status
    ``episodes_done`` and ``episodes_truncated``. Seeds keep first-appearance order.
    """
    unit = unit_column(episodes)
    counts = pd.crosstab(episodes[unit], episodes["kind"])
    for kind in (FAILED, UNSCORED, SCORED):
        if kind not in counts.columns:
            counts[kind] = 0
    order = list(dict.fromkeys(episodes[unit].tolist()))
    counts = counts.loc[order]
    scored = episodes[episodes["kind"] == SCORED]
    means = scored.groupby(unit, sort=False)[["score", *EPISODE_FIGURES]].mean()
    seeds = means.reindex(order)
    seeds["episodes"] = counts[SCORED].to_numpy()
    seeds["episodes_failed"] = counts[FAILED].to_numpy()
    seeds["episodes_unscored"] = counts[UNSCORED].to_numpy()
    for status in (DONE, TRUNCATED):
        hit = (episodes["status"] == status).groupby(episodes[unit], sort=False).sum()
        seeds[f"episodes_{status}"] = hit.reindex(order).to_numpy(dtype=np.int64)
    # dollars paid, over every episode of the seed (a failed one was paid for too)
    cost = pd.to_numeric(_column(episodes, "cost"), errors="coerce")
    seeds["cost"] = cost.groupby(episodes[unit], sort=False).sum(min_count=1).reindex(order)
    seeds["cost"] = seeds["cost"].to_numpy(dtype=np.float64)
    seeds["kind"] = np.where(
        seeds["episodes"] > 0, SCORED, np.where(seeds["episodes_failed"] > 0, FAILED, UNSCORED)
    )
    return seeds.rename_axis("seed").reset_index()


def _nanmean(values: pd.Series) -> float:
    arr = values.to_numpy(dtype=np.float64)
    finite = arr[np.isfinite(arr)]
    return float(finite.mean()) if finite.size else float("nan")


def run_figures(seeds: pd.DataFrame) -> dict[str, Any]:
    """One run's row from its :func:`per_seed` table (seeds with a score only).

    ``mean`` and ``sd`` (sample SD, NaN for one seed) of the seed scores; ``cost`` the
    dollars of all the run's episodes (failed and unscored seeds included; NaN when no price
    is known); every other figure is the mean over seeds of the seed means (seeds where it
    is undefined skipped).
    """
    ok = seeds[seeds["kind"] == SCORED]
    row: dict[str, Any] = {
        "n": len(ok),
        "failed": int((seeds["kind"] == FAILED).sum()),
        "unscored": int((seeds["kind"] == UNSCORED).sum()),
        "episodes": int(seeds["episodes"].sum()),
        "episodes_failed": int(seeds["episodes_failed"].sum()),
        "episodes_unscored": int(seeds["episodes_unscored"].sum()),
        "episodes_done": int(seeds["episodes_done"].sum()),
        "episodes_truncated": int(seeds["episodes_truncated"].sum()),
    }
    if len(ok):
        row["mean"], row["sd"] = mean_sd(ok["score"].to_numpy(dtype=np.float64))
    else:
        row["mean"] = row["sd"] = float("nan")
    row["success_rate"] = _nanmean(ok["success"])
    cost = seeds["cost"] if "cost" in seeds.columns else pd.Series(dtype=np.float64)
    row["cost"] = float(cost.sum(min_count=1)) if len(cost) else float("nan")
    for name in EPISODE_FIGURES[1:]:
        row[name] = _nanmean(ok[name])
    return row


def seed_scores(seeds: pd.DataFrame) -> pd.Series:
    """The scored seeds' mean scores, indexed by seed (the unit tests pair on)."""
    ok = seeds[seeds["kind"] == SCORED]
    return pd.Series(ok["score"].to_numpy(dtype=np.float64), index=ok["seed"].to_numpy())
