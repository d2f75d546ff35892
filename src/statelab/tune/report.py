"""What a tune writes: ``tune.md`` (candidates x rounds with CIs, the episodes spent against
the full grid's, the winner and the finalists the paired test cannot tell apart from it),
``halving.png`` (each candidate's mean by round, its line ending where it was cut) and
``winner.yaml`` (the winner as an experiment file ``statelab run`` takes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from statelab.analysis.stats import bootstrap_mean_diff, permutation_mean_diff
from statelab.tune.schedule import rank
from statelab.tune.search import Candidate, label
from statelab.tune.tuner import Tune


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def ci(values: np.ndarray) -> tuple[float, float] | None:
    """95% percentile-bootstrap interval of the mean (None under two values)."""
    if values.size < 2:
        return None
    r = bootstrap_mean_diff(values, np.zeros_like(values), paired=True, n_resamples=2000)
    return r.ci_low, r.ci_high


def markdown(t: Tune) -> str:
    s, h = t.search, t.halving
    cands = s.candidates()
    last = {c: h.cut_after(c) for c in cands}
    order = sorted(
        cands,
        key=lambda c: (-last[c], -float(np.mean(h.values[last[c]][c])), cands.index(c)),
    )
    obj = "mean normalised score" if s.objective == "score" else "score per 1,000 tokens"
    lines = [
        f"# Tune {s.name}",
        "",
        f"Model {s.model}; envs {', '.join(s.envs)}; objective: {obj} per seed (mean over envs).",
        f"{len(cands)} candidates, η = {s.eta}, budget {s.budget} episodes.",
        "",
        "## Episodes",
        "",
        f"- the plan uses {t.planned} episodes; the full grid is {t.full_grid}"
        f" ({t.planned / t.full_grid:.0%} of it)",
        f"- {t.spending}",
        f"- this call played {t.played} and reused {t.reused} already in the store"
        f" ({t.failed} failed, scored 0); model calls {t.model_calls}, tokens {t.tokens:,},"
        f" {t.seconds:.1f} s",
        "",
        "| round | candidates | seeds (cumulative) | new episodes | kept |",
        "|---|---|---|---|---|",
    ]
    for r in t.rounds:
        lines.append(
            f"| {r.index + 1} | {r.candidates} | {r.seeds} |"
            f" {r.new_episodes * len(s.envs)} | {r.keep} |"
        )
    lines += [
        "",
        "## Candidates by round",
        "",
        f"Per candidate: {obj} [95% bootstrap CI] over the round's seeds; – : cut before.",
        "",
        "| candidate | " + " | ".join(f"round {r.index + 1}" for r in t.rounds) + " |",
        "|---|" + "---|" * len(t.rounds),
    ]
    for c in order:
        cells = []
        for i in range(len(t.rounds)):
            v = h.values[i].get(c)
            if v is None:
                cells.append("–")
                continue
            iv = ci(v)
            cells.append(f"{v.mean():.3f}" + (f" [{iv[0]:.3f}, {iv[1]:.3f}]" if iv else ""))
        lines.append(f"| {_cell(label(c))} | " + " | ".join(cells) + " |")
    for r in t.rounds[:-1]:
        vals = h.values[r.index]
        ranked = rank(vals, cands)
        edge = float(np.mean(vals[ranked[r.keep - 1]]))
        tied = [c for c in ranked if float(np.mean(vals[c])) == edge]
        if any(c not in ranked[: r.keep] for c in tied):
            lines += [
                "",
                f"Round {r.index + 1}'s cut went through a tie: {len(tied)} candidates at"
                f" {edge:.3f}, broken by their order in the search space (more seeds in that"
                " round would tell them apart).",
            ]
    lines += ["", "## Winner", "", f"**{_cell(label(h.winner))}**", ""]
    lines.append(
        f"Finalists against it (exact paired sign-flip test on the last round's"
        f" {t.rounds[-1].seeds} seeds, α = {h.alpha}):"
    )
    lines.append("")
    for f in h.finalists[1:]:
        verdict = "cannot be told apart" if f.indistinguishable else "worse"
        floor = (
            f"; smallest attainable p {f.min_p:.3g}"
            if f.min_p is not None and f.min_p >= h.alpha
            else ""
        )
        lines.append(
            f"- {_cell(label(f.candidate))}: mean {f.mean:.3f}, p = {f.p_value:.3g}"
            f" ({verdict}{floor})"
        )
    same = ", ".join(_cell(label(c)) for c in h.indistinguishable)
    lines += ["", f"Indistinguishable from the best: {same}."]
    if s.baseline is not None:
        lines += ["", *_baseline(t)]
    lines += ["", "The winner as an experiment: `statelab run winner.yaml`."]
    return "\n".join(lines) + "\n"


def _baseline(t: Tune) -> list[str]:
    s, h = t.search, t.halving
    base: Candidate = next(c for c in s.candidates() if dict(c) == s.baseline)
    if base == h.winner:
        return ["The baseline is the winner."]
    i = h.cut_after(base)
    b, w = h.values[i][base], h.values[i][h.winner]
    r = permutation_mean_diff(w, b, paired=True)
    return [
        f"Against the baseline {_cell(label(base))} (round {i + 1}, {b.size} paired seeds):"
        f" winner - baseline = {r.diff:+.3f}, p = {r.p_value:.3g}."
    ]


def plot(t: Tune, path: Path) -> None:
    h = t.halving
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xs = [r.seeds for r in t.rounds]
    for c in t.search.candidates():
        upto = h.cut_after(c)
        ys = [float(np.mean(h.values[i][c])) for i in range(upto + 1)]
        win = c == h.winner
        ax.plot(
            xs[: upto + 1],
            ys,
            marker="o",
            lw=2.5 if win else 1,
            color="#C44E52" if win else "#4C72B0",
            alpha=1.0 if win or upto == len(xs) - 1 else 0.45,
            label=label(c) if win else None,
            zorder=3 if win else 2,
        )
    ax.set_xlabel("seeds played (cumulative; one round per point)")
    ax.set_ylabel("mean " + t.search.objective.replace("_", " "))
    ax.set_title(f"Successive halving: {t.search.name} ({len(t.search.candidates())} candidates)")
    ax.set_xticks(xs)
    ax.legend(loc="best", fontsize=8, title="winner")
    fig.savefig(path, dpi=110)


def write(t: Tune, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {"report": out / "tune.md", "plot": out / "halving.png", "winner": out / "winner.yaml"}
    paths["report"].write_text(markdown(t), encoding="utf-8")
    plot(t, paths["plot"])
    paths["winner"].write_text(
        yaml.safe_dump(t.search.winner_experiment(t.halving.winner), sort_keys=False),
        encoding="utf-8",
    )
    return paths
