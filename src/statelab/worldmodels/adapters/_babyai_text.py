"""The words of the BabyAI adapter (seed 004, Appendix C.4, in its authors' wording):
egocentric offsets, directions, wall rays of the view, object names and places."""

from __future__ import annotations

import re

from statelab.facts.egoview import EMPTY, UNSEEN, WALL, EgoViewFacts, steps

_PLACE = re.compile(r"(\d+)\s+steps?\s+(forward|ahead|back|backward|behind|left|right)")


def relative(ahead: int, right: int) -> str:
    """An egocentric offset in the seed's words, the forward part first: '2 steps forward and
    1 step left', '1 step back', 'your current cell'."""
    front = f"{steps(abs(ahead))} {'forward' if ahead > 0 else 'back'}" if ahead else ""
    side = f"{steps(abs(right))} {'right' if right > 0 else 'left'}" if right else ""
    return " and ".join(x for x in (front, side) if x) or "your current cell"


def direction(ahead: int, right: int) -> str:
    """The one direction an offset lies most along (ties go to front or back)."""
    if ahead == right == 0:
        return "under you"
    if abs(ahead) >= abs(right):
        return "in front of you" if ahead > 0 else "behind you"
    return "to your right" if right > 0 else "to your left"


def wall_ray(f: EgoViewFacts, dr: int, dc: int) -> int:
    """Steps to a wall along (dr, dc) from the agent when it is the first thing on that line
    (what the text's "a wall N steps ..." says), else 0."""
    row, col = f.agent
    n = 0
    while True:
        row, col, n = row + dr, col + dc, n + 1
        if not (0 <= row < len(f.cells) and 0 <= col < len(f.cells[0])):
            return 0
        kind = f.cells[row][col][0]
        if kind not in (EMPTY, UNSEEN):
            return n if kind == WALL else 0


def bare(arg: str) -> str:
    text = re.sub(r"^(a |an |the |some )", "", arg.strip().strip("?.!,").lower())
    return " ".join(text.split()).replace("gray", "grey")


def holds(carried: str, name: str) -> bool:
    """Whether carrying ``carried`` ("red ball") answers a question about ``name`` ("ball")."""
    return carried == name or carried.split()[-1] == name or name in carried


def parse_place(text: str) -> tuple[int, int] | None:
    """An egocentric place as (ahead, right): 'front', 'here', '2 steps forward and 1 step
    left'."""
    t = text.strip().lower()
    if t in ("front", "in front", "in front of me", "ahead"):
        return 1, 0
    if t in ("here", "my cell"):
        return 0, 0
    parts = _PLACE.findall(t)
    if not parts:
        return None
    ahead = right = 0
    for n, d in parts:
        k = int(n)
        if d in ("forward", "ahead"):
            ahead += k
        elif d in ("back", "backward", "behind"):
            ahead -= k
        elif d == "left":
            right -= k
        else:
            right += k
    return ahead, right


__all__ = ["bare", "direction", "holds", "parse_place", "relative", "wall_ray"]
