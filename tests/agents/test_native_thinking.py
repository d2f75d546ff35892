"""Seed 001's "thinking" as the model's own reasoning mode (``think=native``), against a real
HTTP server on 127.0.0.1: the request asks for the reasoning mode, the model's reasoning comes
back as a <think> block that is stored, and the tool is read from after it."""

from __future__ import annotations

import asyncio
import json

from tests.llm.test_openai_compat import Reply, Server

from statelab.agents import AGENTS
from statelab.core import GenParams, Prompt, StepContext
from statelab.envs.traffic import TrafficEnv
from statelab.llm.openai_compat import OpenAICompatLLM


def _decide(spelling: str, llm: OpenAICompatLLM):
    env = TrafficEnv()
    obs, _info = env.reset(seed=3)
    agent = AGENTS.build(spelling)
    ctx = StepContext.for_prompt(Prompt(env.manual, "VIEW", obs.admissible, seed=5), obs)
    return asyncio.run(agent.decide(ctx, llm))


def test_native_thinking_asks_the_server_for_its_reasoning_mode_and_reads_after_it():
    server = Server()
    try:
        msg = {"role": "assistant", "reasoning_content": "Tool: DDDDD would crash.", "content": ""}
        msg["content"] = "Tool: RRRRR"
        server.default = Reply(body={"choices": [{"message": msg}]})
        llm = OpenAICompatLLM(server.url, "qwen3")
        d = _decide("tools:think=native", llm)
        body = server.seen[-1].body
        assert body["chat_template_kwargs"] == {"enable_thinking": True}
        assert body["max_tokens"] >= 64 and "stop" not in body
        assert d.action == "RRRRR"  # not the DDDDD inside the reasoning
        assert d.reply.startswith("<think>Tool: DDDDD would crash.</think>")
        assert "thinks" in AGENTS.build("tools:think=native").tags
        # the written-rationale form asks for no reasoning mode: a Qwen3 hybrid (thinks by
        # default) is told not to think, a model that does not think is sent nothing
        _decide("tools:think=64", llm)
        assert server.seen[-1].body["chat_template_kwargs"] == {"enable_thinking": False}
        _decide("tools:think=64", OpenAICompatLLM(server.url, "llama-3.1-8b"))
        assert "chat_template_kwargs" not in server.seen[-1].body
    finally:
        server.close()


def test_native_thinking_option_and_cache_keys():
    o = AGENTS.build("tools:cc+think=native").options
    assert o.native and o.thinking and o.collision_check
    assert "reasoning" not in GenParams().to_dict()  # existing cache keys unchanged
    assert GenParams(reasoning=True).to_dict()["reasoning"] is True
    assert json.dumps(GenParams(reasoning=True).to_dict())
