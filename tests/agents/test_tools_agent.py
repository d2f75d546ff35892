"""``tools`` (with the collision check, thinking, descriptions) and ``plan:5`` agents."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from statelab.agents import make_agent
from statelab.agents._tool_options import Options
from statelab.agents._tool_replies import parse_plan, parse_tool
from statelab.agents.tools import PlanAgent, ToolsAgent
from statelab.core import (
    Completion,
    ConfigError,
    GenParams,
    Observation,
    Prompt,
    StepContext,
    Usage,
)
from statelab.envs.traffic import TrafficEnv
from statelab.envs.traffic_world import TrafficState, replay
from statelab.facts import TrafficFacts
from statelab.llm import ScriptedLLM
from statelab.tools.describe import exact_text
from statelab.tools.library import Geometry, LibrarySpec, ToolLibrary
from statelab.tools.quantize import Quantization, tool_library


def parse_options(kind: str, arg: str | None) -> Options:
    """The options the registry parses ``kind[:arg]`` into (the agent's own)."""
    return make_agent(kind if arg is None else f"{kind}:{arg}").options

TOOLS = tool_library(("DRDRD", "RRRRR", "DDDDD", "DRRRR", "DDRDD"))
LIBRARY = ToolLibrary(
    Geometry(LibrarySpec(), (), Quantization((), (), (), 0.0), TOOLS),
    {t: exact_text(t) + "\nstrategy: s" for t in TOOLS},
    "short",
)


class Constrained(ScriptedLLM):
    """A constrained backend: answers ``prefix + the choice the script names`` (else the
    first choice) and records the parameters of every request."""

    constrained = True

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.params: list[GenParams] = []

    async def complete(self, messages, params):
        self.params.append(params)
        c = await super().complete(messages, params)
        if params.choices:
            pick = next((x for x in params.choices if x == c.text.strip()), params.choices[0])
            return Completion(params.choice_prefix + pick, usage=Usage(10, 3))
        return Completion(c.text, usage=Usage(10, 7))


def facts(cars, agent=(10, 10)) -> TrafficFacts:
    return TrafficFacts(25, agent, (24, 24), tuple(cars), 10)


def decide(agent, llm, f: TrafficFacts, seed: int = 0):
    obs = Observation(text="", facts=f, admissible=None, goal="reach T")
    prompt = Prompt("MANUAL", "VIEW", None, goal="reach T", seed=seed)
    return asyncio.run(agent.decide(StepContext.for_prompt(prompt, obs), llm))


def meta(decision) -> dict:
    assert decision.meta
    return decision.meta


# -- spellings -------------------------------------------------------------------------------
def test_spellings():
    assert parse_options("tools", None) == Options("tools")
    o = parse_options("tools", "cc+think")
    assert o.collision_check and o.thinking and o.description_form == "short"
    assert parse_options("tools", "cc+long").description_form == "long"
    assert parse_options("tools", "short").description_form == "short"
    assert parse_options("tools", None).description_form == "long"
    o = parse_options("tools", "k=7+n=1000+seed=3+cars=10+think=64")
    assert (o.k, o.n, o.seed, o.cars, o.think_tokens) == (7, 1000, 3, 10, 64)
    assert parse_options("plan", "5+think") == Options("plan", thinking=True)
    assert parse_options("plan", None).k == 5
    for bad in ("zoom", "k=x", "k=0", "cc=1", "cc+cc", "short+long"):
        with pytest.raises(ConfigError, match="tools"):
            parse_options("tools", bad)
    with pytest.raises(ConfigError):
        parse_options("plan", "cc")
    assert isinstance(make_agent("tools:cc+short+think", GenParams()), ToolsAgent)
    assert isinstance(make_agent("plan:5", GenParams()), PlanAgent)


def test_table1_columns_come_from_the_agents_tags():
    from statelab.agents import AGENTS

    seed001 = {"uses-tools", "plans-moves", "thinks", "collision-check"}
    assert AGENTS.build("act").tags & seed001 == set()
    assert AGENTS.build("plan:5+think").tags & seed001 == {"plans-moves", "thinks"}
    assert AGENTS.build("tools:cc").tags & seed001 == {"uses-tools", "collision-check"}
    assert AGENTS.build("tools:cc+think").tags & seed001 == {
        "uses-tools",
        "collision-check",
        "thinks",
    }


# -- parsing ---------------------------------------------------------------------------------
def test_parse_tool_names():
    names = ["RRRRR", "DDDDD", "WWWWW"]
    assert parse_tool("Tool: RRRRR", names) == "RRRRR"
    assert parse_tool("Thought: go down.\ntool: `ddddd`.", names) == "DDDDD"
    assert parse_tool("**Tool:** WWWWW (wait)", names) == "WWWWW"
    assert parse_tool("Tool: 2", names) == "DDDDD"
    assert parse_tool("I would pick RRRRR because the road is clear.", names) == "RRRRR"
    assert parse_tool("Tool: the one going right, RRRRR", names) == "RRRRR"
    assert parse_tool("RRRRR or DDDDD, hard to say", names) is None
    assert parse_tool("Tool: DRDRD", names) is None  # not offered
    assert parse_tool("", names) is None


def test_parse_plan_good_malformed_missing():
    assert parse_plan("Plan: DRDRD") == "DRDRD"
    assert parse_plan("Thought: clear below.\nPlan: d r d r d") == "DRDRD"
    assert parse_plan("plan: down, right, down, wait, wait") == "DRDWW"
    assert parse_plan("RRDDW") == "RRDDW"
    assert parse_plan("I think RRDDW is the safest.") == "RRDDW"
    assert parse_plan("Plan: DRX") is None
    assert parse_plan("Plan: DRDR") is None
    assert parse_plan("Plan: DRDRDR") is None
    assert parse_plan("Plan: down right up") is None
    assert parse_plan("") is None
    assert parse_plan("Plan: RRR", k=3) == "RRR"


def test_plan_agent_free_replies():
    agent = PlanAgent(GenParams())
    d = decide(agent, ScriptedLLM(["Plan: DRDRD"]), facts([]))
    assert (d.action, d.parsed, len(d.calls)) == ("DRDRD", True, 1)
    d = decide(agent, ScriptedLLM(["Plan: DRX"]), facts([]))
    assert (d.action, d.parsed) == ("DRX", False)
    d = decide(agent, ScriptedLLM([""]), facts([]))
    assert (d.action, d.parsed) == ("", False)
    assert meta(d) == {"model_call": True, "thinking": False, "generated": 1}


def test_plan_agent_is_constrained_to_every_plan():
    llm = Constrained(["RRDDW"])
    d = decide(PlanAgent(GenParams()), llm, facts([]))
    (p,) = llm.params
    assert p.choice_prefix == "Plan: " and p.choices is not None and len(p.choices) == 5**5
    assert d.action == "RRDDW" and d.parsed


# -- the collision check ---------------------------------------------------------------------
def test_collision_check_never_offers_a_tool_that_hits_a_visible_car():
    agent = ToolsAgent(GenParams(), Options("tools", collision_check=True), LIBRARY)
    env = TrafficEnv(n_cars=120)
    checked = 0
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        llm = Constrained(["RRRRR"])
        d = decide(agent, llm, obs.facts)
        offered = meta(d)["offered"]
        f = obs.facts
        state = TrafficState(f.size, f.agent, f.target, f.cars, f.half)
        for tool in TOOLS:
            hit = replay(state, tool).collision_at is not None
            assert (tool in offered) == (not hit)
        if len(offered) > 1:
            (p,) = llm.params
            assert p.choices == tuple(offered)
            user = llm.seen[0][1]["content"]
            shown = {t for t in TOOLS if f"tool {t} " in user}
            assert shown == set(offered)
            checked += 1
        assert d.action in (offered or ["WWWWW"])
    assert checked >= 3


def test_single_survivor_is_taken_without_a_model_call():
    f = facts([(11, 10), (11, 9), (12, 11)])
    assert LIBRARY.safe(f) == ["RRRRR"]
    llm = ScriptedLLM(["Tool: DDDDD"])
    agent = ToolsAgent(GenParams(), Options("tools", collision_check=True), LIBRARY)
    d = decide(agent, llm, f)
    assert d.action == "RRRRR" and d.calls == [] and llm.calls == 0
    assert meta(d)["model_call"] is False


def test_no_survivor_waits_without_a_model_call():
    f = facts([(11, 10), (11, 9), (11, 11)])
    assert LIBRARY.safe(f) == []
    llm = ScriptedLLM(["Tool: RRRRR"])
    agent = ToolsAgent(GenParams(), Options("tools", collision_check=True), LIBRARY)
    d = decide(agent, llm, f)
    assert d.action == "WWWWW" and d.calls == [] and llm.calls == 0
    assert meta(d)["model_call"] is False and meta(d)["offered"] == []


def test_without_collision_check_every_tool_is_offered_with_its_description():
    llm = ScriptedLLM(["Tool: DDDDD"])
    agent = ToolsAgent(GenParams(), Options("tools"), LIBRARY)
    d = decide(agent, llm, facts([(11, 10)]))
    assert d.action == "DDDDD" and llm.calls == 1
    system = llm.seen[0][0]["content"]
    assert system.startswith("MANUAL\n\nEach tool is a list")
    assert all(f"tool {t} " in system for t in TOOLS)
    assert meta(d)["offered"] == list(TOOLS)


def test_unreadable_tool_choice_waits():
    agent = ToolsAgent(GenParams(), Options("tools"), LIBRARY)
    d = decide(agent, ScriptedLLM(["I like turtles"]), facts([]))
    assert (d.action, d.parsed) == ("WWWWW", False)


# -- thinking --------------------------------------------------------------------------------
def test_thinking_on_a_constrained_backend_is_rationale_then_choice():
    llm = Constrained(["Thought: the target is down-right.", "DRDRD"])
    agent = ToolsAgent(GenParams(), parse_options("tools", "think=99"), LIBRARY)
    d = decide(agent, llm, facts([]), seed=7)
    first, second = llm.params
    assert first.choices is None and first.max_tokens == 99 and first.stop == ("\nTool:",)
    assert second.choices == TOOLS and second.choice_prefix == "Tool: " and second.seed == 7
    assert d.action == "DRDRD" and [c.kind for c in d.calls] == ["tools-think", "tools"]
    assert d.reply.startswith("Thought: the target") and d.reply.endswith("Tool: DRDRD")
    assert meta(d)["thinking"] is True and meta(d)["generated"] == 7 + 3
    assert llm.seen[1][2] == {"role": "assistant", "content": "Thought: the target is down-right."}


def test_thinking_on_a_free_backend_is_one_call():
    llm = ScriptedLLM(["Thought: cars above, go down.\nTool: DDDDD"])
    agent = ToolsAgent(GenParams(), parse_options("tools", "think"), LIBRARY)
    d = decide(agent, llm, facts([]))
    assert d.action == "DDDDD" and llm.calls == 1 and "First think" in llm.seen[0][1]["content"]
    assert meta(d)["thinking"] is True


def test_thinking_off_is_one_constrained_call():
    llm = Constrained(["RRRRR"])
    d = decide(ToolsAgent(GenParams(), Options("tools"), LIBRARY), llm, facts([]))
    (p,) = llm.params
    assert p.choices == TOOLS and d.action == "RRRRR" and meta(d)["thinking"] is False


def test_library_is_built_lazily_from_the_observation(tmp_path, monkeypatch):
    from statelab.tools.library import clear_memo

    monkeypatch.setenv("STATELAB_CACHE", str(tmp_path))
    clear_memo()
    llm = ScriptedLLM(["strategy: fine", "Tool: WWWWW"] * 20)
    agent = make_agent("tools:n=30+k=3+seed=2", GenParams())
    f = replace(facts([]), agent=(0, 0))
    d = decide(agent, llm, f)
    assert isinstance(agent, ToolsAgent) and agent.library is not None
    assert agent.library.geometry.spec == LibrarySpec(n=30, k=3, seed=2)
    assert meta(d)["library"] == agent.library.key and d.calls  # one acting call recorded
    clear_memo()


def test_tools_agent_refuses_other_envs():
    agent = ToolsAgent(GenParams(), Options("tools"))
    obs = Observation(text="", facts=object(), admissible=None, goal="")
    with pytest.raises(ConfigError, match="traffic"):
        asyncio.run(
            agent.decide(StepContext.for_prompt(Prompt("m", "v", None), obs), ScriptedLLM(["x"]))
        )


# -- the anchor's JSON decision and the safe fallback ------------------------------------------
def test_fallback_never_chooses_a_tool_the_collision_check_removed():
    """Unreadable replies, replies naming an unsafe tool, and JSON whose chosen_tool is
    unsafe: the action is always a safe tool (seed 001's code picks a random safe one), in
    both decision forms; WWWWW only when it is safe or nothing is."""
    import json as _json

    env = TrafficEnv(n_cars=120)
    cases = 0
    for form in (Options("tools", collision_check=True), Options("tools", True, json=True)):
        agent = ToolsAgent(GenParams(), form, LIBRARY)
        for seed in range(40):
            obs, _ = env.reset(seed=seed)
            safe = LIBRARY.safe(obs.facts)
            if len(safe) < 2:
                continue
            unsafe = [t for t in LIBRARY.names if t not in safe]
            bad = unsafe[0] if unsafe else "XXXXX"
            replies = ("I like turtles", f"Tool: {bad}", _json.dumps({"chosen_tool": bad}))
            for reply in replies:
                d = decide(agent, ScriptedLLM([reply]), obs.facts, seed=seed)
                assert d.action in safe, (seed, reply, d.action, safe)
                cases += 1
    assert cases >= 30


def test_json_decision_sends_the_schema_of_the_safe_tools():
    import json as _json

    env = TrafficEnv(n_cars=120)
    for seed in range(40):
        obs, _ = env.reset(seed=seed)
        safe = LIBRARY.safe(obs.facts)
        if len(safe) >= 2:
            break
    agent = make_agent("tools:cc+json")
    agent.library = LIBRARY
    pick = safe[-1]
    reply = _json.dumps({"target_relative_to_agent_summary": "below right", "chosen_tool": pick})
    llm = Constrained([reply])
    d = decide(agent, llm, obs.facts)
    assert d.action == pick and d.parsed
    (p,) = llm.params
    schema = _json.loads(p.json_schema)
    assert schema["properties"]["chosen_tool"]["enum"] == safe
    assert list(schema["required"])[-1] == "chosen_tool" and len(schema["required"]) == 5
    assert p.choices is None and '"chosen_tool": one of' in llm.seen[0][1]["content"]


def test_anchor_plan_rules_waits_on_an_unreadable_plan_and_explains_closing_speeds():
    from statelab.agents.tools import KINEMATICS

    agent = make_agent("plan:5+wait+kin", GenParams())
    llm = ScriptedLLM(["no idea"])
    d = decide(agent, llm, facts([]))
    assert (d.action, d.parsed) == ("WWWWW", False)  # time passes, cars move
    assert KINEMATICS in llm.seen[0][0]["content"] and "2k rows below" in KINEMATICS
    plain = decide(make_agent("plan:5", GenParams()), ScriptedLLM(["no idea"]), facts([]))
    assert plain.action == "no idea"  # statelab's rule: the env refuses it, nothing moves
    tools = ToolsAgent(GenParams(), parse_options("tools", "short+kin"), LIBRARY)
    llm = ScriptedLLM(["Tool: DDDDD"])
    decide(tools, llm, facts([]))
    assert KINEMATICS in llm.seen[0][0]["content"]
