"""Stacks on pegs (Tower of Hanoi): :class:`PegFacts` and its formats.

- ``natural``: 'Peg A has disks 2, 1, and 0 (bottom to top). Pegs B and C are empty.'
- ``tagged-list`` (SmartPlay's default, the env's own text): '- A: |bottom, [2, 1, 0], top|'.
- ``dict-list``: '{"A":[2,1,0], "B":[], "C":[]}'.
- ``matrix``: one row per peg, bottom to top, padded with -1.
"""

from __future__ import annotations

from dataclasses import dataclass

from statelab.facts._formats import dict_list, matrix, natural, tagged_list


@dataclass(frozen=True)
class PegFacts:
    """Stacks on pegs (Tower of Hanoi). Each peg lists its disks bottom to top; 0 is smallest."""

    pegs: tuple[tuple[int, ...], ...]
    names: tuple[str, ...] = ("A", "B", "C")

    @property
    def n_disks(self) -> int:
        return sum(len(p) for p in self.pegs)


def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} and {items[1]}"
    return ", ".join(items[:-1]) + f", and {items[-1]}"


@natural.register
def _(f: PegFacts) -> str:
    """'Peg A has disks 2, 1, and 0 (bottom to top). Pegs B and C are empty.'"""
    parts: list[str] = []
    for name, disks in zip(f.names, f.pegs, strict=False):
        if len(disks) == 1:
            parts.append(f"Peg {name} has disk {disks[0]}.")
        elif disks:
            parts.append(f"Peg {name} has disks {_and([str(d) for d in disks])} (bottom to top).")
    empty = [n for n, d in zip(f.names, f.pegs, strict=False) if not d]
    if len(empty) == 1:
        parts.append(f"Peg {empty[0]} is empty.")
    elif empty:
        parts.append(f"Pegs {_and(empty).replace(', and', ' and')} are empty.")
    return " ".join(parts)


@tagged_list.register
def _(f: PegFacts) -> str:
    """SmartPlay's default: '- A: |bottom, [2, 1, 0], top|', one line per rod."""
    return "\n".join(
        f"- {n}: |bottom, [{', '.join(map(str, d))}], top|"
        for n, d in zip(f.names, f.pegs, strict=False)
    )


@dict_list.register
def _(f: PegFacts) -> str:
    """'{"A":[2,1,0], "B":[], "C":[]}' (bottom to top)."""
    return (
        "{"
        + ", ".join(
            f'"{n}":[{",".join(map(str, d))}]' for n, d in zip(f.names, f.pegs, strict=False)
        )
        + "}"
    )


@matrix.register
def _(f: PegFacts) -> str:
    """One row per peg, bottom to top, padded with -1: '[[2,1,0],\\n[-1,-1,-1],\\n[-1,-1,-1]]'."""
    n = f.n_disks
    rows = ["[" + ",".join(str(x) for x in list(d) + [-1] * (n - len(d))) + "]" for d in f.pegs]
    return "[" + ",\n".join(rows) + "]"
