"""Successive halving with paired seeds: the schedule, free of models and stores.

Every candidate in a round plays the same seeds (seed indices ``0 .. seeds-1``, cumulative:
a candidate promoted to round k+1 keeps the seeds it played and adds more), so candidates are
compared on identical instances. After each round but the last, the best ``ceil(n / eta)``
by mean go on; the last round's candidates (the finalists) are compared with the calibrated
paired test (:func:`statelab.analysis.stats.permutation_mean_diff`, exact sign-flip) and the
ones it cannot tell apart from the best form the indistinguishable set.

The budget is split evenly over the rounds (Karnin et al.'s successive halving); what the
rounding leaves goes to the last round. The plan never spends more than the budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from statelab.analysis.stats import permutation_mean_diff
from statelab.core import ConfigError

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Round:
    """Round ``index`` (from 0): ``candidates`` play seed indices ``0 .. seeds-1`` (those of
    ``0 .. prev_seeds-1`` were played in earlier rounds); ``keep`` go on (the last round
    keeps its finalists: nothing is cut)."""

    index: int
    candidates: int
    seeds: int
    prev_seeds: int
    keep: int

    @property
    def new_episodes(self) -> int:
        """Seeds this round adds per candidate times candidates (times envs: see ``cost``)."""
        return self.candidates * (self.seeds - self.prev_seeds)


def survivors(n: int, eta: int) -> list[int]:
    """How many candidates play each round: n, ceil(n/eta), ... while more than one would
    stay (the last entry is the finalists)."""
    out = [n]
    while out[-1] > eta:
        out.append(math.ceil(out[-1] / eta))
    return out


def plan(n: int, budget: int, *, eta: int = 3, max_seeds: int, per_seed: int = 1) -> list[Round]:
    """The rounds of a successive-halving tune of ``n`` candidates within ``budget`` episodes,
    where one seed of one candidate costs ``per_seed`` episodes (one per env) and no candidate
    plays more than ``max_seeds`` seeds. Refuses (one line) a budget too small to give every
    candidate one seed."""
    if n < 1:
        raise ConfigError("space: no candidates")
    if eta < 2:
        raise ConfigError(f"eta: at least 2, got {eta}")
    if max_seeds < 1:
        raise ConfigError("seeds: at least one seed")
    sizes = survivors(n, eta)
    share = budget // len(sizes)
    seeds: list[int] = []
    prev = 0
    for size in sizes:
        s = min(max_seeds, prev + share // (size * per_seed))
        seeds.append(s)
        prev = s
    if seeds[0] < 1:
        raise ConfigError(
            f"budget: {budget} episodes cannot give each of the {n} candidates one seed in the"
            f" first of {len(sizes)} rounds (needs at least {n * per_seed * len(sizes)})"
        )
    spent = sum(
        size * (s - p) * per_seed for size, s, p in zip(sizes, seeds, [0, *seeds[:-1]], strict=True)
    )
    left = budget - spent
    seeds[-1] = min(max_seeds, seeds[-1] + left // (sizes[-1] * per_seed))
    rounds = []
    prev = 0
    for i, (size, s) in enumerate(zip(sizes, seeds, strict=True)):
        keep = sizes[i + 1] if i + 1 < len(sizes) else size
        rounds.append(Round(i, size, s, prev, keep))
        prev = s
    return rounds


def cost(rounds: Sequence[Round], per_seed: int = 1) -> int:
    """Episodes a plan plays (each once: earlier rounds' seeds are reused)."""
    return sum(r.new_episodes for r in rounds) * per_seed


def spending(rounds: Sequence[Round], budget: int, *, max_seeds: int, per_seed: int = 1) -> str:
    """One line: what the plan spends of ``budget`` and why it leaves the rest, e.g. "plan:
    4 rounds, 60 -> 20 -> 7 -> 3 candidates on 1, 6, 22, 30 seeds: 296 of the 450-episode
    budget; 154 unspent: round 4 plays all 30 seeds of the pool"."""
    spent = cost(rounds, per_seed)
    sizes = " -> ".join(str(r.candidates) for r in rounds)
    seeds = ", ".join(str(r.seeds) for r in rounds)
    envs = f" x {per_seed} envs" if per_seed > 1 else ""
    head = (
        f"plan: {len(rounds)} round{'s' if len(rounds) != 1 else ''}, {sizes} candidates on"
        f" {seeds} seeds{envs}: {spent} of the {budget}-episode budget"
    )
    left = budget - spent
    if left <= 0:
        return head
    capped = [r.index + 1 for r in rounds if r.seeds >= max_seeds]
    if capped:
        where = ", ".join(map(str, capped))
        why = (
            f"round{'s' if len(capped) > 1 else ''} {where} play{'' if len(capped) > 1 else 's'}"
            f" all {max_seeds} seeds of the pool (more seeds would let it spend more)"
        )
    else:
        why = (
            "each round gets an equal share of the budget in whole seeds per candidate; what"
            f" is left ({left}) buys no further seed for all {rounds[-1].candidates} finalists"
        )
    return f"{head}; {left} unspent: {why}"


@dataclass
class Finalist(Generic[K]):
    candidate: K
    mean: float
    #: the paired test against the best (None for the best itself)
    p_value: float | None
    min_p: float | None
    indistinguishable: bool


@dataclass
class Halving(Generic[K]):
    """What a tune saw: per round, each playing candidate's per-seed values."""

    rounds: list[Round]
    #: per round: candidate -> per-seed values on seed indices 0 .. round.seeds-1
    values: list[dict[K, np.ndarray]] = field(default_factory=list)
    finalists: list[Finalist[K]] = field(default_factory=list)
    alpha: float = 0.05

    @property
    def winner(self) -> K:
        return self.finalists[0].candidate

    @property
    def indistinguishable(self) -> list[K]:
        """The finalists the paired test cannot tell apart from the winner (winner first)."""
        return [f.candidate for f in self.finalists if f.indistinguishable]

    def cut_after(self, candidate: K) -> int:
        """The last round ``candidate`` played."""
        return max(i for i, v in enumerate(self.values) if candidate in v)


def rank(values: Mapping[K, np.ndarray], order: Sequence[K]) -> list[K]:
    """Candidates best first: by mean, ties broken by their place in ``order``; a candidate
    whose mean is not a number (NaN) ranks after every other, never among them."""
    place = {c: i for i, c in enumerate(order)}

    def key(c: K) -> tuple[bool, float, int]:
        mean = float(np.mean(values[c]))
        return (not math.isfinite(mean), -mean if math.isfinite(mean) else 0.0, place[c])

    return sorted(values, key=key)


def halve(
    candidates: Sequence[K],
    rounds: Sequence[Round],
    evaluate: Callable[[list[K], int], Mapping[K, Sequence[float] | np.ndarray]],
    *,
    alpha: float = 0.05,
    test: bool = True,
) -> Halving[K]:
    """Run ``rounds`` over ``candidates``: ``evaluate(playing, seeds)`` returns each playing
    candidate's per-seed values on seed indices ``0 .. seeds-1`` (paired across candidates).
    ``test`` False skips the final paired tests (the winner is the best mean)."""
    if len(candidates) != rounds[0].candidates:
        raise ValueError(f"{len(candidates)} candidates, the plan has {rounds[0].candidates}")
    out: Halving[K] = Halving(list(rounds), alpha=alpha)
    playing = list(candidates)
    for r in rounds:
        got = evaluate(list(playing), r.seeds)
        vals = {c: np.asarray(got[c], dtype=np.float64) for c in playing}
        for c, v in vals.items():
            if v.shape != (r.seeds,):
                raise ValueError(f"{c!r}: {v.shape[0]} values, round {r.index} plays {r.seeds}")
        out.values.append(vals)
        playing = rank(vals, candidates)[: r.keep]
    last = out.values[-1]
    best, *rest = playing
    out.finalists.append(Finalist(best, float(np.mean(last[best])), None, None, True))
    for c in rest:
        p = min_p = None
        same = True
        if test:
            res = permutation_mean_diff(last[best], last[c], paired=True)
            p, min_p = res.p_value, res.min_p
            same = res.p_value >= alpha
        out.finalists.append(Finalist(c, float(np.mean(last[c])), p, min_p, same))
    return out
