"""Seed 004's first prompts (the conversation layout with seed 004's examples,
``prompt=conversation/examples=seed004``, recorded as ``react:/seed004`` before the layout
was named for what it does; the messages unchanged, the keys respelled) on household: the
first prompt on the first household test game under every world model variant, with the
golden scripted model; each
holds what the authors' holds: one user message with the instruction (the authors' own text
since issue 35: ``test_authors_prompts.py`` compares it with theirs), one example (with a
query and its answer for Belief, BB-WM and Belief-NoProb), the four query forms where the
world model answers queries, the task, and no admissible-action list.

``python seeds/seed004/tests/prompts/test_first_prompts.py`` rewrites ``first_prompts.json``
and the readable ``first_prompts.txt``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tests.golden._golden import GoldenLLM
from tests.golden.prompts.record import readable

from statelab.run.config import Sampling
from statelab.run.episode import run_episode
from statelab.run.spec import RunSpec, resolve_format

HERE = Path(__file__).parent
FIXTURE = HERE / "first_prompts.json"
READABLE = HERE / "first_prompts.txt"
SEED = 100_000
ENV = "household"
VARIANTS = ("none", "memory", "belief", "belief-noprob", "walle", "bbwm")
LAYOUT = "prompt=conversation/examples=seed004"
CASES = [(f"react:/{LAYOUT}", v) for v in VARIANTS] + [(f"reflact:/{LAYOUT}", "belief")]


def first_prompt(agent: str, worldmodel: str, constrained: bool = False) -> Any:
    """The messages of the first model call of the first household test game."""
    spec = RunSpec.make(
        env=ENV,
        model="golden:free",
        agent=agent,
        worldmodel=worldmodel,
        format=resolve_format(ENV, "default"),
        params=Sampling().model_dump(),
        max_steps=2,
    )
    ep = asyncio.run(run_episode(spec, SEED, GoldenLLM(constrained=constrained)))
    for step in ep.trajectory:
        if step.calls:
            return step.calls[0]["messages"]
    return None


def key(agent: str, worldmodel: str) -> str:
    """A case's fixture key (the fixture keeps the spelling it was recorded with)."""
    return f"{ENV}|{agent}|{worldmodel}"


WANT = json.loads(FIXTURE.read_text())
QUERY_EXAMPLE = {"belief", "bbwm", "belief-noprob"}
ANSWERS_QUERIES = {"memory", "belief", "belief-noprob", "bbwm"}
#: the query forms as the authors' instruction lists them
FORMS = ("query where is {obj}", "query what is in {recep}", "query searched {recep}",
         "query state")  # fmt: skip


def test_every_case_is_recorded():
    assert sorted(WANT) == sorted(key(a, w) for a, w in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: key(*c))
def test_first_prompt_is_unchanged_and_laid_out_as_the_authors(case):
    agent, worldmodel = case
    pytest.importorskip("textworld")
    msgs = first_prompt(agent, worldmodel)
    assert msgs == WANT[key(agent, worldmodel)]
    assert [m["role"] for m in msgs] == ["user"]
    text = msgs[0]["content"]
    instruction, rest = text.split("\n---\nHere is an example.\n\n", 1)
    example, task = rest.split("\n---\n\nNow, it's your turn and here is the task.\n", 1)
    assert task.startswith("You are in the middle of a room.") and "Your task is to: " in task
    # no admissible-action list: neither the list's heading nor any concrete command line
    assert "Available actions" not in text and "\n- go to cabinet" not in text
    assert "\n1. go to {recep}\n" in instruction  # the action templates (the authors')
    has_forms = [f in instruction for f in FORMS]
    assert all(has_forms) if worldmodel in ANSWERS_QUERIES else not any(has_forms)
    label = "Reflection" if agent.startswith("reflact") else "Thought"
    assert f"\n{label}: " in example and "\nAction: go to " in example
    if worldmodel in QUERY_EXAMPLE:
        obj = example.split(f"\n{label}: ", 1)[1].split("Action: query where is ", 1)[1]
        obj = obj.split("\n", 1)[0]
        answer = example.split("Action: query where is ", 1)[1].split("\nObservation: ", 1)[1]
        assert answer.startswith(f"{obj} is most likely at: " if worldmodel != "belief-noprob"
                                 else obj)  # fmt: skip
        assert ("(0." in answer.split("\n", 1)[0] or "(1.00)" in answer.split("\n", 1)[0]) == (
            worldmodel != "belief-noprob"
        )
    else:
        assert "query" not in example


class _Recording(GoldenLLM):
    """The golden constrained model, keeping the choices each call was given."""

    def __init__(self) -> None:
        super().__init__(constrained=True)
        self.choices: list[tuple[str, ...]] = []

    async def complete(self, messages, params):  # type: ignore[no-untyped-def]
        self.choices.append(tuple(params.choices or ()))
        return await super().complete(messages, params)


def test_the_action_is_chosen_among_the_admissible_ones_under_constraint():
    """The prompt lists no action, but a constraining backend chooses among the admissible
    actions and the world model's offered queries; the next prompt alternates turns."""
    from statelab.envs.household import HouseholdEnv

    pytest.importorskip("textworld")
    spec = RunSpec.make(env="household", model="golden:constrained", agent=f"react:/{LAYOUT}",
                        worldmodel="belief", format=resolve_format("household", "default"),
                        params=Sampling().model_dump(), max_steps=2)  # fmt: skip
    llm = _Recording()
    ep = asyncio.run(run_episode(spec, 100_000, llm))
    obs, _ = HouseholdEnv().reset(seed=100_000)
    first = ep.trajectory[0]
    assert [c["kind"] for c in first.calls][-2:] == ["reason", "act"]
    offered = llm.choices[1]
    extra = set(offered) - set(obs.admissible)
    assert set(obs.admissible) < set(offered) and "query state" in extra
    assert all(a.startswith("query ") for a in extra)
    assert first.action in offered and not llm.choices[0]
    second = ep.trajectory[1].calls[0]["messages"]
    assert [m["role"] for m in second][:3] == ["user", "assistant", "user"]
    assert second[1]["content"].splitlines()[-1].startswith("Action: ")
    assert second[-1]["content"].startswith("Observation: ")


def main() -> None:
    """Re-record the fixture (a change of behaviour made on purpose)."""
    data = {key(a, w): first_prompt(a, w) for a, w in CASES}
    FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    READABLE.write_text(readable(data))
    print(f"{len(data)} prompts in {FIXTURE}")


if __name__ == "__main__":
    main()
