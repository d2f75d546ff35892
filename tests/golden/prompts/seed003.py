"""Golden prompts of seed 003: the writer prompt of every ``bounded:<form>:B`` form, the read-time
oracle's compressor prompt and the reader's prompt, on one constructed cooking transition (no
TextWorld needed). ``python -m tests.golden.prompts.seed003`` rewrites ``seed003.json``;
``test_seed003_prompts.py`` checks that nothing changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from statelab.core import Observation, Transition
from statelab.facts import TextFacts
from statelab.state.bounded import FORMS, BoundedWriter, WrittenState
from statelab.state.readtime import ReadTimeOracle

HERE = Path(__file__).parent
FIXTURE = HERE / "seed003.json"
GOAL = "You are hungry! Let's cook a delicious meal. Check the cookbook in the kitchen."
TEXT = "You open the fridge, revealing a carrot and a red potato.\n\nYou are carrying nothing."
ADMISSIBLE = ("close fridge", "examine cookbook", "go north", "take carrot from fridge")
STATE = "The kitchen has a fridge and a cookbook. Exits: north to the corridor."


class _Words:
    """A token counter (one per word) standing in for a model."""

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def observation() -> Observation:
    return Observation(TEXT, TextFacts("You are carrying nothing."), ADMISSIBLE, GOAL, TEXT)


def prompts() -> dict[str, Any]:
    """Every seed-003 prompt, by name, for the constructed transition."""
    obs = observation()
    tr = Transition(3, "open fridge", "", 0.0, obs, False, False)
    out: dict[str, Any] = {}
    for form in sorted(FORMS):
        writer = BoundedWriter(lambda o: o.text, form, 128)
        out[f"writer/{form}"] = writer.messages(WrittenState(GOAL, STATE, 2), tr)
    oracle = ReadTimeOracle(lambda o: o.text, 128, "MANUAL")
    steps = ("1. > go south\nYou are in the kitchen.", "2. > open fridge\n" + TEXT)
    out["readtime/compressor"] = oracle.compressor_messages(GOAL, steps, obs, _Words())
    out["reader"] = oracle.messages_for(STATE, obs)
    return out


def record() -> None:
    FIXTURE.write_text(json.dumps(prompts(), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    record()
