"""Pictures of the moving-car grid and of its geodesic tools (seed 001, figures 1 and 4).

Two kinds:

- grid renderings (:func:`raster`) as ``(H, W, 3)`` uint8 arrays, numpy only: the full grid,
  the agent's observation (unseen cells grey) and an agent-centred close-up ("zoom"), in the
  seed's colours (agent blue, target green, cars red, free white, unseen grey);
  :func:`png_bytes` encodes one as a PNG with the standard library;
- plots of sampled geodesics and of each k-medoids cluster (:func:`plot_geodesics`,
  :func:`plot_clusters`), drawn on a matplotlib Agg canvas (no pyplot state), returned as PNG
  bytes and optionally written to a file.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from statelab.tools.geodesics import DELTAS, Cell, Geodesic

if TYPE_CHECKING:
    from statelab.tools.quantize import Quantization

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
) -> np.ndarray:
    """The grid as an RGB image, ``scale`` pixels per cell with thin cell borders.

    ``half``: cells farther than ``half`` from the agent (Chebyshev) are drawn unseen and their
    cars hidden (the observation view). ``crop``: only the ``(2*crop+1)``-square around the
    agent is drawn, off-grid cells as wall (the close-up).
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
    for car in cars:
        paint(car, "car")
    paint(agent, "agent")
    img[~((rows >= 0) & (rows < size) & (cols >= 0) & (cols < size))] = COLOURS["wall"]
    big = np.repeat(np.repeat(img, scale, axis=0), scale, axis=1)
    if scale >= 4:
        big[::scale, :] = COLOURS["line"]
        big[:, ::scale] = COLOURS["line"]
    return big


def png_bytes(image: np.ndarray) -> bytes:
    """Encode an ``(H, W, 3)`` uint8 array as PNG (zlib only, no imaging library)."""
    arr = np.ascontiguousarray(image, dtype=np.uint8)
    height, width = arr.shape[:2]
    raw = b"".join(b"\x00" + arr[y].tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


# -- matplotlib plots ------------------------------------------------------------------------
def _path(start: Cell, actions: str) -> np.ndarray:
    """Cells visited by ``actions`` from ``start`` (no walls: windows are relative)."""
    pts = [start]
    for a in actions:
        dr, dc = DELTAS[a]
        pts.append((pts[-1][0] + dr, pts[-1][1] + dc))
    return np.array(pts, dtype=float)


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: str | Path | None) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    data = buf.getvalue()
    if path is not None:
        Path(path).write_bytes(data)
    return data


def plot_geodesics(geodesics: Sequence[Geodesic], path: str | Path | None = None) -> bytes:
    """All geodesics overlaid on the grid from their true starts (seed 001, figure 4 left);
    the sampled five-step window of each is drawn thicker."""
    fig = _figure(6, 6)
    ax = fig.add_subplot(1, 1, 1)
    size = geodesics[0].size if geodesics else 25
    rng = np.random.default_rng(0)
    for i, g in enumerate(geodesics):
        pts = _path(g.start, g.actions) + rng.uniform(-0.15, 0.15, 2)
        colour = f"C{i % 10}"
        ax.plot(pts[:, 1], pts[:, 0], color=colour, lw=0.6, alpha=0.5)
        w = pts[g.offset : g.offset + 6]
        ax.plot(w[:, 1], w[:, 0], color=colour, lw=2.0, alpha=0.8)
    if geodesics:
        t = geodesics[0].target
        ax.plot([t[1]], [t[0]], "s", color="green", ms=10)
    ax.set_xlim(-0.5, size - 0.5)
    ax.set_ylim(size - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.set_title(f"{len(geodesics)} sampled geodesics")
    return _save(fig, path)


def plot_clusters(
    windows: Sequence[str], quantization: Quantization, path: str | Path | None = None
) -> bytes:
    """One panel per cluster: its windows as paths from the origin (jittered, so overlapping
    paths show their mass), the medoid drawn thick on top (seed 001, figure 4 right)."""
    k = len(quantization.medoids)
    fig = _figure(3.0 * k, 3.4)
    labels = np.asarray(quantization.labels)
    rng = np.random.default_rng(0)
    for j, medoid in enumerate(quantization.medoids):
        ax = fig.add_subplot(1, k, j + 1)
        members = [w for w, lab in zip(windows, labels, strict=True) if lab == j]
        for w in members[:400]:
            pts = _path((0, 0), w) + rng.uniform(-0.2, 0.2, 2)
            ax.plot(pts[:, 1], pts[:, 0], color="tab:blue", lw=0.5, alpha=0.25)
        m = _path((0, 0), medoid)
        ax.plot(m[:, 1], m[:, 0], color="tab:red", lw=3, marker="o", ms=4)
        ax.plot([0], [0], "s", color="black", ms=6)
        ax.set_xlim(-5.5, 5.5)
        ax.set_ylim(5.5, -5.5)
        ax.set_aspect("equal")
        ax.grid(True, lw=0.3)
        ax.set_title(f"{medoid} ({len(members)})")
    fig.tight_layout()
    return _save(fig, path)
