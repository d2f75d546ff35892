import asyncio

from statelab.core import GenParams
from statelab.envs.hanoi import ACTIONS, HanoiEnv
from statelab.llm import ScriptedLLM
from statelab.state import compose_view, make_memory, observation_renderer, render


def play(history: str, llm=None, actions=(1, 0, 5), k=30):
    env = HanoiEnv()
    r = observation_renderer("tagged-list")
    obs, info = env.reset(seed=0)
    mem = make_memory(history, r, env.manual, 0, history_len=k, params=GenParams())
    mem.reset(obs, info)
    for a in actions:
        obs, rew, *_x, info = env.step(ACTIONS[a])
        asyncio.run(mem.update(obs, ACTIONS[a], rew, info, llm))
    return env, mem, obs, info


def test_full_history_keeps_every_step_verbatim():
    _, mem, _obs, _ = play("full")
    text = mem.render()
    assert text.startswith("Past trajectory:\nStep 1: You took action: " + ACTIONS[1])
    assert "Step 3: You took action: " + ACTIONS[5] in text
    assert "- C: |bottom, [0], top|" in text  # the observation after step 1


def test_window_keeps_only_last_k():
    _, mem, _, _ = play("window:2")
    text = mem.render()
    assert "Step 1:" not in text and "Step 2:" in text and "Step 3:" in text


def test_summary_replaces_history_in_prompt():
    llm = ScriptedLLM(["A has 2; B has 1.", "Moved disks; C has 0.", "Disk 0 moved to B."])
    _env, mem, obs, _ = play("summary", llm=llm)
    assert mem.render() == "Summary of past actions:\nDisk 0 moved to B."
    view = compose_view(mem.render(), observation_renderer("tagged-list")(obs))
    assert "Step 1" not in view and "Past trajectory" not in view
    assert "Disk 0 moved to B." in view and "Moved disks" not in view
    # one summary call per step; each sees the previous summary and the 25-token instruction
    assert llm.calls == 3
    last = llm.seen[-1][1]["content"]
    assert "Moved disks; C has 0." in last and "at most 25 tokens" in last
    assert ACTIONS[5] in last


def test_summary_calls_are_returned_for_separate_accounting():
    llm = ScriptedLLM(["s"])
    env = HanoiEnv()
    obs, info = env.reset(seed=0)
    mem = make_memory(
        "summary",
        observation_renderer("natural"),
        env.manual,
        0,
        history_len=30,
        params=GenParams(),
    )
    mem.reset(obs, info)
    obs, r, *_x, info = env.step(ACTIONS[1])
    calls = asyncio.run(mem.update(obs, ACTIONS[1], r, info, llm))
    assert [c.kind for c in calls] == ["summary"]
    assert calls[0].completion.usage.input_tokens > 0


def test_oracle_summary_equals_true_state():
    env, mem, obs, _info = play("oracle-summary")
    true = env.pegs
    assert true == ((2,), (1, 0), ())  # A->C, A->B, C->B
    assert mem.render() == (
        "Summary of the current state (from the simulator):\n"
        + render("natural", obs.facts)
        + " Goal: "
        + env.goal
    )
    assert "Peg A has disk 2. Peg B has disks 1 and 0 (bottom to top). Peg C is empty." in (
        mem.render()
    )


def test_reasoning_replies_stay_in_the_full_history():
    from statelab.state.history import step_text

    plain = step_text(1, "go north", 0.0, "OBS", "Action: go north")
    assert plain == "Step 1: You took action: go north (reward 0).\nOBS"
    thought = step_text(2, "go north", 1.0, "OBS", "Thought: the key is north.\nAction: go north")
    assert thought == "Step 2:\nThought: the key is north.\nAction: go north\n(reward 1)\nOBS"
