"""Agent-centred close-ups (the ``zoom`` grounding, seed 001 appendix A.2), per fact kind.

``close_up(facts, half)`` returns the close-up as text (ASCII rows) and as an RGB image. It is
drawn from what the agent sees (the observation's facts), never from privileged info; for the
moving-car grid it is exactly the env's ``render_zoom(half)``. Each facts kind with a close-up
registers it in its own module (:mod:`statelab.facts.traffic`); fact kinds without one raise a
one-line :class:`~statelab.core.ConfigError`. :func:`tick_labels` labels a close-up's rows and
columns with their offsets from the agent (seed 001's close-up image).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from statelab.core import ConfigError


@functools.singledispatch
def close_up(facts: Any, half: int) -> tuple[str, np.ndarray]:
    """The agent-centred close-up of ``facts`` (text and image, ``half`` cells each side);
    each facts kind with one registers it (zoom grounding)."""
    raise ConfigError(f"grounding 'zoom': no close-up for {type(facts).__name__} observations")


def tick_labels(
    image: np.ndarray, rows: Sequence[int], cols: Sequence[int], scale: int, margin: int = 28
) -> np.ndarray:
    """``image`` (``len(rows)`` x ``len(cols)`` cells of ``scale`` pixels) on a white canvas
    with a ``margin`` above and to the left, where each column and each row is labelled with
    its offset ("-1", "0", "+10"), centred on the cell: the tick labels of seed 001's close-up.
    """
    from PIL import Image, ImageDraw, ImageFont

    h, w = image.shape[:2]
    canvas = Image.new("RGB", (w + margin, h + margin), (255, 255, 255))
    canvas.paste(Image.fromarray(image), (margin, margin))
    draw = ImageDraw.Draw(canvas)
    font = ImageFont.load_default()

    def label(centre: tuple[int, int], offset: int) -> None:
        text = f"{offset:+d}" if offset else "0"
        x0, y0, x1, y1 = draw.textbbox((0, 0), text, font=font)
        draw.text(
            (centre[0] - (x1 - x0) // 2 - x0, centre[1] - (y1 - y0) // 2 - y0),
            text, fill=(0, 0, 0), font=font,
        )  # fmt: skip

    for j, dc in enumerate(cols):
        label((margin + j * scale + scale // 2, margin // 2), dc)
    for i, dr in enumerate(rows):
        label((margin // 2, margin + i * scale + scale // 2), dr)
    return np.asarray(canvas, dtype=np.uint8)
