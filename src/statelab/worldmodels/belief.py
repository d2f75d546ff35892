"""A categorical belief over the location of one task-relevant object (seed 004, A.4.2).

A :class:`Belief` is an immutable value: a distribution over *atoms* (receptacle names, rooms,
grid cells, ``"inventory"``, or the single ``UNSEEN`` atom before a BabyAI room is pinned)
and the atom where the object was last located, if any. Updates are presence/absence
renormalisation, which is exact Bayesian conditioning for these observations:

- :meth:`Belief.absent` ("not found in these atoms"): the likelihood is 0 on them and 1
  elsewhere, so the posterior zeroes them and renormalises the rest;
- :meth:`Belief.seen` ("found at this atom"): the posterior is a point mass there.

Priors: :func:`uniform` over the placements the env's generator allows (the seed's default),
or :func:`zipf` with exponent ``alpha`` (1.25 in section 5.3) over a ranked list of them.
The support is kept in a canonical order (the prior's), so equal beliefs compare equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

UNSEEN = "UNSEEN"
INVENTORY = "inventory"
ZIPF_ALPHA = 1.25


@dataclass(frozen=True)
class Belief:
    """``dist``: (atom, probability) pairs with positive probability, summing to 1 (empty when
    every candidate was ruled out); ``located_at``: where the object was seen, if it was."""

    dist: tuple[tuple[str, float], ...]
    located_at: str | None = None

    @classmethod
    def from_weights(cls, weights: Mapping[str, float] | Iterable[tuple[str, float]]) -> Belief:
        """Normalised positive weights (non-positive ones are dropped)."""
        items = list(weights.items() if isinstance(weights, Mapping) else weights)
        kept = [(a, float(w)) for a, w in items if w > 0]
        total = sum(w for _, w in kept)
        return cls(tuple((a, w / total) for a, w in kept)) if total > 0 else cls(())

    # -- reading ------------------------------------------------------------------------
    @property
    def support(self) -> frozenset[str]:
        return frozenset(a for a, _ in self.dist)

    @property
    def empty(self) -> bool:
        """Every candidate was ruled out."""
        return not self.dist

    def prob(self, atom: str) -> float:
        return dict(self.dist).get(atom, 0.0)

    def ranked(self) -> list[tuple[str, float]]:
        """Atoms by decreasing probability (ties in the prior's order)."""
        order = {a: i for i, (a, _) in enumerate(self.dist)}
        return sorted(self.dist, key=lambda ap: (-ap[1], order[ap[0]]))

    # -- updates (each returns a new belief) ----------------------------------------------
    def absent(self, atoms: Iterable[str]) -> Belief:
        """The object is not at any of ``atoms``: zero them and renormalise."""
        gone = set(atoms)
        if not gone & self.support:
            return self
        located = None if self.located_at in gone else self.located_at
        kept = Belief.from_weights([(a, p) for a, p in self.dist if a not in gone])
        return Belief(kept.dist, located)

    def seen(self, atom: str) -> Belief:
        """The object was found at ``atom``: a point mass there."""
        return Belief(((atom, 1.0),), atom)


def uniform(atoms: Sequence[str]) -> Belief:
    """The uniform prior over ``atoms`` (duplicates count once)."""
    unique = list(dict.fromkeys(atoms))
    return Belief.from_weights([(a, 1.0) for a in unique])


def zipf_weights(n: int, alpha: float = ZIPF_ALPHA) -> list[float]:
    """Unnormalised Zipf weights ``1 / k**alpha`` of ranks 1..n."""
    return [1.0 / (k**alpha) for k in range(1, n + 1)]


def zipf(ranked_atoms: Sequence[str], alpha: float = ZIPF_ALPHA) -> Belief:
    """The Zipf prior: the k-th atom of ``ranked_atoms`` (most likely first) has weight
    ``1 / k**alpha``."""
    unique = list(dict.fromkeys(ranked_atoms))
    return Belief.from_weights(list(zip(unique, zipf_weights(len(unique), alpha), strict=True)))


def mixture(beliefs: Sequence[Belief]) -> Belief:
    """The equal-weight mixture of several beliefs (the type-level view of a task that needs
    several instances of one type: where a random one of them is)."""
    weights: dict[str, float] = {}
    live = [b for b in beliefs if not b.empty]
    for b in live:
        for a, p in b.dist:
            weights[a] = weights.get(a, 0.0) + p / len(live)
    return Belief.from_weights(weights)


__all__ = ["INVENTORY", "UNSEEN", "ZIPF_ALPHA", "Belief", "mixture", "uniform", "zipf"]
