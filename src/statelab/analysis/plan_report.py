"""A :class:`~statelab.analysis.planning.Plan` as Markdown, as JSON data, and as
``plan.png`` (power against seeds for each difference, in the report plots' style)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from statelab.analysis._md import md_text
from statelab.analysis._plots import PALETTE
from statelab.analysis.planning import Plan, PlanRow
from statelab.analysis.power import REPORT_RESAMPLES, analytic_power
from statelab.analysis.stats import MAX_EXACT

__all__ = ["plan_data", "plan_markdown", "plot_power", "write_plan"]

_EXACT_PAIRS = MAX_EXACT.bit_length() - 1


def _test_sentence(plan: Plan) -> str:
    k = plan.comparisons
    if plan.adjust == "holm" and k > 1:
        adj = (
            f"Holm over {k} comparisons, p_adj < {plan.alpha:g} (p_adj is at most {k}·p, so"
            f" p < {plan.alpha / k:.3g} counts whatever the others show)"
        )
    else:
        adj = f"p < {plan.alpha:g}" + (" (no adjustment)" if plan.adjust == "none" else "")
    floor = plan.rows[0].needed.floor if plan.rows else 0
    return (
        f"Seeds a comparison needs for {plan.power:.0%} power under the report's test: the"
        f" exact paired sign-flip test (every sign pattern up to {_EXACT_PAIRS} seeds,"
        f" {REPORT_RESAMPLES:,} Monte Carlo patterns beyond), {adj}; no difference can count"
        f" below {floor} seeds. Power by {plan.sims:,} simulated experiments of the test"
        " itself; the analytic column is the paired t test at the sign-flip test's attainable"
        " level."
    )


def _int(x: float | None) -> str:
    return "–" if x is None else f"{x:,.0f}"


def _cost_sentence(plan: Plan) -> str:
    runs = plan.pilot.runs
    if not runs:
        return (
            "Episodes: a baseline and its compared run(s), one episode a seed each; no pilot,"
            " so no tokens or dollars."
        )
    why = sorted({r.why for r in runs if r.why})
    dollars = "every call priced by LiteLLM's price table" if not why else "; ".join(why)
    return (
        f"Episodes, tokens and dollars: the pilot's grid of {len(runs)} runs at that many seeds"
        f" (its rollouts and failed episodes included), tokens per episode from its stored"
        f" calls; dollars: {dollars}."
    )


def plan_markdown(plan: Plan, files: dict[str, Path] | None = None) -> str:
    """The plan as Markdown: what was assumed, the table (Δ, seeds needed, the analytic
    approximation's, the simulated power there, episodes, tokens, dollars) and notes."""
    lines = [
        f"# Plan: {md_text(plan.pilot.name)}",
        "",
        _test_sentence(plan),
        "",
        f"Scatter of a seed's paired difference: {md_text(plan.pilot.source)}.",
        "",
        "| Δ | Seeds needed | Analytic | Power there | Episodes | Tokens in | Tokens out"
        " | Dollars |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in plan.rows:
        n = row.needed
        seeds = str(n.seeds) if n.seeds is not None else f"> {max(n.simulated, default=0)}"
        lines.append(
            f"| {n.delta:g} | {seeds} | {_int(n.analytic)} | {n.power:.2f} |"
            f" {_int(row.episodes)} | {_int(row.tokens_in)} | {_int(row.tokens_out)} |"
            f" {'–' if row.dollars is None else f'{row.dollars:,.2f}'} |"
        )
    lines += ["", md_text(_cost_sentence(plan))]
    if plan.pilot.seeds:
        lines.append(f"The pilot has {plan.pilot.seeds} seeds; a plan's seeds include them.")
    if files:
        lines += ["", f"![power against seeds]({files['plot'].name})"]
    return "\n".join(lines) + "\n"


def _row_data(row: PlanRow) -> dict[str, Any]:
    n = row.needed
    return {
        "delta": n.delta,
        "seeds": n.seeds,
        "analytic": n.analytic,
        "power": n.power,
        "floor": n.floor,
        "simulated": {str(k): v for k, v in n.simulated.items()},
        "episodes": row.episodes,
        "tokens_in": row.tokens_in,
        "tokens_out": row.tokens_out,
        "dollars": row.dollars,
    }


def plan_data(plan: Plan) -> dict[str, Any]:
    """The plan as JSON-ready data (settings, the scatter, the runs priced, one row per Δ)."""
    p = plan.pilot
    return {
        "name": p.name,
        "power": plan.power,
        "alpha": plan.alpha,
        "adjust": plan.adjust,
        "comparisons": plan.comparisons,
        "sims": plan.sims,
        "noise": {"kind": p.noise.kind, "sd": p.noise.sd, "source": p.source},
        "pilot_seeds": p.seeds,
        "runs": [
            {
                "run": r.run,
                "model": r.model,
                "episodes_per_seed": r.episodes_per_seed,
                "tokens_in": r.tokens_in,
                "tokens_out": r.tokens_out,
                "dollars": r.dollars,
                "unpriced": r.why or None,
            }
            for r in p.runs
        ],
        "rows": [_row_data(r) for r in plan.rows],
    }


def plot_power(plan: Plan, path: str | Path) -> Path:
    """``plan.png``: for each Δ, the analytic power against seeds (line), the simulated power
    where it was computed (markers), the target (dashed) and the seeds needed (dotted)."""
    path = Path(path)
    found = [r.needed.seeds or max(r.needed.simulated, default=2) for r in plan.rows]
    top = max([10, *(int(1.3 * f) + 2 for f in found)])
    ns = list(range(2, top + 1))
    k = plan.comparisons if plan.adjust == "holm" else 1
    fig = Figure(figsize=(7.0, 4.6), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for i, row in enumerate(plan.rows):
        colour = PALETTE[i % len(PALETTE)]
        n = row.needed
        curve = [analytic_power(plan.pilot.noise.sd, n.delta, m, k=k, alpha=plan.alpha) for m in ns]
        ax.plot(ns, curve, color=colour, linewidth=1.2, label=f"Δ = {n.delta:g}")
        if n.simulated:
            ax.plot(list(n.simulated), list(n.simulated.values()), "o", color=colour,
                    markersize=4, markeredgecolor="black", markeredgewidth=0.5)  # fmt: skip
        if n.seeds is not None:
            ax.axvline(n.seeds, color=colour, linestyle=":", linewidth=0.9)
    ax.axhline(plan.power, color="dimgray", linestyle="--", linewidth=0.8)
    ax.set_xlim(2, top)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("seeds (paired, per run)")
    ax.set_ylabel("power")
    ax.grid(linewidth=0.4, alpha=0.6)
    ax.set_axisbelow(True)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    adj = f"Holm over {plan.comparisons}" if k > 1 else "one test, no adjustment"
    fig.suptitle(
        f"Power of the sign-flip test ({adj}, α {plan.alpha:g}): line analytic, dots simulated",
        fontsize=11,
    )
    fig.savefig(path, dpi=150)
    return path


def write_plan(plan: Plan, out_dir: str | Path) -> dict[str, Path]:
    """Write ``plan.md``, ``plan.json`` and ``plan.png`` into ``out_dir``; their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"plot": out / "plan.png", "markdown": out / "plan.md", "json": out / "plan.json"}
    plot_power(plan, files["plot"])
    files["markdown"].write_text(plan_markdown(plan, files))
    files["json"].write_text(json.dumps(plan_data(plan), indent=2))
    return files
