import asyncio

import pytest

from statelab.agents import AGENTS, AdaptAgent, StateActAgent, make_agent
from statelab.agents.adapt import CONTROLS, Node, control_of, parse_plan
from statelab.core import ConfigError, Decision, GenParams, Prompt, StepContext
from statelab.llm import ScriptedLLM

PROMPT = Prompt("MANUAL", "VIEW", None, goal="craft a sign", seed=3)
FAIL = "thought: I cannot\naction: task failed"
DONE = "thought: got it\naction: task completed"


def plan(*steps, op="AND"):
    lines = [f"Step {i}: {s}" for i, s in enumerate(steps, 1)]
    order = f" {op} ".join(f"Step {i}" for i in range(1, len(steps) + 1))
    return "\n".join([*lines, f"Execution order: ({order})"])


def act(a):
    return f"thought: go on\naction: {a}"


def decide(agent, llm, prompt=PROMPT, **kw):
    info = kw.pop("info", {})
    ctx = StepContext.for_prompt(prompt, last_valid=info.get("valid", True), **kw)
    return asyncio.run(agent.decide(ctx, llm))


def user_texts(llm):
    return [m[-1]["content"] for m in llm.seen]


def parse_spelling(arg: str | None) -> tuple[str, int, int]:
    args = AGENTS.parse("adapt" if arg is None else f"adapt:{arg}")
    return args.base, args.d_max, args.steps


def test_spelling():
    assert parse_spelling(None) == ("react", 2, 40)
    assert parse_spelling("stateact") == ("stateact", 2, 40)
    assert parse_spelling("stateact:goal+thought/json@3,20") == (
        "stateact:goal+thought/json",
        3,
        20,
    )
    agent = make_agent("adapt:stateact:goal+state@3", GenParams())
    assert isinstance(agent, AdaptAgent) and isinstance(agent.base, StateActAgent)
    assert (agent.d_max, agent.budget, agent.base.variant.fields) == (3, 40, ("goal", "state"))
    for bad in ("adapt:react@0", "adapt:react@x", "adapt:react@2,0", "adapt:adapt", "adapt:nope"):
        with pytest.raises(ConfigError):
            make_agent(bad, GenParams())


def test_plan_parsing():
    p = parse_plan("# Think: ...\nStep 1: get 2 logs\nStep 2: craft planks\n"
                   "Execution Order: (Step 1 AND Step 2)")  # fmt: skip
    assert p.subtasks == ("get 2 logs", "craft planks") and p.op == "AND"
    assert parse_plan(plan("a", "b", op="OR")).op == "OR"
    assert parse_plan("Step 1: a\nStep 2: b").op == "AND"  # no order line: AND
    assert parse_plan("nothing useful").subtasks == ()


def test_controls_from_action_or_from_a_none_action():
    assert control_of(Decision("task completed", DONE)) == CONTROLS[0]
    assert control_of(Decision("Task failed!", "Task failed!")) == CONTROLS[1]
    said = "thought: I now have it. Task Completed!\naction: None"
    assert control_of(Decision("None", said)) == CONTROLS[0]
    assert (
        control_of(Decision("get 1 stick", "thought: task completed soon\naction: get 1 stick"))
        is None
    )


def test_no_failure_no_decomposition():
    llm = ScriptedLLM([act("get 1 stick")])
    agent = make_agent("adapt:react", GenParams())
    d = decide(agent, llm)
    assert d.action == "get 1 stick" and [c.kind for c in d.calls] == ["act"]
    assert "Current task (depth 1 of at most 2): craft a sign" in user_texts(llm)[0]
    assert agent.history == []


def test_failure_asks_for_a_plan_and_runs_the_first_subtask():
    llm = ScriptedLLM([FAIL, plan("get 2 logs", "craft planks"), act("get 2 logs")])
    agent = make_agent("adapt:react", GenParams())
    d = decide(agent, llm)
    assert d.action == "get 2 logs"
    assert [c.kind for c in d.calls] == ["act", "plan", "act"]
    plan_prompt, executor = user_texts(llm)[1:]
    assert 'The task "craft a sign" was not accomplished' in plan_prompt
    assert "Current task (depth 2 of at most 2): get 2 logs" in executor
    assert [n.task for n in agent.stack] == ["craft a sign", "get 2 logs"]
    # the sub-task completes: the next decision runs the second sub-task
    llm.replies += [DONE, act("craft 4 planks")]
    d2 = decide(agent, llm)
    assert d2.action == "craft 4 planks" and [n.task for n in agent.stack][-1] == "craft planks"


@pytest.mark.parametrize("d_max", [1, 2, 3])
def test_recursion_never_deeper_than_d_max(d_max):
    # every executor fails and every plan proposes sub-tasks: depth is the only brake
    llm = ScriptedLLM([FAIL, plan("a", "b"), FAIL, plan("a1", "a2"), FAIL, act("look")])
    agent = make_agent(f"adapt:react@{d_max}", GenParams())
    d = decide(agent, llm)
    kinds = [c.kind for c in d.calls]
    assert kinds.count("plan") == d_max - 1
    assert agent.max_depth_seen == d_max
    assert max(depth for depth, _t, _o in agent.history) == d_max
    assert not agent.stack  # the tree is spent (AND: a failed first sub-task fails its parent)
    assert d.calls[-1].kind == "act"  # then the base agent carries on with the whole task
    assert "Current task" not in user_texts(llm)[-1]


def test_or_tries_the_next_alternative_and_and_stops_at_a_failure():
    llm = ScriptedLLM([FAIL, plan("x", "y", op="OR"), FAIL, act("try y")])
    agent = make_agent("adapt:react", GenParams())
    assert decide(agent, llm).action == "try y"
    assert agent.stack[-1].task == "y"
    llm2 = ScriptedLLM([FAIL, plan("x", "y"), FAIL, act("whole task")])
    agent2 = make_agent("adapt:react", GenParams())
    assert decide(agent2, llm2).action == "whole task"
    assert "Current task" not in user_texts(llm2)[-1]  # y never ran


def test_root_claim_of_success_is_a_failure_while_the_episode_runs():
    llm = ScriptedLLM([DONE, plan("a"), act("do a")])
    agent = make_agent("adapt:react", GenParams())
    assert decide(agent, llm).action == "do a"
    assert agent.history == [(1, "craft a sign", "failure")]


def test_step_budget_and_patience_end_an_attempt():
    llm = ScriptedLLM([act("s1"), act("s2"), plan("a"), act("do a")])
    agent = make_agent("adapt:react@2,2", GenParams())
    assert [decide(agent, llm).action for _ in range(3)] == ["s1", "s2", "do a"]
    assert agent.history[0] == (1, "craft a sign", "failure")
    llm2 = ScriptedLLM([act("bad"), plan("a"), act("do a")])
    agent2 = AdaptAgent(make_agent("react", GenParams()), GenParams(), patience=1)
    decide(agent2, llm2)
    assert decide(agent2, llm2, info={"valid": False}).action == "do a"


def test_admissible_lists_gain_the_controls_and_reset_forgets():
    agent = make_agent("adapt:stateact:thought", GenParams())
    prompt = Prompt("M", "V", ("go to x",), goal="g")
    seen = agent.sub_prompt(prompt, Node(prompt.goal, 1))
    assert seen.actions == ("go to x", *CONTROLS)
    decide(agent, ScriptedLLM([FAIL, plan("a"), act("go to x")]), prompt)
    assert agent.stack
    agent.reset()
    assert not agent.stack and not agent.started and agent.history == []


def test_a_whole_episode_records_plan_calls_in_its_steps():
    from statelab.envs.hanoi import ACTIONS as MOVES
    from statelab.run.episode import run_episode
    from statelab.run.spec import RunSpec

    spec = RunSpec.make(
        env="hanoi", model="scripted:x", agent="adapt:react@2,2", format="tagged-list", max_steps=4
    )
    moves = [act(MOVES[i]) for i in (1, 0, 3)]
    llm = ScriptedLLM([*moves[:2], plan("move disk 0", "move disk 1"), moves[2], DONE, moves[0]])
    ep = asyncio.run(run_episode(spec, 0, llm))
    kinds = [[c["kind"] for c in s.calls] for s in ep.trajectory]
    assert kinds == [["act"], ["act"], ["plan", "act"], ["act", "act"]]
    assert [s.action for s in ep.trajectory] == [MOVES[1], MOVES[0], MOVES[3], MOVES[1]]
    assert ep.agent_calls == 6
