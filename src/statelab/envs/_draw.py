"""Small raster drawings of grid worlds for image grounding (PIL, no display needed)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

PALETTE = [
    (230, 57, 70),
    (42, 157, 143),
    (58, 134, 255),
    (244, 162, 97),
    (131, 56, 236),
    (38, 70, 83),
    (255, 0, 110),
    (6, 214, 160),
    (233, 196, 106),
    (17, 138, 178),
]


def grid_image(
    size: tuple[int, int], cells: Iterable[tuple[tuple[int, int], str, int]], cell: int = 28
) -> np.ndarray:
    """A ``size=(width, height)`` grid; each ``((x, y), label, colour index)`` is a filled
    cell with its label. Later cells in the same place are drawn smaller, on top."""
    from PIL import Image, ImageDraw

    w, h = size
    img = Image.new("RGB", (w * cell + 1, h * cell + 1), (250, 250, 250))
    d = ImageDraw.Draw(img)
    for i in range(w + 1):
        d.line([(i * cell, 0), (i * cell, h * cell)], fill=(200, 200, 200))
    for j in range(h + 1):
        d.line([(0, j * cell), (w * cell, j * cell)], fill=(200, 200, 200))
    seen: dict[tuple[int, int], int] = {}
    for (x, y), label, colour in cells:
        k = seen.get((x, y), 0)
        seen[(x, y)] = k + 1
        pad = 2 + 5 * k
        box = [x * cell + pad, y * cell + pad, (x + 1) * cell - pad, (y + 1) * cell - pad]
        d.rectangle(box, fill=PALETTE[colour % len(PALETTE)], outline=(0, 0, 0))
        d.text((x * cell + cell // 2 - 3, y * cell + cell // 2 - 6), label, fill=(255, 255, 255))
    return np.asarray(img, dtype=np.uint8)
