"""Named few-shot example sets: texts of solved episodes, keyed by task family and task.

A set is a name (``examples=<name>`` of the conversation prompt layout,
:mod:`statelab.agents._conversation`) and, per task family (``Env.task_family``:
``household``, ``scienceworld``, ...), a function from the episode's task
(``Env.current_task``: a household task type, a ScienceWorld task) to the example's text, or
None where the set holds none. The lab registers no set; plugin packages fill the registry
(:func:`register_examples`, called from their ``statelab.plugins`` entry point), and every
read loads the plugins first.

A world model offers the agent its own example from the set named after its variant
(``worldmodel:<variant>``, e.g. ``worldmodel:belief``), where one is registered.

A set may also carry its authors' instructions (:func:`register_instructions`): per task
family, a function from ``<turn>:<world model variant>`` (``react:none``, ``reflact:memory``,
...) to the instruction text that opens the prompt in place of the lab's (the env's manual,
the components' notes and the turn format), None where the authors wrote none.
"""

from __future__ import annotations

from collections.abc import Callable

from statelab.core import load_plugins

#: a set's texts of one task family: task -> text (None: none for that task)
Texts = Callable[[str], "str | None"]

_SETS: dict[str, dict[str, Texts]] = {}


def register_examples(name: str, family: str, texts: Texts) -> None:
    """Register ``texts`` as the example set ``name``'s texts of task family ``family``.
    Registering the same function again is a no-op; another one for the same set and
    family is refused."""
    held = _SETS.setdefault(name, {})
    if held.get(family, texts) is not texts:
        raise ValueError(f"example set {name!r} already has texts for task family {family!r}")
    held[family] = texts


def example_set_names() -> list[str]:
    """Every registered example set, sorted (plugins loaded)."""
    load_plugins()
    return sorted(_SETS)


def example_text(name: str, family: str, task: str | None) -> str | None:
    """The text set ``name`` holds for ``task`` of task family ``family``; None when the set,
    the family or the task has none (plugins loaded)."""
    load_plugins()
    texts = _SETS.get(name, {}).get(family)
    return None if texts is None or task is None else texts(task)


_INSTRUCTIONS: dict[str, dict[str, Texts]] = {}


def register_instructions(name: str, family: str, texts: Texts) -> None:
    """Register ``texts`` (``<turn>:<variant>`` -> instruction) as the instructions of the
    example set ``name`` on task family ``family`` (the same function again: a no-op)."""
    held = _INSTRUCTIONS.setdefault(name, {})
    if held.get(family, texts) is not texts:
        raise ValueError(f"example set {name!r} already has instructions for {family!r}")
    held[family] = texts


def instruction_text(name: str, family: str, key: str) -> str | None:
    """The instruction set ``name`` holds for ``key`` (``<turn>:<variant>``) on task family
    ``family``; None when it holds none (plugins loaded)."""
    load_plugins()
    texts = _INSTRUCTIONS.get(name, {}).get(family)
    return None if texts is None else texts(key)


__all__ = [
    "Texts",
    "example_set_names",
    "example_text",
    "instruction_text",
    "register_examples",
    "register_instructions",
]
