"""``statelab plan``: how many seeds, episodes, tokens and dollars a comparison needs.

The scatter of a seed's paired difference comes from a pilot store (:func:`read_pilot`: the
per-seed differences of every run the report tests against its baseline, each comparison
centred on its own mean and scaled by ``sqrt(n / (n - 1))``, pooled) or from a stated score
distribution (:func:`stated_scores`). :func:`make_plan` asks
:func:`~statelab.analysis.power.seeds_needed` for each difference to detect under the
report's own test and adjustment (Holm over the report's comparisons), and prices the seeds
with the pilot's stored calls: tokens per episode per run, dollars by LiteLLM's price table
for the run's model where the table prices it (never a guess).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from statelab.analysis._roles import ROLE_COMPARED
from statelab.analysis._seeds import episode_figures, per_seed, seed_scores
from statelab.analysis._summary import summarise
from statelab.analysis.power import REPORT_RESAMPLES, Noise, SeedsNeeded, seeds_needed
from statelab.analysis.stats import MAX_EXACT
from statelab.core import ConfigError
from statelab.run.axes import NAMES
from statelab.run.store import Store

__all__ = [
    "DEFAULT_DELTAS",
    "Pilot",
    "Plan",
    "Price",
    "RunCost",
    "litellm_price",
    "make_plan",
    "read_pilot",
    "stated_scores",
]

#: the differences planned for when none is asked
DEFAULT_DELTAS: tuple[float, ...] = (0.1, 0.2, 0.3)
#: dollars for (LiteLLM model name, input tokens, output tokens) of one call; None: not priced
Price = Callable[[str, int, int], "float | None"]


def litellm_price(model: str, n_in: int, n_out: int) -> float | None:
    """One call's dollars by LiteLLM's price table (``ConfigError`` when LiteLLM is not
    installed; None when the table does not price ``model``)."""
    from statelab.llm import call_cost

    return call_cost(model, n_in, n_out)


@dataclass(frozen=True)
class RunCost:
    """One pilot run's appetite: episodes per seed, tokens per episode (every stored call,
    failed episodes included), dollars per episode (None: not priced; ``why`` says so)."""

    run: str
    model: str | None
    episodes_per_seed: float
    tokens_in: float
    tokens_out: float
    dollars: float | None
    why: str = ""


@dataclass(frozen=True)
class Pilot:
    """What a plan is made from: the scatter of a seed's paired difference (``noise``, said
    in ``source``), the number of comparisons the report adjusts over (``comparisons``), the
    score the compared runs start from when stated (``mean``), and the runs to price."""

    name: str
    noise: Noise
    source: str
    comparisons: int
    seeds: int = 0
    mean: float | None = None
    runs: tuple[RunCost, ...] = ()


def _frame(store: Store) -> tuple[str, dict[str, Any], pd.DataFrame]:
    meta = store.experiment()
    episodes = store.episodes_frame()
    if meta is None or episodes.empty:
        raise ConfigError(f"{store.path} holds no finished episodes yet")
    return meta[0], meta[1], episodes


def _differences(frame: pd.DataFrame, baseline: Any) -> tuple[list[np.ndarray], int]:
    """The report's paired per-seed differences of each compared run, and its number of
    tests (as :func:`summarise` counts them for Holm)."""
    summary = summarise(
        frame.drop(columns=["run"]).rename(columns={"label": "run"}),
        baseline,
        axes=[a for a in NAMES if a in frame.columns],
        n_resamples=200,  # only the roles and the count are read here
    )
    figures = episode_figures(frame.drop(columns=["run"]).rename(columns={"label": "run"}))
    scores = {run: seed_scores(per_seed(g)) for run, g in figures.groupby("run", sort=False)}
    diffs = []
    for row in summary[summary["role"] == ROLE_COMPARED].itertuples():
        x, y = scores[row.run], scores[row.baseline_run]
        shared = x.index.intersection(y.index)
        if len(shared) >= 2:
            diffs.append(x.loc[shared].to_numpy() - y.loc[shared].to_numpy())
    return diffs, int(summary.attrs.get("n_tests", 0))


def _price_run(spec: str | None, calls: pd.DataFrame, price: Price) -> tuple[float | None, str]:
    """Dollars of ``calls`` (one row per call) on the model ``spec``, or None and why not."""
    from statelab.llm import price_name

    if not len(calls) or not (calls["input_tokens"].sum() + calls["output_tokens"].sum()):
        return 0.0, ""
    try:
        name = price_name(spec) if spec else None
    except ConfigError:
        name = None
    if name is None:
        return None, f"{spec or 'its model'}: no price table covers it (local or self-hosted)"
    pairs = calls.groupby(["input_tokens", "output_tokens"]).size()
    total = 0.0
    for (n_in, n_out), count in pairs.items():
        one = price(name, int(n_in), int(n_out))  # ConfigError: LiteLLM not installed
        if one is None:
            return None, f"{spec}: LiteLLM's price table does not price {name}"
        total += one * int(count)
    return total, ""


def _costs(store: Store, episodes: pd.DataFrame, price: Price) -> tuple[RunCost, ...]:
    calls = store.table("calls", columns=["run", "input_tokens", "output_tokens"])
    calls[["input_tokens", "output_tokens"]] = (
        calls[["input_tokens", "output_tokens"]].fillna(0).astype(np.int64)
    )
    unit = "grp" if "grp" in episodes.columns else "seed"
    out = []
    for run, eps in episodes.groupby("run", sort=False):
        mine = calls[calls["run"] == run]
        spec = eps["model"].iloc[0] if "model" in eps.columns else None
        spec = str(spec) if isinstance(spec, str) and spec else None
        try:
            dollars, why = _price_run(spec, mine, price)
        except ConfigError:
            dollars, why = None, "LiteLLM is not installed (pip install 'statelab[litellm]')"
        n = len(eps)
        out.append(
            RunCost(
                run=str(eps["label"].iloc[0]),
                model=spec,
                episodes_per_seed=n / max(1, eps[unit].nunique()),
                tokens_in=float(mine["input_tokens"].sum()) / n,
                tokens_out=float(mine["output_tokens"].sum()) / n,
                dollars=None if dollars is None else dollars / n,
                why=why,
            )
        )
    return tuple(out)


def read_pilot(
    store_path: str | Path, *, noise: str = "bootstrap", price: Price = litellm_price
) -> Pilot:
    """A plan's inputs from a finished experiment's store: its comparisons against the
    baseline (paired by seed, as the report pairs them), their pooled residuals
    (``noise="bootstrap"``, resampled) or their SD (``"normal"``), and each run's tokens
    and dollars per episode. A store without a baseline or without a paired comparison is
    refused (``ConfigError``)."""
    if noise not in ("bootstrap", "normal"):
        raise ConfigError(f"--noise: {noise!r}; allowed: bootstrap, normal")
    store = Store(store_path, readonly=True)
    try:
        name, config, episodes = _frame(store)
        if not config.get("baseline"):
            raise ConfigError(f"{name}: the experiment names no baseline, so nothing is compared")
        diffs, k = _differences(episodes, config["baseline"])
        if not diffs:
            raise ConfigError(
                f"{name}: no run shares two seeds with its baseline, so no paired difference"
                " to learn the scatter from"
            )
        runs = _costs(store, episodes, price)
    finally:
        store.close()
    resid = np.concatenate([(d - d.mean()) * math.sqrt(d.size / (d.size - 1)) for d in diffs])
    pooled = Noise.resample(resid)
    chosen = pooled if noise == "bootstrap" else Noise.normal(pooled.sd)
    sizes = sorted({d.size for d in diffs})
    seeds = "/".join(str(s) for s in sizes)
    how = "resampled (bootstrap)" if noise == "bootstrap" else "as a normal of that SD"
    source = (
        f"the pilot's paired per-seed differences ({len(diffs)} comparison(s) of {seeds}"
        f" seeds, each centred), {how}; SD {pooled.sd:.3f}"
    )
    return Pilot(name, chosen, source, k, max(sizes), runs=runs)


def stated_scores(text: str, comparisons: int = 1) -> Pilot:
    """A plan's inputs from a stated per-seed score distribution of a run: ``mean=M,sd=S``
    (normal) or a per-seed list ``0.2,0.5,0.4`` (resampled). The compared run and its
    baseline draw independently from it (no gain from pairing), so a paired difference
    scatters as the difference of two draws (SD ``S * sqrt(2)``). Scores are normalised to
    [0, 1]: a mean outside it, or an SD no score in [0, 1] with that mean can have, is
    refused."""
    spelled = text.strip()
    if "=" in spelled:
        got: dict[str, float] = {}
        for part in spelled.split(","):
            key, sep, value = (s.strip() for s in part.partition("="))
            if not sep or key not in ("mean", "sd") or key in got:
                raise ConfigError(f"--scores: {part.strip()!r}; spell mean=M,sd=S or a list")
            got[key] = _number(value)
        if "sd" not in got:
            raise ConfigError("--scores: give sd=S (and mean=M), e.g. mean=0.4,sd=0.2")
        mean, sd = got.get("mean"), got["sd"]
        if mean is not None and not 0.0 <= mean <= 1.0:
            raise ConfigError(f"--scores: mean={mean:g} is outside the score's range [0, 1]")
        top = math.sqrt(mean * (1.0 - mean)) if mean is not None else 0.5
        if sd < 0 or sd > top:
            raise ConfigError(f"--scores: sd={sd:g}; a score in [0, 1] has an SD in [0, {top:.3g}]")
        return Pilot(
            "stated",
            Noise.normal(sd * math.sqrt(2.0)),
            f"two independent normal runs of SD {sd:g}: a paired difference's SD"
            f" {sd * math.sqrt(2.0):.3f}",
            comparisons,
            mean=mean,
        )
    values = np.array([_number(v) for v in spelled.split(",")], dtype=np.float64)
    if values.size < 2:
        raise ConfigError("--scores: a per-seed list needs at least two scores")
    if values.min() < 0.0 or values.max() > 1.0:
        raise ConfigError("--scores: a score is outside the range [0, 1]")
    noise = Noise.resample((values[:, None] - values[None, :]).reshape(-1))
    source = (
        f"two independent runs resampled from the {values.size} stated scores: a paired"
        f" difference's SD {noise.sd:.3f}"
    )
    return Pilot("stated", noise, source, comparisons, mean=float(values.mean()))


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"--scores: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"--scores: {text!r} is not a finite number")
    return value


@dataclass(frozen=True)
class PlanRow:
    """One difference's answer, priced: ``episodes``, ``tokens_*`` and ``dollars`` of the
    pilot's whole grid at ``needed.seeds`` (None where unknown or not priced)."""

    needed: SeedsNeeded
    episodes: float | None
    tokens_in: float | None
    tokens_out: float | None
    dollars: float | None


@dataclass(frozen=True)
class Plan:
    """A plan: its inputs, settings and one :class:`PlanRow` per difference."""

    pilot: Pilot
    power: float
    alpha: float
    adjust: str
    comparisons: int
    sims: int
    rows: tuple[PlanRow, ...]


def _priced(pilot: Pilot, seeds: int | None) -> tuple[float | None, ...]:
    if seeds is None:
        return None, None, None, None
    if not pilot.runs:  # stated: a baseline and its compared runs, one episode a seed each
        return float(seeds * (pilot.comparisons + 1)), None, None, None
    eps = [seeds * r.episodes_per_seed for r in pilot.runs]
    t_in = sum(e * r.tokens_in for e, r in zip(eps, pilot.runs, strict=True))
    t_out = sum(e * r.tokens_out for e, r in zip(eps, pilot.runs, strict=True))
    costs = [r.dollars for r in pilot.runs]
    dollars = (
        None
        if any(c is None for c in costs)
        else sum(e * (c or 0.0) for e, c in zip(eps, costs, strict=True))
    )
    return sum(eps), t_in, t_out, dollars


def make_plan(
    pilot: Pilot,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    adjust: str = "holm",
    comparisons: int | None = None,
    sims: int = 2000,
    seed: int = 0,
    max_seeds: int = 500,
) -> Plan:
    """Seeds needed for each difference in ``deltas`` at ``power`` under the report's test:
    adjusted by Holm over ``comparisons`` (default: the pilot's) or not at all
    (``adjust="none"``; Benjamini-Hochberg's threshold depends on the other comparisons' p
    values, so it is refused). Every setting is checked here (``ConfigError``)."""
    if adjust not in ("holm", "none"):
        raise ConfigError(
            f"--adjust: {adjust!r}; plan holm or none (Benjamini-Hochberg's threshold depends"
            " on the other comparisons' p values)"
        )
    k = pilot.comparisons if comparisons is None else comparisons
    if k < 1:
        raise ConfigError(f"--comparisons: at least 1, got {k}")
    if not 0.0 < power < 1.0 or not 0.0 < alpha < 1.0:
        raise ConfigError(f"--power and --alpha are in (0, 1), got {power:g} and {alpha:g}")
    if sims < 100:
        raise ConfigError(f"--sims: at least 100 simulated experiments, got {sims}")
    for d in deltas:
        if not 0.0 < d <= 1.0:
            raise ConfigError(f"--delta: a difference of normalised scores in (0, 1], got {d:g}")
        if pilot.mean is not None and pilot.mean + d > 1.0:
            raise ConfigError(
                f"--delta {d:g}: from the stated mean {pilot.mean:g} a run would score"
                f" {pilot.mean + d:g}, past the score's top (1)"
            )
    holm = k if adjust == "holm" else 1
    rows = []
    for d in deltas:
        needed = seeds_needed(
            pilot.noise, d, power=power, k=holm, alpha=alpha, sims=sims, seed=seed,
            max_seeds=max_seeds, max_exact=MAX_EXACT, n_resamples=REPORT_RESAMPLES,
        )  # fmt: skip
        rows.append(PlanRow(needed, *_priced(pilot, needed.seeds)))
    return Plan(pilot, power, alpha, adjust, k, sims, tuple(rows))
