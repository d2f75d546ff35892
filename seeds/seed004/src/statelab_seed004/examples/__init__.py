"""Seed 004's few-shot example sets, registered with the lab's example-set registry
(:mod:`statelab.agents.example_sets`) by :func:`register`:

- ``seed004``: the plain example of each household task type (no query; what the authors
  show their Memory, WALL-E and base agents), for ``examples=seed004`` of the conversation
  prompt layout (``react:prompt=conversation/examples=seed004``);
- ``worldmodel:belief``, ``worldmodel:bbwm``, ``worldmodel:belief-noprob``: the example that
  opens with ``query where is <target>`` and the world model's answer, which those variants
  offer the agent (the authors' ``prompt/icl_examples/*_wm_icl.json``: one per ALFWorld task
  type and per ScienceWorld task; none for BabyAI); BB-WM's answers read as Belief's.

- ``seed004:reflact``: the authors' ReflAct example of each household task type
  (``prompt/icl_examples/alfworld_reflact_icl.json``), which ReflAct is shown in place of the
  plain set's (:mod:`statelab_seed004.authors`); ``seed004:reflact:<variant>`` for Belief,
  BB-WM and Belief-NoProb: theirs that open with a query (``alfworld_reflact_wm_icl.json``,
  ``alfworld_reflact_wm_no_prob_icl.json``), shown to ReflAct in place of the world model's;
- the set ``seed004`` also carries the authors' ALFWorld and ScienceWorld instructions, one
  per turn (ReAct, ReflAct) and world-model variant
  (:func:`statelab.agents.example_sets.register_instructions`).

The household texts are :mod:`statelab_seed004.examples.household`'s, the ScienceWorld ones
:mod:`statelab_seed004.examples.scienceworld`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from statelab.agents.example_sets import register_examples, register_instructions
from statelab_seed004 import authors
from statelab_seed004.examples import household, scienceworld

#: the plain example set's name
PLAIN_SET = "seed004"
#: the world-model variants whose example opens with a query, and the answer's mode (bbwm
#: answers as belief does)
QUERY_VARIANTS = {"belief": "belief", "bbwm": "belief", "belief-noprob": "noprob"}


def _household(mode: str, task: str) -> str | None:
    return household.stored(task, mode)


def _reflact(variant: str, task: str) -> str | None:
    return authors.household_reflact_example(task, variant)


def _scienceworld(variant: str, task: str) -> str | None:
    return scienceworld.scienceworld_wm_example(task, variant)


def register() -> None:
    """Register the plain set and the world-model variants' sets."""
    register_examples(PLAIN_SET, "household", _texts(_household, household.PLAIN))
    register_examples(f"{PLAIN_SET}:reflact", "household", authors.household_reflact_example)
    for variant in QUERY_VARIANTS:  # their ReflAct examples that open with a query
        register_examples(f"{PLAIN_SET}:reflact:{variant}", "household",
                          _texts(_reflact, variant))  # fmt: skip
    register_instructions(PLAIN_SET, "household", authors.household_instruction)
    register_instructions(PLAIN_SET, "scienceworld", authors.scienceworld_instruction)
    for variant, mode in QUERY_VARIANTS.items():
        name = f"worldmodel:{variant}"
        register_examples(name, "household", _texts(_household, mode))
        register_examples(name, "scienceworld", _texts(_scienceworld, variant))


_MADE: dict[tuple[object, str], Callable[[str], str | None]] = {}


def _texts(fn: Callable[[str, str], str | None], first: str) -> Callable[[str], str | None]:
    """One function per (reader, mode) for all of a process's registrations, so registering
    again is a no-op."""
    return _MADE.setdefault((fn, first), partial(fn, first))


__all__ = ["PLAIN_SET", "QUERY_VARIANTS", "register"]
