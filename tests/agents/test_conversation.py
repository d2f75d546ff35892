"""The conversation prompt layout (``prompt=conversation``): turns alternate, a query's answer
(or a WALL-E rejection) decided again within one step comes back as an observation, and the
example is the world model's, else the named example set's text of the context's task."""

from types import SimpleNamespace

import pytest

from statelab.agents import example_sets as sets
from statelab.agents import make_agent
from statelab.agents._conversation import (
    FORMAT_ERROR_REPLY,
    YOUR_TURN,
    Conversation,
    decide,
    format_note,
)
from statelab.core import ConfigError, Prompt


class _World:
    def example(self) -> str | None:
        return "ROOM\nThought: look\nAction: query where is apple\nObservation: fridge 1\n"


class _NoWorld:
    def example(self) -> str | None:
        return None


def ctx(step: int, view: str, text: str, world=None, family="", task=None):  # type: ignore[no-untyped-def]
    prompt = Prompt(manual="MANUAL", view=view, actions=("go to fridge 1",), goal="find apple")
    obs = SimpleNamespace(text=text, goal="find apple")
    return SimpleNamespace(prompt=prompt, observation=obs, step=step, world=world or _World(),
                           env="", task_family=family, task=task)  # fmt: skip


KEYS = ("thought", "action")


def test_turns_alternate_and_queries_come_back_as_observations():
    c = Conversation()
    first = c.messages(ctx(0, "V0", "You are in a room.\nYour task is to: find apple."), KEYS)
    assert [m["role"] for m in first] == ["user"]
    head = first[0]["content"]
    assert head.startswith("MANUAL\n\n" + format_note(KEYS))
    assert "Here is an example.\n\nROOM\n" in head
    assert head.endswith(f"{YOUR_TURN}\nYou are in a room.\nYour task is to: find apple.")
    c.said("Thought: ask\nAction: query where is apple")
    note = "\n\nYou took action: query where is apple\nObservation: fridge 1 (0.50)"
    again = c.messages(ctx(0, "V0" + note, "You are in a room."), KEYS)
    assert [m["role"] for m in again] == ["user", "assistant", "user"]
    assert again[1]["content"] == "Thought: ask\nAction: query where is apple"
    assert again[2]["content"] == "Observation: fridge 1 (0.50)"
    c.said("Action: go to fridge 1")
    nxt = c.messages(ctx(1, "V1", "The fridge 1 is closed."), KEYS)
    assert [m["role"] for m in nxt] == ["user", "assistant", "user", "assistant", "user"]
    assert nxt[3]["content"] == "Action: go to fridge 1"
    assert nxt[4]["content"] == "Observation: The fridge 1 is closed."


def test_reflact_examples_reflect():
    c = Conversation()
    head = c.messages(ctx(0, "V", "Room. Your task is to: find apple."), ("reflection", "action"))
    assert "\nReflection: look\n" in head[0]["content"] and "Thought:" not in head[0]["content"]


def _toy(task: str) -> str | None:
    text = f"TOY EXAMPLE OF {task}\nThought: look\nAction: go to fridge 1\n"
    return text if task == "a" else None


def test_the_example_is_the_named_sets_text_of_the_contexts_task_family_and_task():
    sets.register_examples("toy-set", "toyworld", _toy)
    sets.register_examples("toy-set", "toyworld", _toy)  # the same again: nothing changes
    try:
        with pytest.raises(ValueError, match="already has texts"):
            sets.register_examples("toy-set", "toyworld", lambda t: None)
        assert "toy-set" in sets.example_set_names()
        first = ctx(0, "V", "Room.", _NoWorld(), "toyworld", "a")
        head = Conversation().messages(first, KEYS, "toy-set")[0]["content"]
        assert "Here is an example.\n\nTOY EXAMPLE OF a\n" in head
        for family, task, name in (
            ("toyworld", "b", "toy-set"),
            ("other", "a", "toy-set"),
            ("toyworld", None, "toy-set"),
            ("toyworld", "a", None),
        ):
            other = ctx(0, "V", "Room.", _NoWorld(), family, task)
            assert (
                "Here is an example."
                not in Conversation().messages(other, KEYS, name)[0]["content"]
            )
        # the world model's example comes first
        offered = Conversation().messages(ctx(0, "V", "Room.", None, "toyworld", "a"), KEYS,
                                          "toy-set")[0]["content"]  # fmt: skip
        assert "ROOM\n" in offered and "TOY EXAMPLE" not in offered
        agent = make_agent("react:/prompt=conversation/examples=toy-set")
        assert agent.options.conversation and agent.options.examples == "toy-set"
    finally:
        sets._SETS.pop("toy-set")


def test_an_example_set_is_honoured_only_by_the_conversation_and_must_be_registered():
    with pytest.raises(ConfigError, match="needs prompt=conversation"):
        make_agent("react:/examples=toy-set")
    with pytest.raises(ConfigError, match="unknown example set 'nope'"):
        make_agent("reflact:/prompt=conversation/examples=nope")
    assert make_agent("stateact:/prompt=conversation").options.examples is None


class _Free:
    """A backend that does not constrain decoding, replying with the texts it is given."""

    constrained = False

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)

    async def complete(self, messages, params):  # type: ignore[no-untyped-def]
        from statelab.core import Completion

        return Completion(text=self.replies.pop(0))


def test_a_reply_with_no_action_line_is_a_format_error_answered_in_the_authors_words():
    import asyncio

    agent = make_agent("react:/prompt=conversation")
    agent.reset()
    llm = _Free("Thought: I should look around first.", "Thought: now\nAction: go to fridge 1")
    got = asyncio.run(decide(agent, ctx(0, "V0", "Room. Your task is to: find apple."), llm))
    assert got.action == "" and not got.parsed  # the empty action: a format error, not played
    nxt = asyncio.run(decide(agent, ctx(1, "V1", "Nothing happens."), llm))
    assert nxt.action == "go to fridge 1"
    msgs = nxt.calls[-1].messages
    assert msgs[-2]["content"] == "Thought: I should look around first."
    assert msgs[-1]["content"] == f"Observation: {FORMAT_ERROR_REPLY}"
