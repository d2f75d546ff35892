"""The store the viewer tests read, built once."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.viewer._store import build, loop_store


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("viewer"))


@pytest.fixture(scope="session")
def looping(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Hanoi episode that loops (tests/viewer/_store.py: LOOP)."""
    return loop_store(tmp_path_factory.mktemp("loop"))
