"""Representation axes: structure (formats), granularity (histories), and the view phi."""

from statelab.facts import FORMATS, formats_for, formatter, render, supports
from statelab.state import (
    bounded,  # noqa: F401 - registers the bounded histories
    readtime,  # noqa: F401 - registers the read-time oracle
)
from statelab.state.history import HISTORIES, call_seed
from statelab.state.view import compose_view, observation_renderer

__all__ = [
    "FORMATS",
    "HISTORIES",
    "call_seed",
    "compose_view",
    "formats_for",
    "formatter",
    "observation_renderer",
    "render",
    "supports",
]
