"""``asking``: an agent scaffold that asks the world model where the key is, then decides."""

from __future__ import annotations

from dataclasses import replace

from statelab.agents import AGENTS, messages
from statelab.core import (
    LLM,
    Agent,
    BuildContext,
    Call,
    ConfigError,
    Decision,
    GenParams,
    StepContext,
)

NAME = "asking"
QUESTION = "where is the key?"


class AskingAgent(Agent):
    name = NAME
    tags = frozenset({"needs-model"})

    def __init__(self, params: GenParams) -> None:
        self.params = params

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        if llm is None:
            raise ConfigError(f"agent {NAME!r} needs a model")
        answer = await ctx.world.ask(QUESTION)
        prompt = replace(ctx.prompt, view=f"{ctx.prompt.view}\n\nYou asked {QUESTION!r}: {answer}")
        msgs = messages(prompt)
        completion = await llm.complete(msgs, replace(self.params, seed=prompt.seed))
        action = completion.text.strip().removeprefix("Action:").strip()
        return Decision(action, completion.text, [Call("act", msgs, completion)])


@AGENTS.register(NAME, "asking (test plugin)", tags=("needs-model",))
def _factory(arg: str | None, ctx: BuildContext) -> Agent:
    if arg is not None:
        raise ConfigError(f"agent {NAME!r} takes no argument, got '{NAME}:{arg}'")
    return AskingAgent(ctx.params)


def registered() -> bool:
    return NAME in AGENTS


def unregister() -> None:
    AGENTS.unregister(NAME)
