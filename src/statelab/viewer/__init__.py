"""The trajectory viewer: one page per experiment, no server; every model string is text."""

from statelab.viewer.html import ViewResult, write_viewer

__all__ = ["ViewResult", "write_viewer"]
