"""Pictures of the moving-car grid and of its geodesic tools (seed 001, figures 1 and 4).

Grid renderings live with the facts (:func:`statelab.facts.traffic.raster`); here:

- :func:`png_bytes` encodes an ``(H, W, 3)`` uint8 image as a PNG with the standard library;
- plots of sampled geodesics and of each k-medoids cluster (:func:`plot_geodesics`,
  :func:`plot_clusters`), drawn on a matplotlib Agg canvas (no pyplot state), returned as PNG
  bytes and optionally written to a file.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from statelab.envs.traffic_world import DELTAS
from statelab.facts.traffic import Cell
from statelab.tools.geodesics import Geodesic

if TYPE_CHECKING:
    from statelab.tools.quantize import Quantization


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
