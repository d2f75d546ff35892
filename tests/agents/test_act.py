import asyncio

from statelab.agents import ActAgent, messages, parse_action
from statelab.core import GenParams, Prompt, StepContext
from statelab.envs.hanoi import ACTIONS
from statelab.llm import ScriptedLLM


def test_parse_exact_prefixed_and_case_insensitive():
    assert parse_action("Action: " + ACTIONS[1], ACTIONS) == (ACTIONS[1], True)
    assert parse_action("action: " + ACTIONS[1].upper() + ".", ACTIONS) == (ACTIONS[1], True)
    assert parse_action("Thought: easy.\nAction: " + ACTIONS[3], ACTIONS) == (ACTIONS[3], True)


def test_parse_action_named_inside_prose():
    reply = f"I will now {ACTIONS[4].lower()} because it is free."
    assert parse_action(reply, ACTIONS) == (ACTIONS[4], True)


def test_parse_index_and_failures():
    assert parse_action("Action: 2", ACTIONS) == (ACTIONS[1], True)
    assert parse_action("Action: fly away", ACTIONS) == ("fly away", False)
    assert parse_action("", ACTIONS) == ("", False)
    assert parse_action("Action: 9", ACTIONS) == ("9", False)


def test_prompt_order_manual_view_actions():
    p = Prompt(manual="MANUAL", view="VIEW", actions=("a", "b"), seed=3)
    msgs = messages(p)
    assert msgs[0] == {"role": "system", "content": "MANUAL"}
    user = msgs[1]["content"]
    assert user.index("VIEW") < user.index("Available actions:\n- a\n- b") < user.index("Action:")


def test_static_actions_join_the_static_head():
    p = Prompt(manual="MANUAL", view="VIEW", actions=("a", "b"), static_actions=True)
    system, user = (m["content"] for m in messages(p))
    assert system == "MANUAL\n\nAvailable actions:\n- a\n- b"
    assert user.startswith("VIEW") and "Available actions" not in user


def test_logprob_decoding_takes_the_best_scored_action():
    llm = ScriptedLLM([ACTIONS[2]])
    agent = ActAgent(GenParams(), decode="logprob")
    d = asyncio.run(agent.decide(StepContext.for_prompt(Prompt("m", "v", ACTIONS)), llm))
    assert d.action == ACTIONS[2] and d.parsed
    assert d.calls[0].completion.logprobs is not None


def test_free_decoding_passes_the_step_seed():
    llm = ScriptedLLM(["Action: " + ACTIONS[0]])
    seen = []
    orig = llm.complete

    async def spy(msgs, params):
        seen.append(params)
        return await orig(msgs, params)

    llm.complete = spy  # type: ignore[method-assign]
    d = asyncio.run(
        ActAgent(GenParams(temperature=0.2)).decide(
            StepContext.for_prompt(Prompt("m", "v", ACTIONS, seed=7)), llm
        )
    )
    assert d.action == ACTIONS[0] and seen[0].seed == 7 and seen[0].choices is None
