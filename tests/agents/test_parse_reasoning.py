"""Reasoning models: the act agent reads past a <think> block that its newline stop cut."""

from __future__ import annotations

import asyncio

from statelab.agents import ActAgent
from statelab.agents._prompting import REASONING_MAX_TOKENS
from statelab.core import LLM, Completion, Decision, GenParams, Message, Prompt, StepContext, Usage

ACTIONS = ("go north", "go south", "take key")


class Thinker(LLM):
    """Writes ``full`` and honours stop strings and max_tokens (4 characters a token)."""

    constrained = False

    def __init__(self, full: str) -> None:
        self.full = full
        self.seen: list[GenParams] = []

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.seen.append(params)
        text = self.full
        for stop in params.stop:
            if stop in text:
                text = text[: text.index(stop)]
        text = text[: params.max_tokens * 4]
        return Completion(text, Usage(10, max(1, len(text) // 4)))


REPLY = "<think>\nThe key is south.\n\nSo: south.\n</think>\n\nAction: go south\nAnd then more."


def decide(llm: LLM) -> Decision:
    ctx = StepContext.for_prompt(Prompt("m", "v", ACTIONS, seed=3))
    return asyncio.run(ActAgent(GenParams()).decide(ctx, llm))


def test_act_reads_past_a_cut_reasoning_block() -> None:
    llm = Thinker(REPLY)
    d = decide(llm)
    assert (d.action, d.parsed) == ("go south", True)
    assert [c.kind for c in d.calls] == ["act-cut", "act"]
    assert d.calls[0].completion.text == "<think>"
    # the second request: no stop strings, room to reason, same seed
    first, second = llm.seen
    assert first.stop == ("\n",) and second.stop == ()
    assert second.max_tokens == REASONING_MAX_TOKENS and second.seed == first.seed == 3
    # the stored reply keeps the reasoning
    assert d.reply.startswith("<think>\nThe key is south.")


def test_act_without_reasoning_makes_one_call() -> None:
    llm = Thinker("Action: take key\nmore")
    d = decide(llm)
    assert (d.action, d.parsed) == ("take key", True)
    assert [c.kind for c in d.calls] == ["act"] and len(llm.seen) == 1


def test_act_with_a_closed_block_on_one_line_makes_one_call() -> None:
    llm = Thinker("<think>north? no, south</think>Action: go south")
    d = decide(llm)
    assert d.action == "go south" and len(llm.seen) == 1


def test_reasoning_that_never_ends_reads_nothing() -> None:
    llm = Thinker("<think>\n" + "hmm, go north? " * 2000)
    d = decide(llm)
    assert (d.action, d.parsed) == ("", False)
    assert len(llm.seen) == 2
