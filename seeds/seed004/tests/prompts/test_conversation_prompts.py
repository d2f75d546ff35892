"""The conversation layout with seed 004's examples (``prompt=conversation/examples=seed004``)
builds, byte for byte, every prompt the option ``seed004`` built before it was renamed.

``conversation_prompts.json.gz`` holds the messages of every model call of short episodes
(seed 0, three steps, the golden scripted model free and constrained) of ``react:/seed004``,
``reflact:/seed004`` and ``stateact:/seed004`` under every world model variant on household,
ScienceWorld (lifespan-longest-lived, started from the task) and BabyAI (goto), recorded
with the code before the rename (its keys write the layout ``<layout>``). Each case plays
again with the new spelling and compares every call's messages, up to the first reply with no
action line: since issue 35 that reply is a format error answered in the authors' words
(``FORMAT_ERROR_REPLY``), where the old option played its text as an action.

Changed on purpose since (issue 35, items 7 and 10), so compared only up to the change:
ReAct and ReflAct on household open with the authors' instruction and (ReflAct) their
example (``test_authors_prompts.py`` compares those prompts with the authors' texts), and on
ScienceWorld with the authors' instruction wherever they wrote one (all but Belief-NoProb;
a WALL-E rejection there reads in their words, compared up to the first); ReflAct
elsewhere is told to reflect every turn (its first prompt is the recorded one with the new
turn format in place of the old); a household WALL-E rejection reads in WALL-E's words (the
calls up to the first one are compared)."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from tests.golden._golden import GoldenLLM

from statelab.agents._conversation import FORMAT_ERROR_REPLY, format_note
from statelab.agents._turn import parse_turn
from statelab.run.config import Sampling
from statelab.run.episode import run_episode
from statelab.run.spec import RunSpec, resolve_format

FIXTURE = Path(__file__).with_name("conversation_prompts.json.gz")
WANT: dict[str, list[Any]] = json.loads(gzip.decompress(FIXTURE.read_bytes()))
LAYOUT = "prompt=conversation/examples=seed004"
ENVS = ("household", "scienceworld/lifespan-longest-lived:start=task", "babyai/goto")
AGENTS = ("react", "reflact", "stateact")
NEEDS = {"household": "textworld", "scienceworld": "scienceworld", "babyai": "minigrid"}


def calls(env: str, agent: str, worldmodel: str, constrained: bool) -> list[Any]:
    """The messages of every model call of the case's episode, in order."""
    spec = RunSpec.make(
        env=env, model="golden:" + ("constrained" if constrained else "free"), agent=agent,
        worldmodel=worldmodel, format=resolve_format(env, "default"),
        params=Sampling().model_dump(), max_steps=3,
    )  # fmt: skip
    ep = asyncio.run(run_episode(spec, 0, GoldenLLM(constrained=constrained)))
    return [c["messages"] for s in ep.trajectory for c in s.calls]


def test_the_fixture_covers_three_agents_six_world_models_three_envs() -> None:
    assert len(WANT) == 3 * 3 * 6 * 2
    assert sum(len(v) for v in WANT.values()) == 624


#: the turn format ReflAct was told before issue 35 (the action alone allowed)
OLD_REFLACT_NOTE = (
    "At each turn you are given the observation of your last action. Reply in exactly this "
    "form:\nReflection: <where you stand relative to the goal: what is done, what is missing>\n"
    "Action: <your next action>\nor, when nothing needs thinking, with the action alone:\n"
    "Action: <your next action>\nThe action must follow one of the commands above, with the "
    "names of the objects and receptacles you see; think when it helps, and act directly most "
    "of the time."
)
REJECTION = "Observation: [World model] "


@pytest.mark.parametrize("env", ENVS)
@pytest.mark.parametrize("agent", AGENTS)
def test_every_prompt_is_the_one_the_old_option_built(env: str, agent: str) -> None:
    pytest.importorskip(NEEDS[env.split("/", 1)[0]])
    cases = [k for k in WANT if k.startswith(f"{env}|{agent}:/<layout>|")]
    assert len(cases) == 12
    for case in cases:
        _, _, worldmodel, model = case.split("|")
        got = calls(env, f"{agent}:/{LAYOUT}", worldmodel, model == "constrained")
        if agent != "stateact" and env == "household":
            continue  # the authors' instruction: test_authors_prompts.py
        if agent != "stateact" and env.startswith("scienceworld") and worldmodel != "belief-noprob":
            continue  # the authors' ScienceWorld instruction: test_authors_prompts.py
        if agent == "reflact":  # reflects every turn: the first prompt, the format note new
            head = WANT[case][0][0]["content"]
            assert OLD_REFLACT_NOTE in head, case
            new = format_note(("reflection", "action"))
            assert got[0][0] == {"role": "user", "content": head.replace(OLD_REFLACT_NOTE, new)}
            continue
        want, cut = until_changed(WANT[case])
        assert got[: len(want)] == want, case
        if cut is not None and cut[0] < len(got):  # (else the episode's budget ended with it)
            i, j = cut  # the call after it: the same messages, the error answered
            assert got[i][:j] == WANT[case][i][:j], case
            answer = got[i][j]["content"]
            assert answer == f"Observation: {FORMAT_ERROR_REPLY}" or answer.startswith(REJECTION)


def until_changed(recorded: list[Any]) -> tuple[list[Any], tuple[int, int] | None]:
    """The recorded calls before the first answering a reply with no action line or
    holding a household WALL-E rejection (reworded since), and where that answer is."""
    plain, cut = until_format_error(recorded)
    for i, msgs in enumerate(recorded[: len(plain) + (cut is not None)]):
        for j, m in enumerate(msgs):
            rejected = m["role"] == "user" and m["content"].startswith(REJECTION)
            if rejected and (cut is None or (i, j) < cut):
                return recorded[:i], (i, j)
    return plain, cut


def until_format_error(recorded: list[Any]) -> tuple[list[Any], tuple[int, int] | None]:
    """The recorded calls before the first whose messages answer a reply with no action line,
    and where that answer is (call, message), None when no reply lacked one."""
    for i, msgs in enumerate(recorded):
        for j in range(1, len(msgs)):
            prev = msgs[j - 1]
            answered = msgs[j]["content"].startswith("Observation: ")  # not "Now write the action"
            bare = parse_turn(prev["content"]).action is None
            if prev["role"] == "assistant" and answered and bare:
                return recorded[:i], (i, j)
    return recorded, None
