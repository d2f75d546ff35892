"""A static HTML trajectory viewer. Every string that a model or env wrote is escaped."""

from statelab.viewer.html import render_episodes, write_viewer

__all__ = ["render_episodes", "write_viewer"]
