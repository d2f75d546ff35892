"""Issue 8, "What must show": an env whose observations are plain text, a history, an agent
scaffold and a world model that answers one query and rejects one action, each one new file
(``tests/conformance/plugins/``), run in an experiment and shown in the report, with no change
to ``run/`` or ``analysis/``.

Issue 19: the env and the history are installed plugin packages (``statelab-echo``,
``statelab-last-action``: one module and a ``pyproject.toml`` each, installed by pip into a
directory of their own), found by the registries through their ``statelab.plugins`` entry
points, with no edit inside ``src/statelab``; ``statelab list`` and ``statelab run`` see them,
and so does the conformance suite. A ``module:name`` spelling uses a class of an importable
module directly."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conformance import plugins
from typer.testing import CliRunner

import statelab
from statelab.analysis.reporting import make_report
from statelab.core import TAGS, ConfigError
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store


@pytest.fixture
def installed():
    """The imported plugins (agent, world model) registered for one test and removed after
    (importing them at collection time would show them to every other test of the session);
    the installed packages' modules as the registries loaded them (the conformance suite's
    own fixture puts them on ``sys.path``)."""
    global echo_env, last_action_history, asking_agent, oracle_world
    asking_agent, oracle_world = plugins.install()
    echo_env = importlib.import_module("statelab_echo")
    last_action_history = importlib.import_module("statelab_last_action")
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


# -- issue 19: installed plugin packages -------------------------------------------------------
def test_the_env_and_the_history_are_installed_packages_loaded_by_entry_point():
    from statelab.core._plugins import GROUP
    from statelab.envs import ENVS
    from statelab.state import HISTORIES

    site = plugins.installed()
    for dist, (_axis, name) in plugins.PACKAGES.items():
        d = importlib.metadata.distribution(dist)
        (ep,) = [e for e in d.entry_points if e.group == GROUP]
        assert ep.name == name
        module = importlib.import_module(ep.value)
        # the module is the installed copy, not the source under tests/
        assert Path(module.__file__).parent == site, module.__file__
        assert not Path(module.__file__).is_relative_to(Path(plugins.__file__).parent)
    assert "echo" in ENVS.names() and "last-action" in HISTORIES.names()
    # nothing of the plugins inside src/statelab
    src = Path(statelab.__file__).parent
    names = ("EchoEnv", "statelab-test/Echo-v0", "LastActionMemory", "last action only")
    assert not any(n in p.read_text() for p in src.rglob("*.py") for n in names)
    # out of the conformance suite's scope the registries hold only what src/ registers
    plugins.deactivate()
    try:
        assert "echo" not in ENVS.names() and "last-action" not in HISTORIES.names()
    finally:
        plugins.activate()


def test_the_conformance_suite_picks_up_the_plugins():
    from tests.conformance._registries import ENV_NAMES, component_ids

    assert "echo" in ENV_NAMES
    assert ("history", "last-action") in component_ids()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``statelab <args>`` in a fresh process with the plugin directory on PYTHONPATH."""
    path = [str(plugins.installed()), str(Path(statelab.__file__).parents[1])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run(
        [sys.executable, "-m", "statelab", *args], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_statelab_list_and_run_see_the_installed_plugins(tmp_path):
    listed = _cli("list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    env_at, history_at = lines.index(next(x for x in lines if x.startswith("env:"))), next(
        i for i, x in enumerate(lines) if x.startswith("history:")
    )
    assert "  echo (test plugin)" in lines[env_at:history_at]
    assert "  last-action (test plugin)" in lines[history_at:]
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["Action: take key", "Action: open door"]))
    config = tmp_path / "plugins.yaml"
    config.write_text(
        f"name: plugins\nmodel: scripted:{replies}\nseeds: [0]\ncache: null\n"
        f"out: {tmp_path / 'results'}\ngrid:\n  env: [echo]\n  history: [last-action]\n"
    )
    ran = _cli("run", str(config), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    store = Store(tmp_path / "results" / "plugins" / "store.sqlite")
    try:
        runs, episodes = store.runs_frame(), store.episodes_frame()
    finally:
        store.close()
    mine = runs[runs.history == "last-action"]
    assert list(mine.env) == ["echo"]
    (won,) = episodes[episodes.run == mine.iloc[0].run].itertuples()
    assert won.success and won.steps == 2


def test_a_module_name_spelling_imports_the_module_and_uses_the_class():
    import statelab_echo
    import statelab_last_action

    from statelab.envs import env_class, make_env
    from statelab.envs.checker import check_env
    from statelab.state import HISTORIES

    env = make_env("statelab_echo:EchoEnv")
    assert type(env) is statelab_echo.EchoEnv and env_class("statelab_echo:EchoEnv").name == "echo"
    report = check_env(env)
    assert report.offers == () and "splits" in report.lacks
    memory = HISTORIES.build("statelab_last_action:LastActionMemory")
    assert isinstance(memory, statelab_last_action.LastActionMemory)
    assert memory.spelling == "statelab_last_action:LastActionMemory"
    # the Gymnasium form: a name the module's import registered
    assert type(make_env("statelab_echo:echo")) is statelab_echo.EchoEnv
    # a registered name always wins: the existing spellings keep their meaning
    assert HISTORIES.build("window:5").spelling == "window:5"
    with pytest.raises(ConfigError, match="takes no argument"):
        HISTORIES.build("statelab_last_action:LastActionMemory:3")
    with pytest.raises(ConfigError, match="not an Env subclass"):
        make_env("statelab_echo:EchoExpert")
    with pytest.raises(ConfigError, match="has no 'Nothing'"):
        make_env("statelab_echo:Nothing")
    with pytest.raises(ConfigError, match=r"unknown history 'no_such_module\.x:Y'"):
        HISTORIES.build("no_such_module.x:Y")
