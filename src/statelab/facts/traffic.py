"""The moving-car grid's facts (:class:`TrafficFacts`, seed 001) and their renderers.

- ``symbolic``: the observation window as ASCII, exactly as the env shows it (A agent,
  T target, C car, # outside the grid, . free), then its bounds;
- ``coordinates``: agent, target and visible cars as (row, column) pairs;
- ``natural``: sentences ("You are at (r, c). The target is at ...");
- :func:`raster`: the grid as an RGB image, and the ``zoom`` close-up (text and image).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from statelab.facts._closeup import close_up, tick_labels
from statelab.facts._formats import coordinates, natural, symbolic

Cell = tuple[int, int]


@dataclass(frozen=True)
class TrafficFacts:
    """The moving-car grid (seed 001) as the agent sees it at a decision point.

    Cells are ``(row, column)``, 0-based: ``(0, 0)`` is the top-left cell and rows grow
    downward. ``cars`` lists the distinct car cells inside the square window of half-size
    ``half`` centred on ``agent``; cells outside it are unknown, not empty (a ``half`` of at
    least ``size - 1`` shows every car). ``decision`` counts the decisions already taken.
    """

    size: int
    agent: tuple[int, int]
    target: tuple[int, int]
    cars: tuple[tuple[int, int], ...]
    half: int
    decision: int = 0

    def window_rows(self) -> tuple[str, ...]:
        """The window as text: A agent (X if hit), T target, C car, # wall/outside, . free."""
        (ar, ac), h, cars = self.agent, self.half, set(self.cars)
        rows = []
        for r in range(ar - h, ar + h + 1):
            line = ""
            for c in range(ac - h, ac + h + 1):
                if not (0 <= r < self.size and 0 <= c < self.size):
                    line += "#"
                elif (r, c) == self.agent:
                    line += "X" if (r, c) in cars else "A"
                else:
                    line += "C" if (r, c) in cars else "T" if (r, c) == self.target else "."
            rows.append(line)
        return tuple(rows)


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


# -- pictures and the close-up (seed 001, figure 1 and appendix A.2) -------------------------
COLOURS: dict[str, tuple[int, int, int]] = {
    "free": (255, 255, 255),
    "unseen": (175, 175, 175),
    "wall": (60, 60, 60),
    "car": (220, 40, 40),
    "target": (40, 170, 70),
    "agent": (40, 90, 220),
    "line": (210, 210, 210),
}


def raster(
    size: int,
    agent: Cell,
    target: Cell,
    cars: Iterable[Cell],
    *,
    half: int | None = None,
    crop: int | None = None,
    scale: int = 12,
    show_target: bool = False,
) -> np.ndarray:
    """The grid as an RGB image, ``scale`` pixels per cell with thin cell borders.

    ``half``: cells farther than ``half`` from the agent (Chebyshev) are drawn unseen and their
    cars hidden (the observation view). ``crop``: only the ``(2*crop+1)``-square around the
    agent is drawn, off-grid cells as wall (the close-up). ``show_target``: the target is
    drawn even where unseen (seed 001's code always draws it).
    """
    ar, ac = agent
    if crop is None:
        r0, c0, h, w = 0, 0, size, size
    else:
        r0, c0, h, w = ar - crop, ac - crop, 2 * crop + 1, 2 * crop + 1
    rows = np.arange(r0, r0 + h)[:, None]
    cols = np.arange(c0, c0 + w)[None, :]
    img = np.empty((h, w, 3), dtype=np.uint8)
    img[:] = COLOURS["free"]
    seen = np.ones((h, w), dtype=bool)
    if half is not None:
        seen = (np.abs(rows - ar) <= half) & (np.abs(cols - ac) <= half)
        img[~seen] = COLOURS["unseen"]

    def paint(cell: Cell, colour: str) -> None:
        r, c = cell[0] - r0, cell[1] - c0
        if 0 <= r < h and 0 <= c < w and seen[r, c]:
            img[r, c] = COLOURS[colour]

    paint(target, "target")
    if show_target:
        tr, tc = target[0] - r0, target[1] - c0
        if 0 <= tr < h and 0 <= tc < w:
            img[tr, tc] = COLOURS["target"]
    for car in cars:
        paint(car, "car")
    paint(agent, "agent")
    img[~((rows >= 0) & (rows < size) & (cols >= 0) & (cols < size))] = COLOURS["wall"]
    big = np.repeat(np.repeat(img, scale, axis=0), scale, axis=1)
    if scale >= 4:
        big[::scale, :] = COLOURS["line"]
        big[:, ::scale] = COLOURS["line"]
    return big


@close_up.register
def _(facts: TrafficFacts, half: int) -> tuple[str, np.ndarray]:
    """The window cropped to ``half`` around the agent, as text and as a 32-pixel raster."""
    crop = min(half, facts.half)
    (r, c) = facts.agent
    rows = replace(facts, half=crop).window_rows()
    text = (
        "\n".join(rows) + f"\nClose-up: rows {r - crop} to {r + crop}, columns {c - crop} to "
        f"{c + crop}; you (A) are at the centre, {crop} cells from each side."
    )
    image = raster(
        facts.size, facts.agent, facts.target, facts.cars, half=facts.half, crop=crop, scale=32
    )
    return text, image


#: seed 001's close-up: rows r-1 ... r+10 (within the window), columns c-5 ... c+5
ANCHOR_ROWS = (-1, 10)
ANCHOR_COLS = 5


def anchor_views(facts: TrafficFacts, scale: int = 32) -> tuple[str, np.ndarray, np.ndarray]:
    """Seed 001's observation: the close-up as text with relative tick labels, the wide view
    (the whole grid, unseen cells grey, the target always drawn) and the close-up image
    (rows r-1 ... r+10 clipped to the window and grid, columns c-5 ... c+5 clipped to the
    grid), with each row and column labelled with its offset from the agent in a margin above
    and to the left (as the anchor's close-up has tick labels). No absolute coordinates
    anywhere."""
    r, c = facts.agent
    size, half = facts.size, facts.half
    r0, r1 = max(0, r + ANCHOR_ROWS[0]), min(size - 1, r + min(ANCHOR_ROWS[1], half))
    c0, c1 = max(0, c - ANCHOR_COLS), min(size - 1, c + ANCHOR_COLS)
    cars = {tuple(x) for x in facts.cars}
    target = tuple(facts.target)
    head = "     " + " ".join(f"{dc:+3d}" for dc in range(c0 - c, c1 - c + 1))
    lines = [head]
    for rr in range(r0, r1 + 1):
        cells = []
        for cc in range(c0, c1 + 1):
            cell = (rr, cc)
            ch = "A" if cell == (r, c) else "C" if cell in cars else "T" if cell == target else "."
            cells.append(f"{ch:>3}")
        lines.append(f"{rr - r:+4d} " + " ".join(cells))
    text = "\n".join(lines) + (
        "\nClose-up: rows and columns are offsets from you (A at 0, 0): rows grow downward, "
        "columns to the right."
    )
    wide = raster(
        size, facts.agent, facts.target, facts.cars, half=half, scale=12, show_target=True
    )
    full = raster(
        size, facts.agent, facts.target, facts.cars, half=half, scale=scale, show_target=True
    )
    close = full[r0 * scale : (r1 + 1) * scale, c0 * scale : (c1 + 1) * scale]
    ticks = (range(r0 - r, r1 - r + 1), range(c0 - c, c1 - c + 1))
    return text, wide, tick_labels(close, *ticks, scale=scale)
