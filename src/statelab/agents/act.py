"""``act``: the model replies with the action (seed 000's acting agent)."""

from __future__ import annotations

from dataclasses import replace

from statelab.agents._parse import parse_action
from statelab.agents._prompting import complete_past_reasoning
from statelab.core import (
    LLM,
    Agent,
    Call,
    Completion,
    ConfigError,
    Decision,
    GenParams,
    StepContext,
    Usage,
)
from statelab.state.prompt import messages

PREFIX = "Action: "


class ActAgent(Agent):
    """One model call per step.

    ``decode``: ``grammar`` constrains generation to ``Action: <admissible>`` (backends that
    can), ``logprob`` scores every admissible action and takes the most likely, ``free`` lets
    the model write and parses the reply; ``auto`` takes ``grammar`` where the backend
    supports it and ``free`` elsewhere.
    """

    name = "act"
    tags = frozenset({"needs-model"})

    def __init__(self, params: GenParams, decode: str = "auto") -> None:
        if decode not in ("auto", "grammar", "logprob", "free"):
            raise ConfigError(f"decode {decode!r}; allowed: auto, grammar, logprob, free")
        self.params = params
        self.decode = decode

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        prompt = ctx.prompt
        if llm is None:
            raise ConfigError("agent 'act' needs a model")
        msgs = messages(prompt)
        mode = self.decode
        if mode == "auto":
            mode = "grammar" if llm.constrained and prompt.actions else "free"
        if mode == "logprob" and prompt.actions:
            conts = [PREFIX + a for a in prompt.actions]
            scores = await llm.score(msgs, conts)
            best = max(range(len(conts)), key=lambda i: scores[i])
            usage = Usage(sum(llm.count_tokens(c) for c in conts), 0)
            completion = Completion(conts[best], usage=usage, logprobs=list(scores),
                                    decoding="logprob")  # fmt: skip
            return Decision(prompt.actions[best], conts[best], [Call("act", msgs, completion)])
        params = replace(self.params, seed=prompt.seed, stop=("\n",))
        if mode == "grammar" and prompt.actions:
            params = replace(params, choices=prompt.actions, choice_prefix=PREFIX)
        calls = await complete_past_reasoning(llm, msgs, params)
        reply = calls[-1].completion.text
        action, parsed = parse_action(reply, prompt.actions)
        return Decision(action, reply, calls, parsed=parsed)
