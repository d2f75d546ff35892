"""Seed 002's runner as its authors wrote it (issue 15, items 2, 5, 6): strict parse, no
action list, one running transcript, stop after repeated outputs or at a call limit, ReAct's
original format."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from statelab.agents import make_agent
from statelab.agents._anchor import ANCHOR, Limits, Options, strict_action
from statelab.core import LLM, Completion, ConfigError, GenParams, Message, Usage
from statelab.run.config import Sampling
from statelab.run.episode import run_episode
from statelab.run.spec import RunSpec


class FnLLM(LLM):
    """Replies with ``fn(messages, n)``; records every request."""

    model_id = "fn"
    constrained = False
    vision = False
    max_concurrency = 1

    def __init__(self, fn: Callable[[list[Message], int], str]) -> None:
        self.fn = fn
        self.seen: list[list[Message]] = []

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.seen.append(messages)
        return Completion(self.fn(messages, len(self.seen)), usage=Usage(1, 1))

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        return [0.0] * len(continuations)

    def count_tokens(self, text: str) -> int:
        return 1


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("goal: x\naction: put apple 1 in/on table 1", "move apple 1 to table 1"),
        ("thought: t\naction: put apple 1 in fridge 1", "move apple 1 to fridge 1"),
        ("action: put mug 2 on shelf 1\n", "move mug 2 to shelf 1"),
        ("action: go to x\naction: go to cabinet 2", "go to cabinet 2"),  # the last one
        ("Action: look", "Action: look"),  # case matters: the whole reply goes
        (">go to desk 1", "go to desk 1"),
        ("action: Take Apple 1 from table 1.", "Take Apple 1 from table 1."),  # as written
        ("action: put apple 1 into fridge 1", "put apple 1 into fridge 1"),  # no into
    ],
)
def test_strict_action(reply: str, action: str) -> None:
    assert strict_action(reply) == action


def parse_options(parts: list[str]) -> Options:
    """The anchor options the registry parses ``stateact:all/<parts>`` into."""
    return make_agent("/".join(["stateact:all", *parts])).options


def test_options() -> None:
    assert parse_options(["anchor"]) == ANCHOR
    assert Options(True, False, True, 5, 100, 16_000) == ANCHOR
    assert parse_options(["nolist", "calls=7"]) == Options(listed=False, calls=7)
    assert parse_options(["anchor", "chars=8000"]) == Options(True, False, True, 5, 100, 8000)
    for bad in (["loose"], ["calls=0"], ["repeats=x"], ["strict", "strict"]):
        with pytest.raises(ConfigError):
            parse_options(bad)
    agent = make_agent("stateact:goal+state/json/anchor")
    assert agent.options == ANCHOR and agent.variant.state_format == "json"
    with pytest.raises(ConfigError):
        make_agent("stateact:all/xml")


def test_limits() -> None:
    lim = Limits(Options(repeats=5))
    said = [lim.see("a") for _ in range(6)]
    assert said[:5] == [None] * 5 and said[5] == "the same output 6 times in a row"
    lim = Limits(Options(repeats=5))
    assert [lim.see(x) for x in "aaaaabaaaaa"] == [None] * 11  # broken by the "b"
    lim = Limits(Options(calls=3))
    assert [lim.see(str(i)) for i in range(3)] == [None, None, "reached the model-call limit (3)"]


def _spec(env: str, agent: str, max_steps: int = 20) -> RunSpec:
    return RunSpec.make(
        env=env,
        model="fn",
        agent=agent,
        history="full",
        format="default",
        grounding="none",
        params=Sampling().model_dump(),
        max_steps=max_steps,
    )


def test_anchor_episode_stops_after_repeats_one_transcript_no_list() -> None:
    llm = FnLLM(lambda m, n: "goal: g\nthought: t\naction: look")
    ep = asyncio.run(run_episode(_spec("household", "stateact:all/anchor"), 0, llm))
    # outputs 1-5 went to the env; the 6th (5th repetition) ended the episode unsent
    assert ep.steps == 5 and len(ep.trajectory) == 5 and len(llm.seen) == 6
    assert ep.trajectory[-1].meta["stop"] == "the same output 6 times in a row"
    assert ep.agent_calls == 6 and [s.action for s in ep.trajectory] == ["look"] * 5
    for msgs in llm.seen:
        assert len(msgs) == 1 and msgs[0]["role"] == "user"  # one running transcript
        text = msgs[0]["content"]
        assert "Available actions" not in text and "Past trajectory" not in text
        assert "Your task is to:" in text.split("Here is the task.")[-1]
    last = llm.seen[-1][0]["content"].split("Here is the task.")[-1]
    # the examples' format: observation, blank line, ">" + turn, blank line, observation ...
    assert last.count(">goal: g\nthought: t\naction: look") == 5


def test_anchor_call_limit() -> None:
    llm = FnLLM(lambda m, n: f"thought: {n}\naction: look")
    ep = asyncio.run(run_episode(_spec("household", "stateact:thought/anchor/calls=4"), 0, llm))
    assert len(llm.seen) == 4 and ep.steps == 3
    assert ep.trajectory[-1].meta["stop"] == "reached the model-call limit (4)"


def test_react_original() -> None:
    script = ["think: the candle may be on the countertop", "go to countertop 1", "look"]
    llm = FnLLM(lambda m, n: script[(n - 1) % 3])
    ep = asyncio.run(run_episode(_spec("household", "react:original/anchor", 2), 0, llm))
    first = ep.trajectory[0]
    assert [c["kind"] for c in first.calls] == ["think", "act"]
    assert first.action == "go to countertop 1" and first.valid
    assert first.reply == "think: the candle may be on the countertop\ngo to countertop 1"
    text = llm.seen[1][0]["content"]
    assert text.endswith("> think: the candle may be on the countertop\nOK.")
    # the examples are in the same format
    assert "\nOK.\n> " in text.split("Here is the task.")[0]


def test_json_react_the_anchors_jsonreact() -> None:
    """StateAct's ``jsonreact`` (version 1): each output one JSON object, a thought answered
    ``OK.``, the action read from the object (or the text after ``"action": "``), the
    examples ReAct's with every turn rewritten as its object."""
    from statelab.agents.react import json_action, json_examples

    assert json_action('{\n"action": "go to desk 1"\n}') == "go to desk 1"
    assert json_action('{"action": "open drawer 2", "x": }') == "open drawer 2"  # not JSON
    assert json_action("go to desk 1") == "go to desk 1"  # no key: the whole output
    assert json_examples("obs\n> think: find it\nOK.\n> go to desk 1\nOn the desk 1.") == (
        'obs\n\n>{\n"think": "find it"\n}\n\nOK.\n\n>{\n"action": "go to desk 1"\n}\n\n'
        "On the desk 1."
    )
    script = [
        '{\n"think": "the candle may be on the countertop"\n}',
        '```json\n{\n"action": "go to countertop 1"\n}\n```',
        '{"action": "look"',
    ]
    llm = FnLLM(lambda m, n: script[(n - 1) % 3])
    agent = make_agent("react:jsonreact/anchor")
    assert agent.label == "ReAct (JSON, the anchor's jsonreact) [anchor]"
    ep = asyncio.run(run_episode(_spec("household", "react:jsonreact/anchor", 2), 0, llm))
    first, second = ep.trajectory
    assert [c["kind"] for c in first.calls] == ["think", "act"]
    assert first.action == "go to countertop 1" and first.valid
    assert second.action == "look" and ep.agent_calls == 3  # think, act; act (brace added)
    text = llm.seen[1][0]["content"]
    assert text.endswith('>{\n"think": "the candle may be on the countertop"\n}\n\nOK.')
    head = text.split("Here is the task.")[0]
    assert '\n\nOK.\n\n>{\n"action": "' in head and "> think:" not in head
