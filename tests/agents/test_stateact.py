import asyncio
import json
from dataclasses import replace

import pytest

from statelab.agents import AGENTS, StateActAgent, Variant, make_agent
from statelab.agents._stateact_variants import (
    ROW_LABELS,
    eight_variants,
    state_keys_for,
    variant_of,
)
from statelab.agents._turn import choose_action, parse_turn, render_turn, truncate
from statelab.core import (
    LLM,
    Completion,
    ConfigError,
    GenParams,
    Observation,
    Prompt,
    StepContext,
    Usage,
)
from statelab.facts import PegFacts, TextFacts
from statelab.llm import ScriptedLLM

ACTIONS = ("go to fridge 1", "go to table 1", "take apple 1 from table 1")
ROOM = Observation("You arrive at table 1.", TextFacts("t", "table 1", ()), ACTIONS, "put apple")
CRAFT = Observation("Got 1 stick", TextFacts("Got 1 stick", None, ("1 stick",)), None, "craft")
HANOI = Observation("rods", PegFacts(((2, 1, 0), (), ())), None, "stack on C")
PROMPT = Prompt("MANUAL", "VIEW", ACTIONS, goal="put apple in fridge", seed=5)

#: the eight rows of seed 002's Table 6 / 8: spelling -> fields
EIGHT = {
    "stateact:none": (),
    "react": ("thought",),
    "stateact:state": ("state",),
    "stateact:state+thought": ("state", "thought"),
    "stateact:goal": ("goal",),
    "stateact:goal+thought": ("goal", "thought"),
    "stateact:goal+state": ("goal", "state"),
    "stateact": ("goal", "state", "thought"),
}
ROOM_KEYS = ("locations visited", "current location", "current inventory")


def keys_of(fields, state_keys=ROOM_KEYS):
    out = ["goal"] if "goal" in fields else []
    out += list(state_keys) if "state" in fields else []
    out += ["thought"] if "thought" in fields else []
    return (*out, "action")


def run(agent, prompt, llm, obs=ROOM, **kw):
    return asyncio.run(agent.decide(StepContext.for_prompt(prompt, obs, **kw), llm))


class Spy(ScriptedLLM):
    def __init__(self, replies):
        super().__init__(replies)
        self.params = []

    async def complete(self, messages, params):
        self.params.append(params)
        return await super().complete(messages, params)


class FakeConstrained(LLM):
    """Reasoning from a script; constrained calls pick the scripted choice (else the first)."""

    constrained = True
    model_id = "fake-constrained"

    def __init__(self, reasoning, pick):
        self.reasoning, self.pick, self.requests = reasoning, pick, []

    async def complete(self, messages, params):
        self.requests.append((messages, params))
        if params.choices:
            choice = self.pick if self.pick in params.choices else params.choices[0]
            return Completion(params.choice_prefix + choice, Usage(10, 3))
        return Completion(self.reasoning, Usage(10, 20))


# -- the spelling grammar: eight rows, one axis value each ----------------------------------
def test_eight_rows_are_eight_spellings_of_one_agent():
    agents = {s: make_agent(s, GenParams()) for s in EIGHT}
    assert all(type(a) is StateActAgent for a in agents.values())
    assert {s: a.variant.fields for s, a in agents.items()} == EIGHT
    assert [v.fields for v in eight_variants()] == list(ROW_LABELS)
    assert {v.label for v in eight_variants()} == set(ROW_LABELS.values())
    assert len({a.variant for a in agents.values()}) == 8


def parse_variant(arg: str | None) -> Variant:
    """The variant the registry parses ``stateact[:arg]`` into."""
    return variant_of(AGENTS.parse("stateact" if arg is None else f"stateact:{arg}"))


def test_spelling_grammar_is_order_free_and_round_trips():
    assert parse_variant("thought+goal").fields == ("goal", "thought")
    assert parse_variant("") == parse_variant("none") == Variant(())
    assert parse_variant(None) == parse_variant("all") == parse_variant("goal+state+thought")
    v = parse_variant("state+goal/json")
    assert (v.fields, v.state_format, v.spelling) == (("goal", "state"), "json", v.spelling)
    assert parse_variant(v.spelling.partition(":")[2]) == v
    assert make_agent("react:json", GenParams()).variant == Variant(("thought",), "json")
    assert make_agent("stateact:", GenParams()).variant.fields == ()


@pytest.mark.parametrize(
    "bad", ["stateact:goal+goal", "stateact:mood", "stateact:goal/yaml", "react:xml"]
)
def test_bad_spellings_are_one_line_errors(bad):
    with pytest.raises(ConfigError, match="agent"):
        make_agent(bad, GenParams())


def test_react_is_exactly_stateact_thought():
    react, same = make_agent("react", GenParams()), make_agent("stateact:thought", GenParams())
    assert react.variant == same.variant
    llm_a, llm_b = Spy(["x"]), Spy(["x"])
    run(react, PROMPT, llm_a)
    run(same, PROMPT, llm_b)
    assert llm_a.seen == llm_b.seen and llm_a.params == llm_b.params
    assert "react" in AGENTS and "stateact" in AGENTS


# -- the prompt asks for exactly the variant's fields; replies parse back -------------------
@pytest.mark.parametrize("spelling", list(EIGHT))
def test_each_row_asks_for_and_parses_its_fields(spelling):
    agent = make_agent(spelling, GenParams())
    keys = keys_of(EIGHT[spelling])
    values = {k: f"v-{k}" for k in keys} | {"action": ACTIONS[2]}
    reply = render_turn(values, keys)
    assert reply.startswith(">") and reply.count("\n") == len(keys) - 1
    llm = Spy([reply + "\n\nextra text the model went on with"])
    d = run(agent, PROMPT, llm)
    system, user = (m["content"] for m in llm.seen[0])
    spec = system.split("in this order")[1]
    asked = [ln.lstrip(">").split(": <")[0] for ln in spec.splitlines() if ": <" in ln]
    assert tuple(asked) == keys
    assert user.startswith("VIEW") and user.rstrip().endswith("starting with '>'.")
    assert (d.action, d.parsed) == (ACTIONS[2], True)
    assert d.reply == reply  # cut at the action line
    turn = parse_turn(d.reply)
    assert turn.values == {k: v for k, v in values.items() if k != "action"}
    assert llm.params[0].stop == (("\n\n",) if len(keys) > 1 else ("\n",))


def test_state_expands_by_facts_kind():
    assert state_keys_for(ROOM.facts) == ROOM_KEYS
    assert state_keys_for(CRAFT.facts) == ("current inventory",)
    assert state_keys_for(HANOI.facts) == ("current state",)
    for obs, want in ((CRAFT, ("current inventory",)), (HANOI, ("current state",))):
        agent = make_agent("stateact", GenParams())
        llm = Spy(["x"])
        run(agent, replace(PROMPT, actions=None), llm, obs=obs)
        spec = llm.seen[0][0]["content"]
        for k in ("locations visited", "current location", "current inventory", "current state"):
            assert (f"\n{k}: <" in spec) == (k in want)
        assert agent.keys() == ("goal", *want, "thought", "action")


def test_empty_values_print_none_and_turns_start_with_marker():
    text = render_turn({"goal": "g", "thought": ""}, ("goal", "current inventory", "thought",
                                                       "action"))  # fmt: skip
    assert text == ">goal: g\ncurrent inventory: None\nthought: None\naction: None"


# -- parsing: good, malformed, missing ------------------------------------------------------
def test_good_malformed_and_missing_action_never_raise():
    agent = make_agent("stateact", GenParams())
    good = ">goal: g\nthought: t\nAction: Take apple 1 from table 1."
    assert run(agent, PROMPT, ScriptedLLM([good])).action == ACTIONS[2]
    bad = run(make_agent("stateact", GenParams()), PROMPT, ScriptedLLM([">goal: g\naction: fly"]))
    assert (bad.action, bad.parsed) == ("fly", False)
    missing = run(
        make_agent("stateact", GenParams()), PROMPT, ScriptedLLM([">goal: g\nthought: hm"])
    )
    assert (missing.action, missing.parsed) == ("thought: hm", False)
    bare = run(make_agent("stateact:none", GenParams()), PROMPT, ScriptedLLM(["go to table 1"]))
    assert (bare.action, bare.parsed) == (ACTIONS[1], True)  # format ignored: read as act does
    free = run(make_agent("react", GenParams()), replace(PROMPT, actions=None),
               ScriptedLLM(["thought: t\naction: get 2 oak logs\nthought: more"]))  # fmt: skip
    assert (free.action, free.parsed, free.reply) == (
        "get 2 oak logs",
        True,
        "thought: t\naction: get 2 oak logs",
    )
    for spelling in ("stateact", "stateact:all/json"):
        for junk in [" ", "\n\n", ">", "action:", '{"action": ', "{{{", "None", ">{}"]:
            d = run(make_agent(spelling, GenParams()), PROMPT, ScriptedLLM([junk]))
            assert isinstance(d.action, str) and not d.parsed


def test_multiline_thought_and_aliases():
    turn = parse_turn("> Goal: g\nthink: first\nsecond line\nInventory: 1 stick\naction: inventory")
    assert turn.values == {
        "goal": "g",
        "thought": "first second line",
        "current inventory": "1 stick",
    }
    assert turn.action == "inventory"
    assert choose_action("x", turn, None) == ("inventory", True)


# -- JSON vs text ---------------------------------------------------------------------------
def test_json_variant_writes_and_parses_json():
    keys = ("goal", *ROOM_KEYS, "thought", "action")
    values = {"goal": "put apple", "current location": "table 1", "action": ACTIONS[0]}
    text = render_turn(values, keys, "json")
    data = json.loads(text[1:])
    assert list(data) == ["goal", "locations_visited", "current_location", "current_inventory",
                          "thought", "action"]  # fmt: skip
    assert data["current_inventory"] is None and data["action"] == ACTIONS[0]
    agent = make_agent("stateact:goal+state+thought/json", GenParams())
    llm = Spy([text + "\nmore"])
    d = run(agent, PROMPT, llm)
    assert (d.action, d.parsed) == (ACTIONS[0], True)
    assert json.loads(d.reply[1:]) == data
    assert "one JSON object" in llm.seen[0][0]["content"]
    # the seed's own JSON (Appendix I.1: None, a missing comma) still parses
    seed_style = (
        '>{"goal": "g",\n"current_inventory": None,\n"thought": "t"\n"action": "go to fridge 1"\n}'
    )
    turn = parse_turn(seed_style, "json")
    assert turn.action == "go to fridge 1" and turn.values["current inventory"] == ""
    assert truncate(seed_style + " trailing", "json").endswith("}")


def test_text_and_json_variants_share_fields():
    t, j = parse_variant("goal+thought"), parse_variant("goal+thought/json")
    assert t.keys(ROOM_KEYS) == j.keys(ROOM_KEYS) and t.state_format != j.state_format


# -- constrained backends: reasoning free, then the action by constrained choice -------------
def test_constrained_backend_makes_two_recorded_calls():
    llm = FakeConstrained(">goal: put apple\nthought: the apple is here", ACTIONS[2])
    d = run(make_agent("stateact", GenParams()), PROMPT, llm)
    assert [c.kind for c in d.calls] == ["reason", "act"]
    (m1, p1), (m2, p2) = llm.requests
    assert p1.choices is None and "\naction:" in p1.stop
    assert p2.choices == ACTIONS and p2.choice_prefix == "action: "
    assert m2[: len(m1)] == m1 and m2[len(m1)]["role"] == "assistant"
    assert (d.action, d.parsed) == (ACTIONS[2], True)
    assert d.reply == ">goal: put apple\nthought: the apple is here\naction: " + ACTIONS[2]


def test_constrained_act_only_is_one_call_and_free_without_a_list():
    llm = FakeConstrained("unused", ACTIONS[1])
    d = run(make_agent("stateact:none", GenParams()), PROMPT, llm)
    assert [c.kind for c in d.calls] == ["act"] and d.reply == ">action: " + ACTIONS[1]
    llm2 = FakeConstrained(">thought: t\naction: get 1 stick", "x")
    d2 = run(make_agent("react", GenParams()), replace(PROMPT, actions=None), llm2, obs=CRAFT)
    assert len(llm2.requests) == 1 and d2.action == "get 1 stick"


def test_constrained_json_assembles_valid_json():
    llm = FakeConstrained('>{"goal": "g",\n"thought": "t",\n', ACTIONS[0])
    d = run(make_agent("stateact:goal+thought/json", GenParams()), PROMPT, llm)
    assert llm.requests[1][1].choice_prefix == '"action": "'
    assert json.loads(d.reply[1:]) == {"goal": "g", "thought": "t", "action": ACTIONS[0]}


def test_reasoning_gets_room_and_the_step_seed():
    llm = Spy([">thought: t\naction: go to table 1"])
    run(make_agent("react", GenParams(max_tokens=64)), PROMPT, llm)
    assert llm.params[0].max_tokens >= 256 and llm.params[0].seed == PROMPT.seed


def test_model_is_required():
    with pytest.raises(ConfigError):
        run(make_agent("stateact", GenParams()), PROMPT, None)


def test_a_whole_episode_keeps_the_turns_in_the_history():
    from statelab.envs.hanoi import ACTIONS as MOVES
    from statelab.run.episode import run_episode
    from statelab.run.spec import RunSpec

    spec = RunSpec.make(
        env="hanoi", model="scripted:x", agent="stateact", format="tagged-list", max_steps=3
    )
    replies = [
        f">goal: stack on C\ncurrent state: all on A\nthought: small first\naction: {MOVES[1]}",
        ">goal: stack on C\ncurrent state: 0 on C\nthought: hm\naction: jump",
        ">goal: stack on C\ncurrent state: 0 on C\nthought: hm",
    ]
    llm = Spy(replies)
    ep = asyncio.run(run_episode(spec, 0, llm))
    assert [s.parsed for s in ep.trajectory] == [True, False, False]
    assert ep.trajectory[0].action == MOVES[1] and ep.trajectory[1].action == "jump"
    last_view = llm.seen[-1][1]["content"]
    assert "current state: 0 on C\nthought: hm\naction: jump" in last_view
    assert "\ncurrent state: <" in llm.seen[0][0]["content"]


def test_constrained_reasoning_that_ran_into_the_action_is_cut_before_it():
    llm = FakeConstrained(">thought: t\naction: go to fridge 1\n", ACTIONS[1])
    d = run(make_agent("react", GenParams()), PROMPT, llm)
    assert d.reply == ">thought: t\naction: " + ACTIONS[1] and d.action == ACTIONS[1]
