"""Agent-centred close-ups (the ``zoom`` grounding, seed 001 appendix A.2), per fact kind.

``close_up(facts, half)`` returns the close-up as text (ASCII rows) and as an RGB image. It is
drawn from what the agent sees (the observation's facts), never from privileged info; for the
moving-car grid it is exactly the env's ``render_zoom(half)``. Each facts kind with a close-up
registers it in its own module (:mod:`statelab.facts.traffic`); fact kinds without one raise a
one-line :class:`~statelab.core.ConfigError`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from statelab.core import ConfigError


@functools.singledispatch
def close_up(facts: Any, half: int) -> tuple[str, np.ndarray]:
    raise ConfigError(f"grounding 'zoom': no close-up for {type(facts).__name__} observations")
