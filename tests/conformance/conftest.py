"""The conformance suite sees the installed plugin packages (``plugins/``): while its modules
are collected (their parameters are read from the registries then) and while each of its
tests runs. Outside, the registries hold what ``src/`` registers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.conformance import plugins


def pytest_collectstart(collector: pytest.Collector) -> None:
    if isinstance(collector, pytest.Module):
        plugins.activate()


def pytest_collectreport(report: pytest.CollectReport) -> None:
    plugins.deactivate()


@pytest.fixture(autouse=True)
def _plugin_packages() -> Iterator[None]:
    plugins.activate()
    yield
    plugins.deactivate()
