"""Issue 8, "What must show": an env whose observations are plain text, a history, an agent
scaffold and a world model that answers one query and rejects one action, each one new file
plus its registration (``tests/conformance/plugins/``), run in an experiment and shown in
the report, with no change to ``run/`` or ``analysis/``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.conformance import plugins
from typer.testing import CliRunner

from statelab.analysis.reporting import make_report
from statelab.core import TAGS
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store


@pytest.fixture
def installed():
    """Import (register) the plugins for one test, and remove them after: importing them at
    collection time would show them to every other test of the session."""
    global echo_env, last_action_history, asking_agent, oracle_world
    echo_env, last_action_history, asking_agent, oracle_world = plugins.install()
    yield
    plugins.uninstall()


echo_env: Any
last_action_history: Any
asking_agent: Any
oracle_world: Any


@pytest.fixture
def store_path(installed, tmp_path):
    replies = tmp_path / "replies.json"
    # step 1: "kick door" (rejected by the world model), then "take key"; step 2: "open door"
    replies.write_text(json.dumps(["Action: kick door", "Action: take key", "Action: open door"]))
    exp = parse_experiment(
        {
            "name": "plugins",
            "model": f"scripted:{replies}",
            "seeds": [0],
            "grid": {
                "env": [echo_env.NAME],
                "history": [last_action_history.NAME],
                "agent": [asking_agent.NAME],
                "worldmodel": [oracle_world.NAME],
            },
            "out": str(tmp_path / "results"),
            "cache": None,
            "random": False,
            # the seed-style pivot: one column per plugin axis value
            "report": {"rows": ["agent"], "columns": ["env", "history", "worldmodel"]},
        }
    )
    result = run_sync(exp, progress=None)
    assert result.failed == 0, result.failures
    assert result.done == 2  # the plugin run and the expert's
    return exp.out_dir / "store.sqlite"


def _plugin_run(runs):
    rows = runs[runs.agent == asking_agent.NAME]
    assert len(rows) == 1
    return rows.iloc[0]


def test_plugins_run_and_are_stored(store_path):
    store = Store(store_path)
    try:
        runs = store.runs_frame()
        episodes = store.episodes_frame()
        queries = store.table("queries")
        steps = store.table("steps")
    finally:
        store.close()
    run = _plugin_run(runs)
    # the components' spellings and tags are stored with the run
    comps = run.components
    assert comps["agent"]["spelling"] == asking_agent.NAME
    assert comps["history"]["spelling"] == last_action_history.NAME
    assert comps["history"]["label"] == "last action only"
    assert comps["worldmodel"]["spelling"] == oracle_world.NAME
    assert {"answers-queries", "validates", "needs-model"} <= set(run.tags) <= set(TAGS)
    assert run.env == echo_env.NAME and run.history == last_action_history.NAME
    # the episode was won (take key, open door) and the expert won too
    ep = episodes[episodes.run == run.run].iloc[0]
    assert ep.success and ep.steps == 2
    assert episodes.success.all()
    # the query and its answer are recorded (asked again after the rejection)
    mine = queries[queries.run == run.run]
    assert set(mine["query"]) == {asking_agent.QUESTION}
    assert set(mine["answer"]) == {oracle_world.ANSWER}
    assert len(mine) == 3
    # the rejected proposal is in the first step's meta
    mine_steps = steps[steps.run == run.run].sort_values("t")
    first = json.loads(mine_steps.iloc[0]["meta"])
    assert first["rejected"] == [{"action": "kick door", "feedback": oracle_world.FEEDBACK}]
    assert mine_steps.iloc[0]["action"] == "take key"
    assert "rejected" not in json.loads(mine_steps.iloc[1]["meta"] or "{}")
    # the history wrote its state: the second step's prompt carries the last action
    assert "Last action (step 1): take key" in mine_steps.iloc[1]["view"]


def test_plugins_show_in_the_report(store_path, tmp_path):
    report = make_report(store_path, tmp_path / "report")
    store = Store(store_path)
    try:
        label = _plugin_run(store.runs_frame()).label
    finally:
        store.close()
    for name in (echo_env.NAME, asking_agent.NAME, last_action_history.NAME, oracle_world.NAME):
        assert name in label
    # the run is listed under its label, with its value on every axis
    (row,) = [r for r in report.data["runs"] if r["run"] == label]
    assert row["worldmodel"] == oracle_world.NAME and row["history"] == last_action_history.NAME
    # the Markdown shows every plugin (the pivot's rows and columns name them)
    for name in (echo_env.NAME, asking_agent.NAME, last_action_history.NAME, oracle_world.NAME):
        assert name in report.markdown, name


def test_plugins_show_in_the_cli_report(store_path, tmp_path):
    from statelab.cli import app

    out = tmp_path / "cli-report"
    got = CliRunner().invoke(app, ["report", str(store_path), "--out", str(out)])
    assert got.exit_code == 0, got.output
    for name in (echo_env.NAME, asking_agent.NAME, last_action_history.NAME, oracle_world.NAME):
        assert name in got.output, name
