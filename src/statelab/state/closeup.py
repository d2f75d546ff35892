"""Agent-centred close-ups (the ``zoom`` grounding, seed 001 appendix A.2), per fact kind.

``close_up(facts, half)`` returns the close-up as text (ASCII rows) and as an RGB image. It is
drawn from what the agent sees (the observation's facts), never from privileged info; for the
moving-car grid it is exactly the env's ``render_zoom(half)``. Fact kinds without a close-up
raise a one-line :class:`~statelab.core.ConfigError`.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import numpy as np

from statelab.core import ConfigError, TrafficFacts


@functools.singledispatch
def close_up(facts: Any, half: int) -> tuple[str, np.ndarray]:
    raise ConfigError(f"grounding 'zoom': no close-up for {type(facts).__name__} observations")


@close_up.register
def _(facts: TrafficFacts, half: int) -> tuple[str, np.ndarray]:
    from statelab.tools.plots import raster

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
