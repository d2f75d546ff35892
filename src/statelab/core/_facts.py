"""Structured state kinds that environments emit and formats render.

Envs and formats meet here and nowhere else: an env says what kind of facts it has, a
format says which kinds it can render. Neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PegFacts:
    """Stacks on pegs (Tower of Hanoi). Each peg lists its disks bottom to top; 0 is smallest."""

    pegs: tuple[tuple[int, ...], ...]
    names: tuple[str, ...] = ("A", "B", "C")

    @property
    def n_disks(self) -> int:
        return sum(len(p) for p in self.pegs)
