"""The seed-004 layout's conversation: turns alternate, and a query's answer (or a WALL-E
rejection) decided again within one step comes back as an observation."""

from types import SimpleNamespace

from statelab.agents._seed004 import YOUR_TURN, Conversation, format_note
from statelab.core import Prompt


class _World:
    def example(self) -> str | None:
        return "ROOM\nThought: look\nAction: query where is apple\nObservation: fridge 1\n"


def ctx(step: int, view: str, text: str):  # type: ignore[no-untyped-def]
    prompt = Prompt(manual="MANUAL", view=view, actions=("go to fridge 1",), goal="find apple")
    obs = SimpleNamespace(text=text, goal="find apple")
    return SimpleNamespace(prompt=prompt, observation=obs, step=step, world=_World(), env="")


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
