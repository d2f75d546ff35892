"""Seed 004's authors' prompt texts (skumar-ml/belief-world-models; ``SOURCE.md`` names each
file's origin), read as they are:

- the ALFWorld instructions, one per turn (``react``, ``reflact``) and world-model variant:
  :func:`household_instruction` (``"reflact:memory"`` -> ``alfworld_reflact_wm_det_inst.txt``);
- the ScienceWorld instructions likewise: :func:`scienceworld_instruction` (``"react:walle"``
  -> ``sciworld_react_walle_oracle_inst.txt``; their WALL-E is the parser oracle); they wrote
  none for Belief-NoProb on ScienceWorld (None: the lab's instruction);
- the ALFWorld ReflAct examples, one per task type and world-model variant (their
  ``alfworld_reflact_icl.json``; ``alfworld_reflact_wm_icl.json`` for Belief and BB-WM,
  ``alfworld_reflact_wm_no_prob_icl.json`` for Belief-NoProb, opening with a query):
  :func:`household_reflact_example`, the text their ``prompt_with_icl`` writes of one example
  (the first user turn and each reply on a line of its own, each observation followed by a
  blank line).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent
#: world-model variant -> the part of the authors' file name after the turn
VARIANT_FILES = {"none": "", "memory": "_wm_det", "belief": "_wm", "belief-noprob": "_wm_no_prob",
                 "walle": "_walle", "bbwm": "_walle_wm"}  # fmt: skip
#: the same for their ScienceWorld files (``sciworld_<turn><part>_inst.txt``)
SCIWORLD_FILES = {"none": "", "memory": "_wm_det", "belief": "_wm", "walle": "_walle_oracle",
                  "bbwm": "_walle_oracle_wm"}  # fmt: skip
#: the authors' task types (``tasks/alfworld.py``, ``PREFIXES``), matched as prefixes of ours
TASK_TYPES = ("pick_and_place", "pick_clean_then_place", "pick_heat_then_place",
              "pick_cool_then_place", "look_at_obj", "pick_two_obj")  # fmt: skip


def instruction_file(turn: str, variant: str) -> str | None:
    """The authors' ALFWorld instruction file of ``turn`` under ``variant`` (None: none)."""
    if turn not in ("react", "reflact") or variant not in VARIANT_FILES:
        return None
    if turn == "react" and variant == "none":
        return "alfworld_inst.txt"
    return f"alfworld_{turn}{VARIANT_FILES[variant]}_inst.txt"


def sciworld_instruction_file(turn: str, variant: str) -> str | None:
    """The authors' ScienceWorld instruction file of ``turn`` under ``variant`` (None: none)."""
    if turn not in ("react", "reflact") or variant not in SCIWORLD_FILES:
        return None
    return f"sciworld_{turn}{SCIWORLD_FILES[variant]}_inst.txt"


def _read(name: str | None) -> str | None:
    return None if name is None else (HERE / "instructions" / name).read_text(encoding="utf-8")


@cache
def household_instruction(key: str) -> str | None:
    """The authors' ALFWorld instruction for ``<turn>:<variant>``, as its file holds it."""
    turn, _, variant = key.partition(":")
    return _read(instruction_file(turn, variant))


@cache
def scienceworld_instruction(key: str) -> str | None:
    """The authors' ScienceWorld instruction for ``<turn>:<variant>``, as its file holds it."""
    turn, _, variant = key.partition(":")
    return _read(sciworld_instruction_file(turn, variant))


#: world-model variant -> their ALFWorld ReflAct example file (``prompt/icl_examples/``; the
#: configs' ``icl_path``: BB-WM's is Belief's)
REFLACT_ICL = {"none": "alfworld_reflact_icl.json", "memory": "alfworld_reflact_icl.json",
               "walle": "alfworld_reflact_icl.json", "belief": "alfworld_reflact_wm_icl.json",
               "bbwm": "alfworld_reflact_wm_icl.json",
               "belief-noprob": "alfworld_reflact_wm_no_prob_icl.json"}  # fmt: skip


@cache
def _reflact_icl(name: str = "alfworld_reflact_icl.json") -> dict[str, list[list[dict[str, str]]]]:
    data: dict[str, list[list[dict[str, str]]]] = json.loads(
        (HERE / "icl" / name).read_text(encoding="utf-8")
    )
    return data


def authors_task_type(task: str) -> str | None:
    """The authors' name of our household task type (theirs is a prefix of ours)."""
    return next((t for t in TASK_TYPES if task.startswith(t)), None)


def example_text(messages: list[dict[str, str]]) -> str:
    """One example's messages as the authors' template writes them into the prompt."""
    out = []
    for j, m in enumerate(messages):
        end = "\n" if j == 0 or m["role"] == "assistant" else "\n\n"
        out.append(m["content"] + end)
    return "".join(out)


def household_reflact_example(task: str, variant: str = "none") -> str | None:
    """The authors' ReflAct example of the household task type ``task`` under the world-model
    variant ``variant`` (Belief, BB-WM, Belief-NoProb: theirs opening with a query)."""
    kind = authors_task_type(task)
    if kind is None or variant not in REFLACT_ICL:
        return None
    return example_text(_reflact_icl(REFLACT_ICL[variant])[kind][0])


__all__ = ["REFLACT_ICL", "authors_task_type", "example_text", "household_instruction",
           "household_reflact_example", "instruction_file", "scienceworld_instruction",
           "sciworld_instruction_file"]  # fmt: skip
