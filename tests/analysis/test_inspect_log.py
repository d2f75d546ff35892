"""``statelab export --to inspect``: one inspect_ai eval log per run, a sample per episode
with the acting messages, score and metadata, read back with inspect_ai's own reader
(``inspect_ai.log.read_eval_log``); where chromium is installed, opened in ``inspect view``.

The round trip needs inspect_ai (``pip install 'statelab[inspect]'``) and is skipped without
it, saying so; the browser test also needs selenium and chromium with chromium-driver."""

from __future__ import annotations

import builtins
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

runner = CliRunner()
REPLIES = ["Action: Move the top disk of rod A to the top of rod C"]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("inspect")
    script = tmp / "replies.json"
    script.write_text(json.dumps(REPLIES))
    exp = parse_experiment(
        {
            "name": "inspect-me",
            "model": f"scripted:{script}",
            "seeds": [0, 1, 2],
            "grid": {"env": ["hanoi"], "history": ["full", "summary"]},
            "baseline": {"history": "full"},
            "out": str(tmp / "results"),
            "cache": None,
            "max_steps": 3,
        }
    )
    assert run_sync(exp, progress=None).done == 12  # 2 histories, the expert, random floor
    return exp.out_dir / "store.sqlite"


@pytest.fixture(scope="module")
def logs(store: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("inspect-out")
    res = runner.invoke(app, ["export", str(store.parent), "--to", "inspect", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return [Path(line) for line in res.stdout.split()]


def _stored(store: Path) -> tuple:
    st = Store(store, readonly=True)
    try:
        return st.episodes_frame(), st.table("steps"), st.table("calls")
    finally:
        st.close()


def test_each_run_is_an_eval_log_that_inspect_reads_back(store: Path, logs: list[Path]) -> None:
    pytest.importorskip("inspect_ai", reason="needs inspect_ai: pip install 'statelab[inspect]'")
    from inspect_ai.log import read_eval_log

    episodes, steps, calls = _stored(store)
    assert len(logs) == 4 and all(p.parent.name == "inspect" for p in logs)
    by_task = {}
    for path in logs:
        log = read_eval_log(str(path))
        assert log.status == "success" and log.eval.task.startswith("inspect-me-")
        by_task[log.eval.task.removeprefix("inspect-me-")] = log
    assert sorted(by_task) == ["expert", "full", "random-floor", "summary"]
    for log in by_task.values():
        rid = log.eval.metadata["run_id"]
        mine = episodes[episodes["run"] == rid].sort_values("seed")
        assert log.eval.task_args["env"] == "hanoi" and "env=hanoi" in log.eval.tags
        assert log.results is not None and log.results.total_samples == len(mine) == 3
        (score,) = log.results.scores
        assert score.metrics["mean"].value == pytest.approx(mine["score"].mean())
        assert log.stats.started_at < log.stats.completed_at  # when the episodes ran
        # a sample per episode: its seed, score and metadata
        assert log.samples is not None
        assert [s.id for s in log.samples] == mine["seed"].tolist()
        for sample, ep in zip(log.samples, mine.to_dict("records"), strict=True):
            assert sample.epoch == 1 and sample.scores is not None
            assert sample.scores["statelab"].value == pytest.approx(ep["score"])
            assert sample.metadata["run_id"] == rid and sample.metadata["steps"] == ep["steps"]
            assert sample.metadata["history"] == ep["history"]
            replies = [m.text for m in sample.messages if m.role == "assistant"]
            assert len(replies) == ep["steps"] == 3
    # the acting messages as the model saw them: the model's replies in order, and in a
    # summary run each step's memory in the prompt that followed it
    summary = by_task["summary"]
    rid = summary.eval.metadata["run_id"]
    for sample in summary.samples or []:
        seen = "\n".join(m.text for m in sample.messages)
        mine = steps[(steps["run"] == rid) & (steps["seed"] == sample.id)].sort_values("t")
        memories = [m for m in mine["memory"].tolist()[:-1] if m]
        assert memories and all(m in seen for m in memories)
        acting = calls[(calls["run"] == rid) & (calls["seed"] == sample.id)]
        acting = acting[acting["kind"] == "act"].sort_values(["t", "i"])
        replies = [m.text for m in sample.messages if m.role == "assistant"]
        assert replies == acting["text"].tolist()
        assert sample.messages[0].role == "system"
        assert sum(m.role == "system" for m in sample.messages) == 1
    # an episode without model calls: its prompt states and actions
    for sample in by_task["expert"].samples or []:
        assert [m.role for m in sample.messages] == ["user", "assistant"] * 3
        assert by_task["expert"].eval.model == "none/none"


def test_without_inspect_ai_the_same_log_is_written(
    store: Path, logs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JSON this module writes itself (no inspect_ai installed) reads back as the one
    written with inspect_ai's types."""
    real = builtins.__import__

    def no_inspect(name: str, *args: object, **kw: object) -> object:
        if name.startswith("inspect_ai"):
            raise ImportError(name)
        return real(name, *args, **kw)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(builtins, "__import__", no_inspect)
        res = runner.invoke(
            app, ["export", str(store.parent), "--to", "inspect", "--out", str(tmp_path)]
        )
    assert res.exit_code == 0, res.output
    plain = sorted(Path(p) for p in res.stdout.split())
    assert [p.name for p in plain] == sorted(p.name for p in logs)
    for path in plain:
        data = json.loads(path.read_text())
        assert data["version"] == 2 and len(data["samples"]) == 3
    pytest.importorskip("inspect_ai", reason="reading back needs inspect_ai")
    from inspect_ai.log import read_eval_log

    for mine, typed in zip(plain, sorted(logs), strict=True):
        a, b = read_eval_log(str(mine)), read_eval_log(str(typed))
        assert a.eval.task == b.eval.task and a.results == b.results
        assert [s.scores for s in a.samples or []] == [s.scores for s in b.samples or []]
        assert [[m.text for m in s.messages] for s in a.samples or []] == [
            [m.text for m in s.messages] for s in b.samples or []
        ]


def test_exporting_again_replaces_each_runs_log(
    store: Path, logs: list[Path], tmp_path: Path
) -> None:
    argv = ["export", str(store.parent), "--to", "inspect", "--out", str(tmp_path)]
    assert runner.invoke(app, argv).exit_code == 0
    first = sorted(p.name for p in (tmp_path / "inspect").iterdir())
    assert runner.invoke(app, argv).exit_code == 0
    assert sorted(p.name for p in (tmp_path / "inspect").iterdir()) == first and len(first) == 4


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
)


@pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no headless browser: apt-get install chromium chromium-driver",
)
def test_inspect_view_opens_the_exported_logs(logs: list[Path], tmp_path: Path) -> None:
    """``inspect view`` on the export lists every run and opens a run's samples
    (benchmarks/inspect_view_shot.py, which drew docs/inspect_view.png)."""
    pytest.importorskip("inspect_ai", reason="needs inspect_ai: pip install 'statelab[inspect]'")
    pytest.importorskip("selenium", reason="needs selenium: pip install 'statelab[browser]'")
    png = tmp_path / "view.png"
    argv = [sys.executable, str(ROOT / "benchmarks" / "inspect_view_shot.py")]
    argv += [str(logs[0].parent), str(png), "--expect", "inspect-me-summary"]
    argv += ["--open", "inspect-me-summary", "--sample", "Your task is to"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Summary of past actions" in done.stdout  # the summary run's memory, on screen
    assert png.stat().st_size > 10_000
