"""Seed 004's prompt as its authors lay it out (skumar-ml/belief-world-models,
``prompt/templates.py``, ``icl_format: first``), in our words: the agent option ``seed004``
of ``react``, ``reflact`` and ``stateact`` (``react:/seed004``, ``reflact:/seed004``).

- One user message holds the instruction (the env's manual, which lists the action
  templates, the world model's note with the four query forms and the reminder to query when
  stuck, and the turn format), one example (:func:`example`), and "Now, it's your turn and
  here is the task." with the first observation; then the turns alternate: the agent's reply
  (``Thought: ...`` / ``Action: ...``; ReflAct ``Reflection: ...``; the action alone is
  allowed), and the user's ``Observation: ...`` (a query's answer and a WALL-E rejection come
  back as observations too, within the step).
- No admissible-action list in the text. With a backend that constrains decoding the action
  is still chosen among the admissible actions (and the world model's offered queries): the
  constraint is in decoding, not in the prompt.
- The example: the world model's (Belief, BB-WM, Belief-NoProb: one that opens with
  ``query where is <target>``, :mod:`statelab.worldmodels.examples`), else the plain one of
  the task type (no query: the authors' Memory, WALL-E and base agents), stored with this
  package (``seed004_examples/<family>_<task type>.txt``); none where neither exists (BabyAI,
  as the authors').
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from importlib import resources
from typing import Any

from statelab.agents._parse import parse_action, split_reasoning
from statelab.agents._prompting import complete_past_reasoning
from statelab.agents._turn import choose_action, parse_turn, truncate
from statelab.core import LLM, Call, Decision, Message

#: reasoning turns need room (as StateAct's)
REASONING_MIN_TOKENS = 320

EXAMPLE_INTRO = "Here is an example."
YOUR_TURN = "Now, it's your turn and here is the task."
LABEL = {"goal": "Goal", "locations visited": "Locations visited",
         "current location": "Current location", "current inventory": "Current inventory",
         "current state": "Current state", "reflection": "Reflection", "thought": "Thought",
         "action": "Action"}  # fmt: skip
WHAT = {"goal": "the goal, in your own words", "locations visited": "the places you have been",
        "current location": "where you are", "current inventory": "what you carry",
        "current state": "the state of the environment, as far as the goal needs it",
        "reflection": "where you stand relative to the goal: what is done, what is missing",
        "thought": "your thoughts about the situation and your plan",
        "action": "your next action"}  # fmt: skip
NOTE = "You took action: "


def format_note(keys: tuple[str, ...]) -> str:
    """How a turn is written (the authors' instruction: think, or act directly)."""
    full = "\n".join(f"{LABEL[k]}: <{WHAT[k]}>" for k in keys)
    return (
        "At each turn you are given the observation of your last action. Reply in exactly "
        f"this form:\n{full}\nor, when nothing needs thinking, with the action alone:\n"
        "Action: <your next action>\nThe action must follow one of the commands above, with "
        "the names of the objects and receptacles you see; think when it helps, and act "
        "directly most of the time."
    )


@cache
def plain_example(family: str, task: str) -> str | None:
    """The stored plain example of a task (None when there is none)."""
    path = resources.files("statelab.agents") / "seed004_examples" / f"{family}_{task}.txt"
    return path.read_text() if path.is_file() else None


def _task_of(env: str, goal: str) -> tuple[str, str | None]:
    """(family, task type or task) of an env spelling, as the examples are keyed."""
    from statelab.core import ConfigError
    from statelab.envs import env_class

    base = env.split(":", 1)[0].split("+", 1)[0]
    family = base.split("/", 1)[0]
    try:
        cls = env_class(env)
    except (ConfigError, KeyError):
        return family, None
    if cls.reads_goal_types():
        return family, cls.task_type_of_goal(goal)
    return family, base.split("/", 1)[1] if "/" in base else None


def example(ctx: Any, keys: tuple[str, ...]) -> str | None:
    """The episode's example: the world model's, else the plain one of its task."""
    offered = ctx.world.example() if hasattr(ctx.world, "example") else None
    text = offered
    if text is None and ctx.env:
        family, task = _task_of(ctx.env, ctx.observation.goal)
        text = plain_example(family, task) if task else None
    if text is not None and "reflection" in keys:  # ReflAct's examples reflect
        text = text.replace("\nThought: ", "\nReflection: ")
    return text


def head(ctx: Any, keys: tuple[str, ...]) -> str:
    """The first user message: instruction, example, the task."""
    instruction = "\n\n".join(p for p in (ctx.prompt.manual, format_note(keys)) if p)
    shown = example(ctx, keys)
    parts = [instruction, "---"]
    if shown:
        parts += [f"{EXAMPLE_INTRO}\n\n{shown.rstrip()}\n", "---"]
    task = ctx.observation.text.strip()
    goal = ctx.prompt.goal.strip().rstrip(".")
    if goal and goal not in task:
        task = f"{task}\nYour task is to: {goal}."
    return "\n".join(parts) + f"\n\n{YOUR_TURN}\n{task}"


class Conversation:
    """An episode's messages in the authors' layout; :meth:`messages` is called at every
    decision, :meth:`said` with every reply."""

    def __init__(self) -> None:
        self.msgs: list[Message] = []
        self.step: int | None = None
        self.base = ""
        self.notes = 0
        self.last = ""

    def messages(self, ctx: Any, keys: tuple[str, ...]) -> list[Message]:
        view = ctx.prompt.view
        if not self.msgs:
            self.msgs = [{"role": "user", "content": head(ctx, keys)}]
        elif ctx.step != self.step:  # the env answered the last reply
            self.msgs += [
                {"role": "assistant", "content": self.last},
                {"role": "user", "content": f"Observation: {ctx.observation.text.strip()}"},
            ]
        else:  # decided again within the step: a query's answer or a rejection
            notes = view[len(self.base) :].split(f"\n\n{NOTE}")[1:]
            for note in notes[self.notes :]:
                answer = note.split("\nObservation: ", 1)[-1].strip()
                self.msgs += [
                    {"role": "assistant", "content": self.last},
                    {"role": "user", "content": f"Observation: {answer}"},
                ]
            self.notes = len(notes)
            return list(self.msgs)
        self.step, self.base, self.notes = ctx.step, view, 0
        return list(self.msgs)

    def said(self, reply: str) -> None:
        self.last = reply.strip()


_ACTION_LINE = re.compile(r"(?:^|\n)[^\S\n]*action\s*[:：]", re.IGNORECASE)
#: the action line's prefix under constrained choice
PREFIX = "Action: "


async def decide(agent: Any, ctx: Any, llm: LLM) -> Decision:
    """One decision of a StateAct-family ``agent`` in the authors' layout: reasoning and
    action free (parsed onto the admissible actions), or, on a constraining backend, the
    reasoning free and the action chosen among the admissible actions."""
    keys = agent.keys(ctx.observation)
    msgs = agent.conversation.messages(ctx, keys)
    actions = ctx.prompt.actions
    params = replace(agent.params, seed=ctx.prompt.seed)
    reasoning = len(keys) > 1
    if reasoning:
        params = replace(params, max_tokens=max(params.max_tokens, REASONING_MIN_TOKENS))
    if llm.constrained and actions:
        calls: list[Call] = []
        lead, act_msgs = "", msgs
        if reasoning:
            stop = ("\nAction:", "\naction:", "\n\n")
            first = await llm.complete(msgs, replace(params, stop=stop))
            calls.append(Call("reason", msgs, first))
            m = _ACTION_LINE.search(first.text)
            lead = (first.text[: m.start()] if m else first.text).strip()
            act_msgs = [*msgs, {"role": "assistant", "content": lead},
                        {"role": "user", "content": "Now write the action line."}]  # fmt: skip
        choose = replace(params, stop=(), choices=actions, choice_prefix=PREFIX)
        second = await llm.complete(act_msgs, choose)
        calls.append(Call("act", act_msgs, second))
        text = second.text.removeprefix(PREFIX).strip()
        action, parsed = parse_action(f"action: {text}", actions)
        reply = f"{lead}\n{PREFIX}{action}" if lead else f"{PREFIX}{action}"
        agent.conversation.said(reply)
        return Decision(action, reply, calls, parsed=parsed)
    params = replace(params, stop=("\nObservation", "\n\n"))
    got = await complete_past_reasoning(llm, msgs, params)
    thinking, said = split_reasoning(got[-1].completion.text)
    reply = truncate(said)
    action, parsed = choose_action(reply, parse_turn(reply), actions)
    agent.conversation.said(reply)
    return Decision(action, f"{thinking}\n{reply}" if thinking else reply, got, parsed=parsed)
