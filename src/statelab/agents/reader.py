"""``reader``: seed 003's reader of a constant-context agent (Appendix B).

From the goal, the written state and the current observation (the prompt's view: the run's
history rendering, then the current observation) it picks one of the *labelled* admissible
commands by likelihood: every option ``"<n>. <command>"`` is scored as the reply
(``LLM.score``), the scores are normalised over the options, and the most likely one is
taken (ties: the first listed). It writes nothing: no sampling, so a decision is a function
of the prompt. On an env that lists no admissible commands it writes the command instead
(greedy, one line, the ``act`` prompt), the only way a reader can act there.

The step's ``meta["logprobs"]`` holds the normalised log-probability of every admissible
command, so the decision loss of seed 003 (the reader's NLL of a*, with a* from the
privileged view) can be read off a stored step or a replay without scoring again.
"""

from __future__ import annotations

import math

from statelab.agents._parse import parse_action
from statelab.core import (
    LLM,
    Agent,
    Call,
    Completion,
    ConfigError,
    Decision,
    GenParams,
    Message,
    Prompt,
    StepContext,
    Usage,
)
from statelab.state.prompt import messages

INSTRUCTION = "Reply with the number and the text of the best next command."


def options(actions: tuple[str, ...]) -> list[str]:
    """The labelled options, as listed and as scored: ``"1. go north"``."""
    return [f"{i}. {a}" for i, a in enumerate(actions, start=1)]


def reader_messages(prompt: Prompt) -> list[Message]:
    """[manual] ; goal, state and current observation, the labelled commands."""
    assert prompt.actions
    listed = "\n".join(options(prompt.actions))
    user = f"Goal: {prompt.goal}\n\n{prompt.view}\n\nCommands:\n{listed}\n\n{INSTRUCTION}"
    return [{"role": "system", "content": prompt.manual}, {"role": "user", "content": user}]


def normalise(scores: list[float]) -> list[float]:
    """Log-probabilities over the options (a log-softmax of the scores)."""
    top = max(scores)
    log_z = top + math.log(sum(math.exp(s - top) for s in scores))
    return [s - log_z for s in scores]


class ReaderAgent(Agent):
    """Chooses among labelled admissible commands by the model's likelihood."""

    name = "reader"
    tags = frozenset({"needs-model"})

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        if llm is None:
            raise ConfigError("agent 'reader' needs a model")
        actions = ctx.admissible
        if not actions:  # an env without a command list: the command is written, greedily
            return await self._free(ctx, llm)
        msgs = reader_messages(ctx.prompt)
        conts = options(actions)
        logprobs = normalise(list(await llm.score(msgs, conts)))
        best = max(range(len(conts)), key=lambda i: (logprobs[i], -i))
        usage = Usage(
            llm.count_tokens(msgs[-1]["content"]) + sum(llm.count_tokens(c) for c in conts), 0
        )
        completion = Completion(conts[best], usage=usage, logprobs=logprobs, decoding="logprob")
        meta = {"logprobs": {a: round(lp, 6) for a, lp in zip(actions, logprobs, strict=True)}}
        return Decision(actions[best], conts[best], [Call("read", msgs, completion)], meta=meta)

    async def _free(self, ctx: StepContext, llm: LLM) -> Decision:
        msgs = messages(ctx.prompt)
        params = GenParams(temperature=0.0, max_tokens=48, stop=("\n",), seed=ctx.prompt.seed)
        completion = await llm.complete(msgs, params)
        action, parsed = parse_action(completion.text, None)
        return Decision(action, completion.text, [Call("read", msgs, completion)], parsed=parsed)
