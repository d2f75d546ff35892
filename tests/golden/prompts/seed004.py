"""Golden prompts of seed 004's agents as the authors lay them out (``react:/seed004``,
``reflact:/seed004``): the first prompt on the first household test game under every world
model variant, with the golden scripted model. ``python -m tests.golden.prompts.seed004``
rewrites ``seed004.json`` and the readable ``seed004.txt``; ``test_seed004_prompts.py``
checks that nothing changed and what every prompt holds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.golden._golden import GoldenLLM
from tests.golden.prompts.record import readable

from statelab.run.config import Params, RunSpec, resolve_format
from statelab.run.episode import run_episode

HERE = Path(__file__).parent
FIXTURE = HERE / "seed004.json"
READABLE = HERE / "seed004.txt"
SEED = 100_000
ENV = "household"
VARIANTS = ("none", "memory", "belief", "belief-noprob", "walle", "bbwm")
CASES = [("react:/seed004", v) for v in VARIANTS] + [("reflact:/seed004", "belief")]


def first_prompt(agent: str, worldmodel: str, constrained: bool = False) -> Any:
    spec = RunSpec.make(
        env=ENV,
        model="golden:free",
        agent=agent,
        worldmodel=worldmodel,
        format=resolve_format(ENV, "default"),
        params=Params().model_dump(),
        max_steps=2,
    )
    ep = asyncio.run(run_episode(spec, SEED, GoldenLLM(constrained=constrained)))
    for step in ep.trajectory:
        if step.calls:
            return step.calls[0]["messages"]
    return None


def key(agent: str, worldmodel: str) -> str:
    return f"{ENV}|{agent}|{worldmodel}"


def main() -> None:
    data = {key(a, w): first_prompt(a, w) for a, w in CASES}
    FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    READABLE.write_text(readable(data))
    print(f"{len(data)} prompts in {FIXTURE}")


if __name__ == "__main__":
    main()
