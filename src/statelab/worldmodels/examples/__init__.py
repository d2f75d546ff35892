"""Seed 004's in-context examples: one solved episode per task type that opens with a
world-model query (``query where is <target>``) and the world model's answer.

The authors (skumar-ml/belief-world-models, ``prompt/icl_examples/*_wm_icl.json``) give the
Belief, BB-WM and Belief-NoProb agents one such example per ALFWorld task type and per
ScienceWorld task, none for BabyAI; their Memory, WALL-E and base agents get the plain
ReAct example (no query), which the agent builds itself from our expert
(:mod:`statelab.agents._seed004`).

A builder is registered per env family (:func:`register_example`): ``build(task_type,
variant) -> text | None`` (None: no example with a query for that variant). The ScienceWorld
builder is :func:`statelab.worldmodels.adapters._scienceworld_examples.scienceworld_wm_example`
(one stored example per task, from our expert on the task's train variation). The household
builder (:mod:`statelab.worldmodels.examples.household`) reads the texts stored beside this
module (``household_<task type>.txt``, ``household_<task type>-noprob.txt``), written once by
``scripts/seed004_examples.py`` from our searching expert on train games with our world model
answering; a test regenerates them byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable

#: the variants whose example opens with a query, and the answer's mode (bbwm answers as
#: belief does)
QUERY_VARIANTS = {"belief": "belief", "bbwm": "belief", "belief-noprob": "noprob"}

_BUILDERS: dict[str, Callable[[str, str], str | None]] = {}


def register_example(env_family: str, build: Callable[[str, str], str | None]) -> None:
    """Register ``build(task_type, variant)`` as the examples of an env family (the env
    spelling's part before ``/`` and ``:``, e.g. ``household``, ``scienceworld``)."""
    _BUILDERS[env_family] = build


def example_for(env_family: str, task_type: str, variant: str) -> str | None:
    """The in-context example with a query for ``variant`` (a world-model spelling such as
    ``belief``, ``bbwm:zipf``) on ``task_type``; None where the authors give none (BabyAI,
    the Memory / WALL-E / base variants, an unknown task type)."""
    _ensure_builtin()
    build = _BUILDERS.get(env_family)
    if build is None:
        return None
    return build(task_type, variant)


def family_of(env: str) -> str:
    """The env family of an env spelling (``household:placement=zipf`` -> ``household``)."""
    return env.split("/", 1)[0].split(":", 1)[0].split("+", 1)[0]


def task_of(env: str, goal: str) -> str | None:
    """The task an example is chosen by: the task type the env reads in the goal
    (``task_type_of_goal``), else the env spelling's task (``scienceworld/boil`` -> ``boil``),
    else None."""
    from statelab.core import ConfigError
    from statelab.envs import env_class

    try:
        cls = env_class(env)
    except (ConfigError, KeyError):
        return None
    if cls.reads_goal_types():
        return cls.task_type_of_goal(goal)
    base = env.split(":", 1)[0].split("+", 1)[0]
    return base.split("/", 1)[1] if "/" in base else None


def _scienceworld(task: str, variant: str) -> str | None:
    from statelab.worldmodels.adapters._scienceworld_examples import scienceworld_wm_example

    return scienceworld_wm_example(task, variant.split(":", 1)[0])


def _ensure_builtin() -> None:
    if "household" not in _BUILDERS:
        from statelab.worldmodels.examples.household import household_wm_example

        _BUILDERS["household"] = household_wm_example
    _BUILDERS.setdefault("scienceworld", _scienceworld)


__all__ = ["QUERY_VARIANTS", "example_for", "family_of", "register_example", "task_of"]
