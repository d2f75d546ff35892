"""Experiments: config files, the runner, the results store."""
