"""Renderers of the moving-car grid's facts (:class:`TrafficFacts`, seed 001).

- ``symbolic``: the observation window as ASCII, exactly as the env shows it (A agent,
  T target, C car, # outside the grid, . free), then its bounds;
- ``coordinates``: agent, target and visible cars as (row, column) pairs;
- ``natural``: sentences ("You are at (r, c). The target is at ...").
"""

from __future__ import annotations

from statelab.core._facts import TrafficFacts
from statelab.state.formats import coordinates, natural, symbolic


def _bounds(f: TrafficFacts) -> str:
    (r, c), h = f.agent, f.half
    return f"rows {max(r - h, 0)} to {min(r + h, f.size - 1)}, columns {max(c - h, 0)} to " + str(
        min(c + h, f.size - 1)
    )


def _cells(cells: tuple[tuple[int, int], ...]) -> str:
    return ", ".join(f"({r}, {c})" for r, c in cells)


def _full_view(f: TrafficFacts) -> bool:
    return f.half >= f.size - 1


def _offset(f: TrafficFacts) -> str:
    dr, dc = f.target[0] - f.agent[0], f.target[1] - f.agent[1]
    parts = []
    if dr:
        parts.append(f"{abs(dr)} row{'s' * (abs(dr) != 1)} {'down' if dr > 0 else 'up'}")
    if dc:
        parts.append(f"{abs(dc)} column{'s' * (abs(dc) != 1)} {'right' if dc > 0 else 'left'}")
    return " and ".join(parts) if parts else "where you are"


@symbolic.register
def _(f: TrafficFacts) -> str:
    """The ASCII window, then its bounds and the agent's and target's cells (the env's text)."""
    (r, c), h = f.agent, f.half
    return (
        "\n".join(f.window_rows())
        + f"\nWindow: rows {r - h} to {r + h}, columns {c - h} to {c + h}."
        f" You (A) are at {f.agent}; the target (T) is at {f.target}."
    )


@coordinates.register
def _(f: TrafficFacts) -> str:
    """'agent: (r, c)' / 'target: (r, c)' / 'cars: (r, c), ...' / 'window: rows ..'."""
    lines = [
        f"agent: ({f.agent[0]}, {f.agent[1]})",
        f"target: ({f.target[0]}, {f.target[1]})",
        f"cars: {_cells(f.cars) or 'none'}",
    ]
    if not _full_view(f):
        lines.append(f"window: {_bounds(f)}")
    return "\n".join(lines)


@natural.register
def _(f: TrafficFacts) -> str:
    """'You are at (0, 0). The target is at (24, 24), 24 rows down and 24 columns right.
    Visible cars (rows 0 to 10, columns 0 to 10): (3, 4), (7, 1).'"""
    text = (
        f"You are at ({f.agent[0]}, {f.agent[1]}). The target is at "
        f"({f.target[0]}, {f.target[1]}), {_offset(f)}."
    )
    if _full_view(f):
        cars = f"Cars: {_cells(f.cars)}." if f.cars else "There are no cars."
    elif f.cars:
        cars = f"Visible cars ({_bounds(f)}): {_cells(f.cars)}."
    else:
        cars = f"No cars are visible ({_bounds(f)})."
    return f"{text} {cars}"
