import asyncio
import json
from typing import Any, ClassVar

import pytest

from statelab.agents import fewshot, make_agent
from statelab.agents._turn import parse_turn
from statelab.core import Env, GenParams, Observation, Prompt, StepContext
from statelab.facts import TextFacts
from statelab.llm import ScriptedLLM

PLACES = ("table 1", "shelf 1", "fridge 1")


class RoomExpert:
    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        p = info["privileged"]
        if p["task_type"] == "visit":
            return "go to shelf 1"
        if "apple" not in p["tracked"]["inventory"]:
            if p["tracked"]["location"] != p["apple"]:
                return f"go to {p['apple']}"
            return f"take apple from {p['apple']}"
        return (
            "go to fridge 1" if p["tracked"]["location"] != "fridge 1" else "put apple in fridge 1"
        )


class Rooms(Env):
    """A tiny ALFWorld-like text env: fetch the apple to the fridge, or visit the shelf."""

    name: ClassVar[str] = "rooms"
    max_steps: ClassVar[int] = 20
    history_len: ClassVar[int] = 20
    facts_type: ClassVar[type] = TextFacts
    default_format: ClassVar[str] = "natural"
    splits: ClassVar[dict[str, range]] = {"train": range(100, 130), "test": range(0, 30)}
    manual = "Interact with a household to solve a task."
    resets: ClassVar[list[int]] = []

    def _reset(self, rng_seed, options):
        Rooms.resets.append(rng_seed)
        self.kind = "fetch" if rng_seed % 2 == 0 else "visit"
        self.apple = PLACES[rng_seed % 2]
        self.loc, self.inv, self.visited, self.won = None, [], [], False
        self.goal = "put an apple in fridge 1" if self.kind == "fetch" else "go to the shelf 1"
        return self._obs(
            f"You are in the middle of a room. Your task is to: {self.goal}."
        ), self._priv()

    def _step(self, action):
        text = "Nothing happens."
        if action.startswith("go to ") and action[6:] in PLACES:
            self.loc = action[6:]
            self.visited.append(self.loc)
            text = f"You arrive at {self.loc}."
        elif action == f"take apple from {self.loc}" and self.loc == self.apple:
            self.inv, self.apple = ["apple"], None
            text = f"You pick up the apple from the {self.loc}."
        elif action == "put apple in fridge 1" and self.loc == "fridge 1" and self.inv:
            self.inv, self.won = [], True
            text = "You move the apple to the fridge 1."
        if self.kind == "visit" and self.loc == "shelf 1":
            self.won = True
        return self._obs(text), float(self.won), self.won, self._priv()

    def _obs(self, text):
        facts = TextFacts(text, self.loc or "middle of the room", tuple(self.inv))
        return Observation(text, facts, None, self.goal)

    def _priv(self):
        tracked = {"location": self.loc, "inventory": list(self.inv), "visited": list(self.visited)}
        return {"privileged": {"tracked": tracked, "task_type": self.kind, "apple": self.apple}}

    def expert(self):
        return RoomExpert()

    def score(self):
        return float(self.won)

    def success(self):
        return self.won


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STATELAB_CACHE", str(tmp_path))
    fewshot._MEMO.clear()
    Rooms.resets.clear()


def test_builder_touches_train_seeds_only():
    traces = fewshot.build_traces(Rooms, per_type=2)
    assert Rooms.resets and all(s in Rooms.splits["train"] for s in Rooms.resets)
    assert not set(Rooms.resets) & set(Rooms.splits["test"])
    by_type = {}
    for t in traces:
        by_type.setdefault(t.task_type, []).append(t)
    assert {k: len(v) for k, v in by_type.items()} == {"fetch": 2, "visit": 2}
    fetch = by_type["fetch"][0]
    assert [s.action for s in fetch.steps][-1] == "put apple in fridge 1"
    assert fetch.steps[0].location is None and fetch.steps[-1].inventory == ["apple"]


def test_no_train_split_no_examples():
    class NoSplits(Rooms):
        splits: ClassVar[dict[str, range]] = {}

    assert fewshot.build_traces(NoSplits) == []
    assert Rooms.resets == []


def test_examples_render_in_the_variants_exact_format():
    traces = fewshot.build_traces(Rooms)
    chosen = fewshot.select(traces, "put an apple in fridge 1", k=2)
    assert [t.task_type for t in chosen] == ["fetch", "fetch"]
    keys = ("goal", "locations visited", "current location", "current inventory", "thought",
            "action")  # fmt: skip
    text = fewshot.render_trace(chosen[0], keys)
    turns = [p for p in text.split("\n\n") if p.startswith(">")]
    assert len(turns) == len(chosen[0].steps)
    first = parse_turn(turns[0])
    assert first.values["goal"] == "put an apple in fridge 1"
    assert (
        first.values["current location"] == "starting location"  # the anchor's name of the start
        and first.values["current inventory"] == "None"
    )
    assert first.values["thought"].startswith("To solve the task")
    last = parse_turn(turns[-1])
    assert last.values["current inventory"] == "apple" and last.action == "put apple in fridge 1"
    # the anchor's convention: "locations visited" includes the current location
    assert last.values["current location"] in last.values["locations visited"].split(", ")
    jtext = fewshot.render_trace(chosen[0], ("goal", "action"), "json")
    jturns = [json.loads(p[1:]) for p in jtext.split("\n\n") if p.startswith(">{")]
    assert list(jturns[0]) == ["goal", "action"]


def test_cache_is_written_once_and_reused(tmp_path, monkeypatch):
    monkeypatch.setattr(fewshot, "build_traces", lambda env, **kw: fewshot_build(env, **kw))
    first = fewshot.load_traces("rooms")
    path = fewshot.cache_path("rooms", 2, 30)
    assert path.is_file() and str(path).startswith(str(tmp_path / "fewshot"))
    n = len(Rooms.resets)
    fewshot._MEMO.clear()
    again = fewshot.load_traces("rooms")
    assert len(Rooms.resets) == n  # read from disk: no env was played
    assert [t.seed for t in again] == [t.seed for t in first]


_real_build = fewshot.build_traces


def fewshot_build(env, **kw):
    return _real_build(Rooms, **kw)


def test_agent_puts_examples_in_the_static_head(monkeypatch):
    monkeypatch.setattr(fewshot, "build_traces", lambda env, **kw: fewshot_build(env, **kw))
    agent = make_agent("stateact:goal+state+thought", GenParams())
    env = Rooms()
    obs, _ = env.reset(seed=5)  # a test seed: the agent plays it, the builder never does
    llm = ScriptedLLM([">goal: g\naction: go to fridge 1"])
    prompt = Prompt(env.manual, "VIEW 1", None, goal=obs.goal, seed=1)
    asyncio.run(agent.decide(StepContext.for_prompt(prompt, obs, env="rooms"), llm))
    asyncio.run(
        agent.decide(
            StepContext.for_prompt(Prompt(env.manual, "VIEW 2", None, goal=obs.goal), obs), llm
        )
    )
    heads = [m[0]["content"] for m in llm.seen]
    assert heads[0] == heads[1]  # static: cache-friendly
    head = heads[0]
    assert head.startswith(env.manual) and "Here are 2 examples:" in head
    assert head.index("in this order") < head.index("Here are 2 examples:")
    assert (
        "\n>goal: go to the shelf 1\nlocations visited: None\ncurrent location: starting location"
        in (head)
    )
    assert all(s in Rooms.splits["train"] for s in Rooms.resets if s != 5)
    plain = make_agent("stateact", GenParams())
    asyncio.run(plain.decide(StepContext.for_prompt(prompt, obs), llm))  # no env: no examples
    assert "examples" not in llm.seen[-1][0]["content"]
