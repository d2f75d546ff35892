"""Imports the renderer modules of facts kinds other than pegs (one line each)."""

from statelab.state import (
    formats_babyai,  # noqa: F401
    formats_messenger,  # noqa: F401
    formats_traffic,  # noqa: F401
)
