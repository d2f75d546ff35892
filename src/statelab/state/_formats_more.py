"""Imports the renderer modules of facts kinds other than pegs (one line each)."""
