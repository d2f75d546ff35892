"""Seed 004's ScienceWorld in-context examples (one per task, for Belief, BB-WM and
Belief-NoProb): each opens with ``query where is <target>`` and our world model's answer,
then our expert's episode on the task's first train variation; regenerating them gives the
same bytes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from statelab.envs.scienceworld import TASKS
from statelab.worldmodels.adapters._scienceworld_text import parse_goal
from statelab_seed004.examples.scienceworld import EXAMPLES, scienceworld_wm_example

SCRIPT = Path(__file__).parents[1] / "scripts" / "scienceworld_examples.py"


def test_every_task_has_one_example_per_querying_variant_and_none_for_the_others():
    for task in TASKS:
        belief = scienceworld_wm_example(task, "belief")
        assert belief is not None, task
        assert scienceworld_wm_example(task, "bbwm") == belief
        assert scienceworld_wm_example(task, "belief-noprob") not in (None, belief), task
        for variant in ("none", "memory", "walle"):
            assert scienceworld_wm_example(task, variant) is None
    assert scienceworld_wm_example("no-such-task", "belief") is None


@pytest.mark.parametrize("task", list(TASKS))
def test_an_example_opens_with_a_query_of_the_target_and_the_answer(task):
    text = scienceworld_wm_example(task, "belief")
    assert text is not None
    lines = text.split("\n")
    assert lines[0] == "Task Description:"
    goal = parse_goal(lines[1])
    target = goal.target or "thing"
    assert lines[3] == f"Action: query where is {target}"
    assert lines[4].startswith(f"Observation: {target} ")
    noprob = scienceworld_wm_example(task, "belief-noprob")
    assert noprob is not None and noprob.split("\n")[3] == lines[3]
    # then the expert's actions, each with the env's answer
    assert lines[5].startswith("Action: ") and lines[6].startswith("Observation: ")
    assert "Action: query" not in "\n".join(lines[5:])


def _script():
    spec = importlib.util.spec_from_file_location("scienceworld_examples_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _regenerates(task: str) -> None:
    pytest.importorskip("scienceworld")
    import json

    stored = json.loads(EXAMPLES.read_text())[task]
    assert _script().examples(task) == stored


def test_regenerating_an_example_gives_the_same_bytes():
    _regenerates("lifespan-longest-lived")


@pytest.mark.slow
@pytest.mark.parametrize("task", [t for t in TASKS if t != "lifespan-longest-lived"])
def test_regenerating_every_example_gives_the_same_bytes(task):
    _regenerates(task)
