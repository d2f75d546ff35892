"""The how-to pages run: every ```python block of each page below is executed, the page's
blocks in order in one namespace, in a subprocess of its own (so the components a page
registers never meet the other tests' registries). A block not meant to run is fenced as
something else (```text, ```yaml, ```bash)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import statelab

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: the pages whose examples are complete programs
PAGES = ("add-an-env.md", "add-a-representation.md")
_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[str]:
    return _BLOCK.findall(text)


def test_blocks_are_found():
    text = "a\n```python\nx = 1\n```\n```text\nnot run\n```\n```python\nprint(x)\n```\n"
    assert python_blocks(text) == ["x = 1\n", "print(x)\n"]


@pytest.mark.parametrize("page", PAGES)
def test_the_page_runs(page, tmp_path):
    blocks = python_blocks((DOCS / page).read_text())
    assert blocks, f"{page} has no python blocks"
    # each block stays a unit in tracebacks: "# --- block N ---" heads it
    script = "\n".join(f"# --- block {i + 1} ---\n{b}" for i, b in enumerate(blocks))
    path = tmp_path / (Path(page).stem.replace("-", "_") + ".py")
    path.write_text(script)
    src = str(Path(statelab.__file__).resolve().parents[1])  # the statelab under test
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    got = subprocess.run(
        [sys.executable, str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, f"{page} failed:\n{got.stderr[-4000:]}"
