"""``statelab audit`` through the command line on a stored experiment (Hanoi, a scripted
model): the cost line before it starts, one stored point per sampled decision, the report's
audit section from them, and a second call that scores nothing."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from statelab.cli import app
from statelab.run.store import Store

MOVE = "Move the top disk of rod A to the top of rod C"


def test_statelab_audit_scores_each_sampled_point_once_and_resumes(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([MOVE]))
    cfg = {
        "name": "aud", "model": f"scripted:{script}", "seeds": [0, 1], "max_steps": 4,
        "grid": {"env": ["hanoi"], "agent": ["act"], "history": ["full", "last-k:32"]},
        "out": str(tmp_path / "results"), "cache": None, "expert": False, "random": False,
    }  # fmt: skip
    path = tmp_path / "aud.yaml"
    path.write_text(yaml.safe_dump(cfg))
    runner = CliRunner()
    assert runner.invoke(app, ["run", str(path)]).exit_code == 0
    args = ["audit", str(path), "--points", "2", "--samples", "2", "--kind", "general"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    # 2 runs x 2 seeds x 2 points; the cost is printed before any scoring
    assert "aud: 8 decision points audited in 4 episodes, 0 failed" in first.output
    cost = [x for x in first.output.splitlines() if "points" in x and "scorings" in x]
    assert cost and first.output.index(cost[0]) < first.output.index("decision points audited")
    st = Store(tmp_path / "results" / "aud" / "store.sqlite", readonly=True)
    try:
        rows = st.rows("audit_points")
    finally:
        st.close()
    assert len(rows) == 8 and {r["seed"] for r in rows} == {0, 1}
    # the hindsight reference and the full history are scored at every point
    assert all(r["nll_full"] is not None for r in rows)
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "aud: 0 decision points audited" in again.output  # nothing rescored
    report = runner.invoke(app, ["report", str(tmp_path / "results" / "aud")])
    assert report.exit_code == 0, report.output
    assert "## Decision sufficiency (statelab audit)" in report.output  # from the points


def test_statelab_audit_takes_an_experiment_name_or_folder_as_report_does(tmp_path, monkeypatch):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([MOVE]))
    cfg = {
        "name": "byname", "model": f"scripted:{script}", "seeds": [0], "max_steps": 2,
        "grid": {"env": ["hanoi"], "agent": ["act"], "history": ["last-k:32"]},
        "out": "results", "cache": None, "expert": False, "random": False,
    }  # fmt: skip
    monkeypatch.chdir(tmp_path)
    (tmp_path / "byname.yaml").write_text(yaml.safe_dump(cfg))
    runner = CliRunner()
    assert runner.invoke(app, ["run", "byname.yaml"]).exit_code == 0
    args = ["--points", "1", "--samples", "1", "--kind", "general"]
    by_name = runner.invoke(app, ["audit", "byname", *args])
    assert by_name.exit_code == 0, by_name.output
    assert "byname: 1 decision points audited in 1 episodes" in by_name.output
    by_folder = runner.invoke(app, ["audit", str(tmp_path / "results" / "byname"), *args])
    assert by_folder.exit_code == 0, by_folder.output
    assert "byname: 0 decision points audited" in by_folder.output  # the same store, done
    missing = runner.invoke(app, ["audit", "nothing", *args])
    assert missing.exit_code == 2 and "no results for 'nothing'" in missing.output


def _stored_hanoi(tmp_path) -> tuple[CliRunner, str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([MOVE]))
    cfg = {
        "name": "kinds", "model": f"scripted:{script}", "seeds": [0], "max_steps": 2,
        "grid": {"env": ["hanoi"], "agent": ["act"], "history": ["full"]},
        "out": str(tmp_path / "results"), "cache": None, "expert": False, "random": False,
    }  # fmt: skip
    path = tmp_path / "kinds.yaml"
    path.write_text(yaml.safe_dump(cfg))
    runner = CliRunner()
    assert runner.invoke(app, ["run", str(path)]).exit_code == 0
    return runner, str(path)


def test_an_unknown_audit_kind_is_one_line_naming_the_kinds(tmp_path):
    runner, path = _stored_hanoi(tmp_path)
    res = runner.invoke(app, ["audit", path, "--kind", "nosuch"])
    assert res.exit_code == 2
    (line,) = res.stderr.splitlines()
    assert line.startswith("error: --kind 'nosuch' is no audit kind; the kinds are auto, ")
    assert "general" in line


def test_a_registered_audit_kind_runs_by_name_and_auto_picks_it_when_it_claims(
    tmp_path, monkeypatch
):
    from statelab.analysis.audit import kinds

    seen = []

    def run(exp, req):
        seen.append((exp.name, req.points))
        return kinds.AuditOutcome(f"{exp.name}: demo audit", ["one episode failed"])

    demo = kinds.AuditKind("demo", "a test's audit", run, claims=lambda exp: True)
    monkeypatch.setitem(kinds._KINDS, "demo", demo)
    runner, path = _stored_hanoi(tmp_path)
    res = runner.invoke(app, ["audit", path, "--kind", "demo", "--points", "3"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "kinds: demo audit" and seen == [("kinds", 3)]
    assert "failed: one episode failed" in res.stderr
    auto = runner.invoke(app, ["audit", path])  # auto: the plugin kind that claims it
    assert auto.exit_code == 0 and "kinds: demo audit" in auto.stdout and len(seen) == 2
    monkeypatch.setitem(kinds._KINDS, "demo", kinds.AuditKind("demo", "", run))
    general = runner.invoke(app, ["audit", path, "--samples", "1"])  # claims nothing: general
    assert general.exit_code == 0 and "decision points audited in 1 episodes" in general.stdout
    assert len(seen) == 2
