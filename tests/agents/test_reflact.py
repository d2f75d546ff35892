import asyncio

from statelab.agents import make_agent
from statelab.core import Prompt, StepContext
from statelab.llm.scripted import ScriptedLLM


def test_reflact_reflects_then_acts():
    agent = make_agent("reflact")
    assert agent.label == "ReflAct" and "thinks" in agent.tags
    prompt = Prompt(manual="m", view="v", actions=("go north", "go south"), goal="g")
    reply = ">reflection: I am at the start; the goal is north.\naction: go north"
    d = asyncio.run(agent.decide(StepContext.for_prompt(prompt), ScriptedLLM([reply], "r")))
    assert d.action == "go north"
    assert d.reply.startswith(">reflection: I am at the start")
    said = str(d.calls[0].messages)
    assert "reflection" in said and "relative to the goal" in said
