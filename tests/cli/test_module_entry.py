"""``python -m statelab`` and ``python -m statelab.cli`` both run the command line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import statelab

SRC = str(Path(statelab.__file__).resolve().parents[1])


@pytest.mark.parametrize("module", ["statelab", "statelab.cli"])
def test_python_dash_m_runs_the_cli(module):
    env = {**os.environ, "PYTHONPATH": SRC}
    res = subprocess.run(
        [sys.executable, "-m", module, "list", "history"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[:2] == ["full", "none"]
