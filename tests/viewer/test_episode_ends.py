"""Issue 32 items 6 and 7 on the page: a truncated and a failed episode are marked as such
(status and reason in the index the list, grid and strips read), a failed episode's steps are
in its data file, and ``statelab view`` and ``statelab export`` take a store holding them."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.viewer._store import episode_file, index_of
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import LLM, Completion, GenParams, Message, ModelError, Usage
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.viewer import write_viewer

REPLY = "Action: Move the top disk of rod B to the top of rod A"  # illegal: never ends by itself
STATIC = Path(__file__).parents[2] / "src" / "statelab" / "viewer" / "static"


class _Episode(LLM):
    model_id = "ends"

    def __init__(self, fails: bool) -> None:
        self.fails, self.calls = fails, 0

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.calls += 1
        if self.fails and self.calls > 2:
            raise ModelError("server went away")
        return Completion(REPLY, Usage(10, 5))


class SeedOneFails(LLM):
    """Seed 1's episode fails at its third call; the others reply :data:`REPLY`."""

    model_id = "ends"

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        raise AssertionError("played through for_episode")

    def for_episode(self, key: str) -> LLM:
        return _Episode(fails=key.rsplit("/", 2)[1] == "1")


@pytest.fixture(scope="module")
def ended(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seeds 0 and 2 cut by a 45-token limit after 3 steps; seed 1 failed after 2."""
    tmp = tmp_path_factory.mktemp("ends")
    cfg = {
        "name": "ends", "model": "scripted:x", "seeds": [0, 1, 2], "max_steps": 6,
        "grid": {"env": ["hanoi"]}, "out": str(tmp), "cache": None, "expert": False,
        "random": False, "limits": {"tokens": 45},
    }  # fmt: skip
    exp = parse_experiment(cfg)
    res = run_sync(exp, progress=None, llm_factory=lambda spec: SeedOneFails())
    assert (res.truncated, res.failed) == (2, 1)
    return exp.out_dir / "store.sqlite"


def test_the_index_marks_truncated_and_failed_episodes(ended: Path, tmp_path: Path) -> None:
    page = write_viewer(ended, tmp_path / "v").page
    rows = index_of(page)["episodes"]
    got = [(r[1], r[3], r[6], r[10]) for r in rows]  # seed, status, steps, reason
    assert got == [("0", "truncated", 3, "tokens"), ("1", "failed", 2, "model"),
                   ("2", "truncated", 3, "tokens")]  # fmt: skip
    assert rows[1][9] == "ModelError: server went away"
    # the failed episode's steps are on the page: its strip and its data file
    assert rows[1][7] and len(rows[1][7]) == 2
    data = episode_file(page, 1)
    assert [s["t"] for s in data["steps"]] == [1, 2]
    assert data["steps"][0]["action"].startswith("Move the top disk of rod B")


def test_the_page_draws_the_end_badges() -> None:
    js = {n: (STATIC / n).read_text() for n in ("core.js", "overview.js", "episode.js")}
    assert "function endBadge(ep)" in js["core.js"] and "reason: r[10]" in js["core.js"]
    assert "endBadge(e)" in js["overview.js"]  # the episode list
    assert 'id: "ep-strip" }, strip, " ", endBadge(ep)' in js["episode.js"]  # the strip
    css = (STATIC / "viewer.css").read_text()
    assert ".badge.end.truncated" in css and "a.cell.truncated" in css


def test_end_text_in_node() -> None:
    node = subprocess.run(["which", "node"], capture_output=True, text=True).stdout.strip()
    if not node:
        pytest.skip("no node to run the page's script")
    core = (STATIC / "core.js").read_text()
    start = core.index("function endText(ep)")
    fn = core[start : core.index("/** The class", start)]
    eps = [
        {"status": "truncated", "reason": "wall_s", "steps": 8},
        {"status": "failed", "reason": "model", "steps": 1},
        {"status": "done", "reason": "max_steps", "steps": 10},
    ]
    script = fn + f"console.log(JSON.stringify({json.dumps(eps)}.map(endText)));"
    out = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [
        "truncated by wall_s after 8 steps", "failed after 1 step (model)", ""
    ]  # fmt: skip


def test_view_and_export_take_failed_episodes_steps(ended: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["view", str(ended), "--out", str(tmp_path / "v")])
    assert res.exit_code == 0, res.output
    assert "3 episodes of 3" in res.output
    res = runner.invoke(
        app, ["export", str(ended.parent), "--format", "csv", "--out", str(tmp_path / "x")]
    )
    assert res.exit_code == 0, res.output
    with (tmp_path / "x" / "episodes.csv").open() as f:
        eps: list[dict[str, Any]] = list(csv.DictReader(f))
    assert [(e["status"], e["reason"]) for e in eps] == [
        ("truncated", "tokens"), ("failed", "model"), ("truncated", "tokens")
    ]  # fmt: skip
    with (tmp_path / "x" / "steps.csv").open() as f:
        steps = [s for s in csv.DictReader(f) if s["seed"] == "1"]
    assert [s["t"] for s in steps] == ["1", "2"]
