"""The reader (seed 003): goal, state and current observation in; one of the labelled
admissible commands out, the most likely by the model's scores; normalised log-probabilities
of every command in the step's meta."""

from __future__ import annotations

import asyncio
import math

from statelab.agents import make_agent
from statelab.core import LLM, Completion, GenParams, Prompt, StepContext


class ScoreLLM(LLM):
    """Scores an option by a table keyed on its command text."""

    model_id = "score-table"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table
        self.seen: list[tuple[list, list[str]]] = []

    async def complete(self, messages, params: GenParams) -> Completion:
        return Completion("Action: look")

    async def score(self, messages, continuations):
        self.seen.append((messages, continuations))
        return [self.table[c.split(". ", 1)[1]] for c in continuations]


ACTIONS = ("go north", "open fridge", "take carrot")


def ctx(actions=ACTIONS) -> StepContext:
    prompt = Prompt(
        manual="Cook the meal.",
        view="Your state (at most 64 tokens):\nRecipe: fry the carrot.\n\n"
        "Current observation:\nYou are in the kitchen.",
        actions=actions,
        goal="You are hungry!",
    )
    return StepContext.for_prompt(prompt)


def test_the_reader_takes_the_most_likely_labelled_command():
    llm = ScoreLLM({"go north": -3.0, "open fridge": -0.5, "take carrot": -2.0})
    d = asyncio.run(make_agent("reader").decide(ctx(), llm))
    assert d.action == "open fridge" and d.reply == "2. open fridge"
    messages, conts = llm.seen[0]
    assert conts == ["1. go north", "2. open fridge", "3. take carrot"]
    user = messages[-1]["content"]
    assert user.startswith("Goal: You are hungry!")
    assert "Recipe: fry the carrot." in user and "You are in the kitchen." in user
    assert "1. go north\n2. open fridge\n3. take carrot" in user
    lp = d.meta["logprobs"]
    assert math.isclose(sum(math.exp(v) for v in lp.values()), 1.0, rel_tol=1e-5)
    # log-softmax of (-3, -0.5, -2): the differences are kept
    assert math.isclose(lp["open fridge"] - lp["go north"], 2.5, abs_tol=1e-5)


def test_ties_go_to_the_first_listed_command_and_decisions_repeat():
    llm = ScoreLLM({"go north": -1.0, "open fridge": -1.0, "take carrot": -1.0})
    reader = make_agent("reader")
    a = asyncio.run(reader.decide(ctx(), llm))
    b = asyncio.run(reader.decide(ctx(), llm))
    assert a.action == b.action == "go north"
    assert math.isclose(a.meta["logprobs"]["take carrot"], -math.log(3), abs_tol=1e-5)
