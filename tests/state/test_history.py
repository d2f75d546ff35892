import asyncio
import dataclasses

import pytest

from statelab.core import BuildContext, ConfigError, GenParams, PrivilegedView, Transition
from statelab.envs.hanoi import ACTIONS, HanoiEnv
from statelab.llm import ScriptedLLM
from statelab.state import HISTORIES, compose_view, observation_renderer, render


def build(history: str, fmt: str = "tagged-list", k: int = 30):
    ctx = BuildContext(
        render_obs=observation_renderer(fmt), history_len=k, params=GenParams(), format=fmt
    )
    return HISTORIES.build(history, ctx)


def transition(t, action, reward, obs, info, privileged=True):
    view = PrivilegedView(info) if privileged else None
    return Transition(t, action, "", reward, obs, False, False, privileged=view)


class Played:
    """A memory and its state after some Hanoi moves (``render()`` of the last state)."""

    def __init__(self, mem, state, states):
        self.mem, self.state, self.states = mem, state, states

    def render(self):
        return self.mem.render(self.state)


def play(history: str, llm=None, actions=(1, 0, 5), k=30, fmt="tagged-list"):
    env = HanoiEnv()
    obs, info = env.reset(seed=0)
    mem = build(history, k=k, fmt=fmt)
    state = mem.init(obs, PrivilegedView(info))
    states = [state]
    for t, a in enumerate(actions, 1):
        obs, rew, *_x, info = env.step(ACTIONS[a])
        state, _calls = asyncio.run(
            mem.write(state, transition(t, ACTIONS[a], rew, obs, info), llm)
        )
        states.append(state)
    return env, Played(mem, state, states), obs, info


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
    mem = build("summary", fmt="natural")
    state = mem.init(obs, None)
    obs, r, *_x, info = env.step(ACTIONS[1])
    _state, calls = asyncio.run(mem.write(state, transition(1, ACTIONS[1], r, obs, info), llm))
    assert [c.kind for c in calls] == ["summary"]
    assert calls[0].completion.usage.input_tokens > 0


def test_oracle_summary_equals_true_state():
    env, mem, obs, _info = play("oracle-summary", fmt="natural")
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


@pytest.mark.parametrize("history", ["full", "window:2", "summary", "oracle-summary"])
def test_states_are_values_a_write_never_changes_the_state_it_forks_from(history):
    llm = ScriptedLLM(["one", "two", "three"])
    _env, played, _obs, _info = play(history, llm=llm)
    renders = [played.mem.render(s) for s in played.states]
    # every earlier state still renders as it did: forking K rewrites from one is a copy
    for s in played.states:
        hash(s)  # immutable values
        with pytest.raises((dataclasses.FrozenInstanceError, AttributeError)):
            s.t = 99  # type: ignore[union-attr]
    assert [played.mem.render(s) for s in played.states] == renders
    assert len(set(renders[1:])) == len(renders) - 1  # each write made a new state


def test_oracle_summary_refuses_to_write_without_the_privileged_view():
    env = HanoiEnv()
    obs, _info = env.reset(seed=0)
    mem = build("oracle-summary")
    with pytest.raises(ConfigError, match="privileged"):
        mem.init(obs, None)


@pytest.mark.parametrize("bad", ["full:3", "window:0", "window:x", "summary:2", "oracle-summary:1"])
def test_a_bad_history_argument_is_refused_at_build(bad):
    with pytest.raises(ConfigError) as e:
        HISTORIES.check(bad)
    assert "\n" not in str(e.value) and bad.split(":")[0] in str(e.value)


@pytest.mark.parametrize("fmt", ["natural", "tagged-list", "dict-list", "matrix"])
def test_oracle_summary_renders_in_the_runs_format(fmt):
    """dict-list x oracle-summary shows one structure, not two (issue 9.6)."""
    env, mem, obs, _info = play("oracle-summary", fmt=fmt)
    assert mem.render() == (
        "Summary of the current state (from the simulator):\n"
        + render(fmt, obs.facts)
        + " Goal: "
        + env.goal
    )
