"""Household in-context examples of seed 004, with a world-model query and plain, built from our
searching expert (:class:`statelab.envs._household_search.SearchingExpert`, which knows only
what a player sees) on train games, with our world model answering the opening
``query where is <target>`` (:mod:`statelab.worldmodels.adapters.household`).

The text is laid out as the authors lay out their one example (``prompt/templates.py``, one
user message): the first observation, then each turn (``Thought: ...`` when the expert
thinks, ``Action: ...``) and the observation that answered it (``Observation: ...``), a
blank line after each observation. ``build`` plays the games (seconds); the texts used in
prompts are the stored ones (:func:`stored`): ``household_<task type>.txt`` (belief),
``household_<task type>-noprob.txt`` beside this module, the plain ones in ``plain/``.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

#: the train seeds scanned for an episode of each task type (in order; the first won within
#: :data:`MAX_LEN` steps is the example)
SCAN = range(0, 60)
MAX_LEN = 30
TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
MODES = ("belief", "noprob")
#: the plain example (no query: the authors' Memory, WALL-E and base agents) is the same
#: episode with the expert's own first thought; it is stored in ``plain/`` (the example set
#: ``seed004`` the conversation layout reads without a world model's example)
PLAIN = "plain"
HERE = Path(__file__).parent


def file_name(task_type: str, mode: str) -> str:
    """The stored text's file name of ``task_type`` in ``mode`` (plain: in ``plain/``)."""
    if mode == PLAIN:
        return f"{PLAIN}/household_{task_type}.txt"
    return f"household_{task_type}{'' if mode == 'belief' else '-' + mode}.txt"


def _opening(obj: str) -> str:
    return (
        f"Thought: To solve the task, I first need to find a {obj}. Before I search, I ask "
        f"the world model where a {obj} is likely to be.\nAction: query where is {obj}"
    )


def _after_answer(place: str) -> str:
    return (
        f"The world model narrows down where to look. With its answer and the task in mind, "
        f"I start with {place}."
    )


def build(task_type: str, mode: str) -> str:
    """Play train seeds of ``task_type`` with the searching expert and write the first won
    episode as an example opening with ``query where is <target>``, answered by our world
    model in ``mode`` (``belief`` or ``noprob``; ``plain``: no query)."""
    from statelab.envs import make_env
    from statelab.envs._household_search import SearchingExpert, parse_goal
    from statelab.worldmodels.adapters import adapter_for

    env = make_env(f"household:{task_type}")
    try:
        for seed in SCAN:
            obs, info = env.reset(seed=seed)
            goal = parse_goal(obs.goal)
            if goal is None:
                continue
            adapter = adapter_for("household", obs, "uniform")
            assert adapter is not None, "the household adapter claims household games"
            rng = random.Random(f"example-{seed}")
            answer = "" if mode == PLAIN else adapter.answer(f"where is {goal[1]}", mode, rng)
            turns = _play(env, obs, info, SearchingExpert())
            if turns is None:
                continue
            parts = [obs.text.strip()]
            if mode != PLAIN:
                parts += [_opening(goal[1]), f"Observation: {answer}", ""]
            for k, (thought, action, seen) in enumerate(turns):
                if k == 0 and mode != PLAIN:
                    thought = _after_answer(action.removeprefix("go to "))
                head = f"Thought: {thought}\n" if thought else ""
                parts += [f"{head}Action: {action}", f"Observation: {seen}", ""]
            return "\n".join(parts).rstrip("\n") + "\n"
    finally:
        env.close()
    raise RuntimeError(f"no won episode of {task_type} in train seeds {SCAN}")


def _play(env: Any, obs: Any, info: Any, expert: Any) -> list[tuple[str, str, str]] | None:
    """(thought, action, observation) of each step of a won episode, else None."""
    turns: list[tuple[str, str, str]] = []
    while len(turns) < MAX_LEN:
        action = str(expert.act(obs, info))
        obs, _, terminated, truncated, info = env.step(action)
        turns.append((str(expert.thought), action, " ".join(obs.text.split())))
        if terminated or truncated:
            return turns if info.get("success") else None
    return None


@cache
def stored(task_type: str, mode: str) -> str | None:
    """The stored example text of ``task_type`` in ``mode`` (belief, noprob, plain; None
    when there is none)."""
    path = HERE / file_name(task_type, mode)
    return path.read_text() if path.is_file() else None
