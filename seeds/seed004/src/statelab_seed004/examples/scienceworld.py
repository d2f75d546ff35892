"""Seed 004's in-context example for ScienceWorld, one per task, for the variants whose world
model answers queries (Belief, BB-WM, Belief-NoProb), as the authors give one: it opens with
``query where is <target>`` and the world model's answer, then plays the task.

The examples are stored text (``scienceworld_examples.json`` next to this module), written
by ``seeds/seed004/scripts/scienceworld_examples.py`` from our expert's episode on the
task's first train variation (seed 1000), started as the authors' agent starts (the task
description alone, the env's ``start=task``), with our world model answering the opening
query: in the ``belief`` mode for Belief and BB-WM, in the ``noprob`` mode for
Belief-NoProb. Regenerating
gives the same bytes (tested)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

EXAMPLES = Path(__file__).with_name("scienceworld_examples.json")
#: variant -> what its world model's where-is reveals (the variants without queries: none)
MODES = {"belief": "belief", "bbwm": "belief", "belief-noprob": "noprob"}


@functools.cache
def _stored() -> dict[str, dict[str, str]]:
    return json.loads(EXAMPLES.read_text()) if EXAMPLES.exists() else {}


def scienceworld_wm_example(task: str, variant: str) -> str | None:
    """The in-context example of ScienceWorld task ``task`` (``boil``) for world-model
    variant ``variant``; None for a variant without queries or a task without a stored
    example."""
    mode = MODES.get(variant)
    if mode is None:
        return None
    return _stored().get(task, {}).get(mode)


def render(goal: str, target: str, answer: str, steps: list[tuple[str, str]]) -> str:
    """An example's text: the task, the opening query and its answer, then each expert
    action and the env's observation."""
    lines = [
        f"Task Description:\n{goal}",
        f"Thought: Before I move, I ask the world model where the {target} is most likely to be.",
        f"Action: query where is {target}",
        f"Observation: {answer}",
    ]
    for action, text in steps:
        lines += [f"Action: {action}", f"Observation: {text}"]
    return "\n".join(lines)


__all__ = ["EXAMPLES", "MODES", "render", "scienceworld_wm_example"]
