"""What carries seed 004's authors' name reads as theirs, checked side by side with their texts
(skumar-ml/belief-world-models; the texts are package data, ``statelab_seed004/authors``, and
fixtures, ``tests/fixtures``):

- the first prompt of ``react`` and ``reflact`` with ``prompt=conversation/examples=seed004``
  under each of the six world-model variants on household is the authors' template filled
  with their instruction file for that turn and variant, the example, and the task as their
  runner writes it (12 prompts);
- ReflAct's example of each of the six household task types is the authors' ReflAct example
  for the world model (``alfworld_reflact_icl.json``; ``alfworld_reflact_wm_icl.json`` for
  Belief and BB-WM, ``alfworld_reflact_wm_no_prob_icl.json`` for Belief-NoProb), written into
  the prompt as their template writes it (6 + 12 texts), and every reply of it reflects;
- a ReflAct reply is parsed as their parser does: the text after ``Action:`` is the action
  whether or not a reflection precedes it; with no ``Action:`` line it is a format error;
- every WALL-E rejection of a household action reads as the authors show WALL-E's rule
  (13 rules);
- the first prompt of ``react`` and ``reflact`` with that layout on ScienceWorld (started from
  the task, as theirs) under the five variants they wrote a ScienceWorld instruction for is
  their template filled with that file and the task description as their runner gives it
  (10 prompts); Belief-NoProb, for which they wrote none, keeps the lab's instruction;
- a ScienceWorld WALL-E (or BB-WM) rejection reads as their parser gate's (``[World model]
  The action '<a>' is not possible ...``);
- ``query where is toilet 1`` (a receptacle, with a number) is answered as theirs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from statelab.agents import make_agent
from statelab.agents._conversation import FORMAT_ERROR_REPLY, decide
from statelab.agents.example_sets import example_text
from statelab.core import Completion, Observation, Prompt
from statelab.worldmodels.rules import HouseholdRuleState, household_failure
from statelab_seed004 import authors

FIXTURES = Path(__file__).with_name("fixtures")
TEMPLATE = (FIXTURES / "prompt_template.txt").read_text(encoding="utf-8")
WALLE = json.loads((FIXTURES / "walle_alfworld_feedback.json").read_text(encoding="utf-8"))
LAYOUT = "prompt=conversation/examples=seed004"
VARIANTS = ("none", "memory", "belief", "belief-noprob", "walle", "bbwm")
#: their instruction file per (turn, variant) (prompt/instructions/)
FILES = {
    ("react", "none"): "alfworld_inst.txt",
    ("react", "memory"): "alfworld_react_wm_det_inst.txt",
    ("react", "belief"): "alfworld_react_wm_inst.txt",
    ("react", "belief-noprob"): "alfworld_react_wm_no_prob_inst.txt",
    ("react", "walle"): "alfworld_react_walle_inst.txt",
    ("react", "bbwm"): "alfworld_react_walle_wm_inst.txt",
    ("reflact", "none"): "alfworld_reflact_inst.txt",
    ("reflact", "memory"): "alfworld_reflact_wm_det_inst.txt",
    ("reflact", "belief"): "alfworld_reflact_wm_inst.txt",
    ("reflact", "belief-noprob"): "alfworld_reflact_wm_no_prob_inst.txt",
    ("reflact", "walle"): "alfworld_reflact_walle_inst.txt",
    ("reflact", "bbwm"): "alfworld_reflact_walle_wm_inst.txt",
}
#: the stored files' lengths, as the originals' (SOURCE.md)
LENGTHS = {"alfworld_inst.txt": 1586, "alfworld_react_wm_inst.txt": 2961,
           "alfworld_react_wm_det_inst.txt": 3239,
           "alfworld_react_wm_no_prob_inst.txt": 3031,
           "alfworld_react_walle_inst.txt": 2158, "alfworld_react_walle_wm_inst.txt": 3512,
           "alfworld_reflact_inst.txt": 1395, "alfworld_reflact_wm_inst.txt": 2771,
           "alfworld_reflact_wm_det_inst.txt": 3050,
           "alfworld_reflact_wm_no_prob_inst.txt": 2842,
           "alfworld_reflact_walle_inst.txt": 1969,
           "alfworld_reflact_walle_wm_inst.txt": 3323}  # fmt: skip
#: our household task types -> theirs (tasks/alfworld.py PREFIXES)
TASKS = {"pick_and_place_simple": "pick_and_place", "look_at_obj_in_light": "look_at_obj",
         "pick_clean_then_place_in_recep": "pick_clean_then_place",
         "pick_heat_then_place_in_recep": "pick_heat_then_place",
         "pick_cool_then_place_in_recep": "pick_cool_then_place",
         "pick_two_obj_and_place": "pick_two_obj"}  # fmt: skip
SEED = 100_000
#: the world models whose own example (with a query) comes first
QUERY_EXAMPLE = {"belief", "bbwm", "belief-noprob"}


def theirs(name: str) -> str:
    return (authors.HERE / "instructions" / name).read_text(encoding="utf-8")


#: their ReflAct example file per world-model variant (their configs' icl_path) and its length
REFLACT_ICL = {"none": "alfworld_reflact_icl.json", "memory": "alfworld_reflact_icl.json",
               "walle": "alfworld_reflact_icl.json", "belief": "alfworld_reflact_wm_icl.json",
               "bbwm": "alfworld_reflact_wm_icl.json",
               "belief-noprob": "alfworld_reflact_wm_no_prob_icl.json"}  # fmt: skip
ICL_LENGTHS = {"alfworld_reflact_icl.json": 25742, "alfworld_reflact_wm_icl.json": 28426,
               "alfworld_reflact_wm_no_prob_icl.json": 28100}  # fmt: skip


def their_icl(kind: str, name: str = "alfworld_reflact_icl.json") -> list[dict[str, str]]:
    data = json.loads((authors.HERE / "icl" / name).read_text("utf-8"))
    return list(data[kind][0])


def their_examples(msgs: list[dict[str, str]]) -> str:
    """One example written as their ``prompt_with_icl`` (icl_num=1) writes it: the task
    line, then each reply followed by a newline and each observation by a blank line."""
    out = msgs[0]["content"] + "\n"
    for j, m in enumerate(msgs[1:], start=1):
        out += m["content"] + ("\n" if j % 2 else "\n\n")
    return out


def their_task(obs_text: str) -> str:
    """The task as their runner gives it: ALFWorld's paragraphs on consecutive lines."""
    return "\n".join(obs_text.strip().split("\n\n"))


def test_the_stored_texts_are_as_long_as_the_authors():
    for name, n in LENGTHS.items():
        assert len(theirs(name)) == n, name
    assert {authors.instruction_file(t, v) for t, v in FILES} == set(FILES.values())
    for name, n in ICL_LENGTHS.items():
        assert len((authors.HERE / "icl" / name).read_text("utf-8")) == n, name
    assert authors.REFLACT_ICL == REFLACT_ICL


def first_prompt(agent: str, worldmodel: str) -> Any:
    from tests.golden._golden import GoldenLLM

    from statelab.run.config import Sampling
    from statelab.run.episode import run_episode
    from statelab.run.spec import RunSpec, resolve_format

    spec = RunSpec.make(env="household", model="golden:free", agent=agent, worldmodel=worldmodel,
                        format=resolve_format("household", "default"),
                        params=Sampling().model_dump(), max_steps=1)  # fmt: skip
    ep = asyncio.run(run_episode(spec, SEED, GoldenLLM(constrained=False)))
    return ep.trajectory[0].calls[0]["messages"]


@pytest.mark.parametrize("turn", ("react", "reflact"))
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_first_prompt_is_the_authors_template_with_their_instruction(turn, variant):
    pytest.importorskip("textworld")
    from statelab.envs.household import HouseholdEnv

    env = HouseholdEnv()
    obs, _ = env.reset(seed=SEED)
    task = env.current_task()
    msgs = first_prompt(f"{turn}:/{LAYOUT}", variant)
    assert [m["role"] for m in msgs] == ["user"]
    if turn == "reflact":  # their ReflAct example for the variant
        examples = their_examples(their_icl(TASKS[task], REFLACT_ICL[variant]))
    else:  # the example the lab shows (ours: docs/seed004.md, "The example")
        text = msgs[0]["content"].split("Here is an example.\n\n", 1)[1].split("\n---\n\n", 1)[0]
        examples = text
        assert examples.endswith("\n\n") and "\nAction: " in examples
        assert ("\nReflection: " in examples) == (turn == "reflact")
    want = TEMPLATE.format(instruction=theirs(FILES[turn, variant]),
                           icl_prompt="Here is an example.", examples=examples,
                           task=their_task(obs.text))  # fmt: skip
    assert msgs[0]["content"] == want


@pytest.mark.parametrize("variant", ("none", *sorted(QUERY_EXAMPLE)))
@pytest.mark.parametrize("task", sorted(TASKS))
def test_reflacts_example_is_the_authors_and_reflects_every_turn(task, variant):
    msgs = their_icl(TASKS[task], REFLACT_ICL[variant])
    name = "seed004:reflact" + ("" if variant == "none" else f":{variant}")
    shown = example_text(name, "household", task)
    assert shown == their_examples(msgs)
    replies = [m["content"] for m in msgs if m["role"] == "assistant"]
    assert replies and all(r.startswith("Reflection: ") for r in replies)
    assert ("Action: query where is " in shown) == (variant != "none")


class _Free:
    constrained = False

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)

    async def complete(self, messages, params):  # type: ignore[no-untyped-def]
        return Completion(text=self.replies.pop(0))


class _NoWorld:
    def example(self) -> str | None:
        return None


def _ctx(step: int, text: str) -> Any:
    prompt = Prompt(manual="MANUAL", view=text, actions=("go to cabinet 1", "look"), goal="")
    obs = SimpleNamespace(text=text, goal="")
    return SimpleNamespace(prompt=prompt, observation=obs, step=step, world=_NoWorld(), env="",
                           task_family="", task=None)  # fmt: skip


def test_a_reflact_reply_is_parsed_as_the_authors_parser_does():
    agent = make_agent(f"reflact:/{LAYOUT}")
    agent.reset()
    llm = _Free("Action: go to cabinet 1", "Reflection: I am lost.",
                "Reflection: at the cabinet\nAction: look")  # fmt: skip
    # no reflection, an action line: their parser takes the text after "Action:"
    got = asyncio.run(decide(agent, _ctx(0, "Room. Your task is to: find a cup."), llm))
    assert got.action == "go to cabinet 1" and got.parsed
    # a reflection and no action line: their "Error Input" step
    bad = asyncio.run(decide(agent, _ctx(1, "On the cabinet 1, you see nothing."), llm))
    assert bad.action == "" and not bad.parsed
    nxt = asyncio.run(decide(agent, _ctx(2, "Nothing happens."), llm))
    assert nxt.action == "look"
    assert nxt.calls[-1].messages[-1]["content"] == f"Observation: {FORMAT_ERROR_REPLY}"


def _state(**kw: Any) -> HouseholdRuleState:
    places = ["cabinet 1", "countertop 1", "fridge 1", "drawer 1", "microwave 1", "sinkbasin 1"]
    base: dict[str, Any] = dict(reachable=places, seen={"countertop 1": ["apple 1"]})
    base.update(kw)
    return HouseholdRuleState(**base)


#: rule -> (the state, the command, the action's object and receptacle) where it fires first
FIRES = {
    "100": (_state(in_hand="mug 1"), "take apple 1 from countertop 1", "apple 1", "countertop 1"),
    "101": (_state(), "take cup 1 from countertop 1", "cup 1", "countertop 1"),
    "102": (_state(position="cabinet 1"), "take apple 1 from countertop 1", "apple 1",
            "countertop 1"),
    "103": (_state(), "open safe 1", "", "safe 1"),
    "104": (_state(position="cabinet 1"), "open fridge 1", "", "fridge 1"),
    "105": (_state(position="cabinet 1"), "open drawer 1", "", "drawer 1"),
    "106": (_state(in_hand="apple 1", position="cabinet 1"), "heat apple 1 with microwave 1",
            "apple 1", "microwave 1"),
    "107": (_state(position="countertop 1"), "move apple 1 to countertop 1", "apple 1",
            "countertop 1"),
    "108": (_state(in_hand="apple 1", position="cabinet 1"), "move apple 1 to countertop 1",
            "apple 1", "countertop 1"),
    "109": (_state(position="cabinet 1"), "use desklamp 1", "desklamp 1", ""),
    "110": (_state(), "clean apple 1 with sinkbasin 1", "apple 1", "sinkbasin 1"),
    "112": (_state(seen={"safe 1": ["apple 1"]}, position="safe 1"), "take apple 1 from safe 1",
            "apple 1", "safe 1"),
    "114": (_state(position="countertop 1", status="closed"), "take apple 1 from countertop 1",
            "apple 1", "countertop 1"),
}  # fmt: skip


@pytest.mark.parametrize("rule", sorted(FIRES))
def test_a_walle_rejection_reads_as_the_authors_show_wallEs_rule(rule):
    from statelab.worldmodels._model import REJECTED

    state, cmd, obj, place = FIRES[rule]
    feedback, suggestion = WALLE["rules"][rule]
    fill = {"obj": obj, "place": place, "position": state.position}
    want = f"[World model] {feedback.format(**fill)} {suggestion.format(**fill)}".strip()
    got = household_failure(state, cmd)
    assert got is not None and REJECTED.format(feedback=got) == want


#: their ScienceWorld instruction file per (turn, variant) and each one's length
SCI_FILES = {
    ("react", "none"): ("sciworld_react_inst.txt", 1607),
    ("react", "memory"): ("sciworld_react_wm_det_inst.txt", 3202),
    ("react", "belief"): ("sciworld_react_wm_inst.txt", 2890),
    ("react", "walle"): ("sciworld_react_walle_oracle_inst.txt", 1958),
    ("react", "bbwm"): ("sciworld_react_walle_oracle_wm_inst.txt", 3253),
    ("reflact", "none"): ("sciworld_reflact_inst.txt", 1591),
    ("reflact", "memory"): ("sciworld_reflact_wm_det_inst.txt", 3186),
    ("reflact", "belief"): ("sciworld_reflact_wm_inst.txt", 2875),
    ("reflact", "walle"): ("sciworld_reflact_walle_oracle_inst.txt", 1942),
    ("reflact", "bbwm"): ("sciworld_reflact_walle_oracle_wm_inst.txt", 3237),
}
SCI_ENV = "scienceworld/lifespan-longest-lived:start=task"
#: their ScienceWorld WALL-E gate's answer (envs/walle_oracle_sciworld_env.py, _emit_rejection)
SCI_REJECTION = ("[World model] The action '{action}' is not possible in the current state (the "
                 "parser does not recognize it here). Choose a different action.")  # fmt: skip


def test_the_stored_scienceworld_texts_are_as_long_as_the_authors():
    for (turn, variant), (name, n) in SCI_FILES.items():
        assert len(theirs(name)) == n, name
        assert authors.sciworld_instruction_file(turn, variant) == name
    assert authors.scienceworld_instruction("react:belief-noprob") is None


def sci_first_prompt(agent: str, worldmodel: str) -> Any:
    from tests.golden._golden import GoldenLLM

    from statelab.run.config import Sampling
    from statelab.run.episode import run_episode
    from statelab.run.spec import RunSpec, resolve_format

    spec = RunSpec.make(env=SCI_ENV, model="golden:free", agent=agent, worldmodel=worldmodel,
                        format=resolve_format(SCI_ENV, "default"),
                        params=Sampling().model_dump(), max_steps=1)  # fmt: skip
    ep = asyncio.run(run_episode(spec, 0, GoldenLLM(constrained=False)))
    return ep.trajectory[0].calls[0]["messages"]


@pytest.fixture(scope="module")
def sci_task() -> str:
    """The task as their runner gives it: the simulator's task description (``taskDesc``)."""
    pytest.importorskip("scienceworld")
    from statelab.envs import make_env

    env = make_env(SCI_ENV)
    try:
        env.reset(seed=0)
        return str(env.goal)
    finally:
        env.close()


@pytest.mark.parametrize("turn", ("react", "reflact"))
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_scienceworld_first_prompt_is_the_authors_template(turn, variant, sci_task):
    msgs = sci_first_prompt(f"{turn}:/{LAYOUT}", variant)
    assert [m["role"] for m in msgs] == ["user"]
    text = msgs[0]["content"]
    if (turn, variant) not in SCI_FILES:  # they wrote no Belief-NoProb instruction for it
        assert "You are a helpful assistant to do some scientific experiment" not in text
        return
    instruction = theirs(SCI_FILES[turn, variant][0])
    if variant in QUERY_EXAMPLE:  # the example the lab shows (ours: docs/seed004.md)
        examples = text.split("Here is an example.\n\n", 1)[1].split("\n---\n\n", 1)[0]
        assert examples.endswith("\n\n") and "Action: query where is " in examples
        want = TEMPLATE.format(instruction=instruction, icl_prompt="Here is an example.",
                               examples=examples, task=sci_task)  # fmt: skip
    else:  # no example of theirs stored (their per-task ICL files): the section left out
        want = f"{instruction}\n---\n\nNow, it's your turn and here is the task.\n{sci_task}"
    assert text == want


def test_a_scienceworld_walle_rejection_reads_as_the_authors_gate():
    from statelab.worldmodels._model import REJECTED
    from statelab.worldmodels.adapters.scienceworld import ScienceWorldAdapter

    text = "Your task is to boil water. First, focus on the substance."
    adapter = ScienceWorldAdapter(Observation(text, None, None, text))
    for action in ("fly to the moon", "pick up thermometer in kitchen"):
        got = adapter.check(action, lambda a: False)
        assert got is not None and REJECTED.format(feedback=got) == SCI_REJECTION.format(
            action=action
        )
        assert adapter.check(action, lambda a: True) is None


def test_where_is_a_numbered_receptacle_is_answered_as_theirs():
    import random

    from statelab.worldmodels.adapters.household import HouseholdAdapter

    text = ("You are in the middle of a room. Looking quickly around you, you see a cabinet 1, "
            "a countertop 1, and a toilet 1.\n\nYour task is to: put some soapbottle on "
            "toilet.")  # fmt: skip
    adapter = HouseholdAdapter(Observation(text, None, None, "put some soapbottle on toilet"))
    want = ("toilet is a receptacle, not an object. Try 'query what is in toilet 1' or "
            "'query searched toilet 1'.")  # fmt: skip
    for mode in ("belief", "noprob", "memory"):
        for q in ("where is toilet 1", "where is toilet", "where is the toilet 1"):
            assert adapter.answer(q, mode, random.Random(0)) == want
