"""The conversation prompt layout (``prompt=conversation``, an option of ``react``,
``reflact`` and ``stateact``): the acting prompt as a multi-turn conversation that opens with
one few-shot example, and no admissible-action list in its text.

- One user message holds the instruction, one example (:func:`example`), and "Now, it's your
  turn and here is the task." with the first observation; then the turns alternate: the
  agent's reply and the user's ``Observation: ...`` (a query's answer and a world model's
  rejection come back as observations too, within the step). A reply with no action line
  is a format error: the empty action, answered ``Observation: Error Input. Your input must
  contains 'Action: '`` (:data:`FORMAT_ERROR_REPLY`, the authors' words), never its text
  played as an action; a reply with an action line plays its action, whatever precedes it
  (the authors' parser reads the text after ``Action:`` only).
- The instruction: where the example set ``examples=<name>`` carries its authors'
  instruction for the turn (``react``: ``Thought: ...`` / ``Action: ...``; ``reflact``:
  ``Reflection: ...`` / ``Action: ...``) and the run's world-model variant
  (``ctx.world.variant()``; :func:`statelab.agents.example_sets.instruction_text`), that
  text, and the prompt is laid out exactly as the authors' template (:func:`authors_head`);
  else the lab's: the env's manual (which lists the action templates), the hooked
  components' notes (e.g. a world model's query forms) and the turn format
  (:func:`format_note`: ReAct may give the action alone, ReflAct reflects every turn).
- No admissible-action list in the text. With a backend that constrains decoding the action
  is still chosen among the admissible actions (and the world model's offered queries): the
  constraint is in decoding, not in the prompt.
- The example: for ReflAct, the text of the episode's task in the set
  ``<name>:reflact:<variant>`` (the authors' reflecting example for the run's world model),
  where one is registered; else the one the run's world model offers
  (``ctx.world.example()``), else, for ReflAct, the text of the episode's task in the set
  ``<name>:reflact`` (the authors' reflecting examples), else the text in the set
  ``examples=<name>``
  (:mod:`statelab.agents.example_sets`, keyed by the context's ``task_family`` and
  ``task``); none where none has one. A ReAct example shown to ReflAct has its thoughts
  labelled ``Reflection:``.

Seed 004's authors lay out their prompt so (skumar-ml/belief-world-models,
``prompt/templates.py``, ``icl_format: first``); docs/seed004.md.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from statelab.agents._parse import parse_action, split_reasoning
from statelab.agents._prompting import complete_past_reasoning
from statelab.agents._turn import choose_action, parse_turn, truncate
from statelab.agents.example_sets import example_text, instruction_text
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


#: the authors' turns: the reasoning field -> the turn's name in their instruction files
TURNS: dict[tuple[str, ...], str] = {("thought", "action"): "react",
                                     ("reflection", "action"): "reflact"}  # fmt: skip


def format_note(keys: tuple[str, ...]) -> str:
    """How a turn is written, in the lab's words: ReAct thinks or acts directly (the authors'
    ReAct instruction), ReflAct reflects every turn (theirs), other turns write every field."""
    full = "\n".join(f"{LABEL[k]}: <{WHAT[k]}>" for k in keys)
    head = ("At each turn you are given the observation of your last action. Reply in exactly "
            f"this form:\n{full}\n")  # fmt: skip
    tail = "The action must follow one of the commands above, with the names of the objects " \
        "and receptacles you see"
    if "reflection" in keys:
        return f"{head}{tail}; reflect on your state in relation to the goal every turn."
    return (f"{head}or, when nothing needs thinking, with the action alone:\n"
            f"Action: <your next action>\n{tail}; think when it helps, and act directly most "
            "of the time.")  # fmt: skip


def authors_instruction(ctx: Any, keys: tuple[str, ...], examples: str | None) -> str | None:
    """The authors' instruction of the example set ``examples`` for this turn and the run's
    world-model variant, None where it holds none (then the lab's instruction is used)."""
    turn = TURNS.get(keys)
    if examples is None or turn is None:
        return None
    world = ctx.world.variant() if hasattr(ctx.world, "variant") else "none"
    return instruction_text(examples, ctx.task_family, f"{turn}:{world}")


def example(ctx: Any, keys: tuple[str, ...], examples: str | None) -> str | None:
    """The episode's example: the world model's, else the text of its task in the example
    set ``examples`` (None: no set)."""
    if examples is not None and "reflection" in keys and hasattr(ctx.world, "variant"):
        own = example_text(f"{examples}:reflact:{ctx.world.variant()}", ctx.task_family, ctx.task)
        if own is not None:  # the authors' reflecting example for the world model, as it is
            return own
    offered = ctx.world.example() if hasattr(ctx.world, "example") else None
    text = offered
    if text is None and examples is not None and "reflection" in keys:
        text = example_text(f"{examples}:reflact", ctx.task_family, ctx.task)
        if text is not None:  # the authors' reflecting example, as it is
            return text
    if text is None and examples is not None:
        text = example_text(examples, ctx.task_family, ctx.task)
    if text is not None and "reflection" in keys:  # a ReAct example shown to ReflAct
        text = text.replace("\nThought: ", "\nReflection: ")
    return text


def task_text(ctx: Any) -> str:
    """The task paragraph: the first observation, with the goal where it does not say it."""
    task = ctx.observation.text.strip()
    goal = ctx.prompt.goal.strip().rstrip(".")
    if goal and goal not in task:
        task = f"{task}\nYour task is to: {goal}."
    return task


def authors_head(instruction: str, shown: str | None, task: str) -> str:
    """The first user message as the authors' template writes it (``prompt/templates.py``,
    ``PROMPT_WITH_ICL_TEMPLATE``, one example): the instruction as its file holds it, the
    example's turns each on their line and each observation followed by a blank line, the
    task's paragraphs on consecutive lines (their runner joins ALFWorld's paragraphs so).
    Without an example (the authors always show one; where the lab holds none of theirs) the
    example's section is left out."""
    task = "\n".join(task.split("\n\n"))
    if not shown:
        return f"{instruction}\n---\n\n{YOUR_TURN}\n{task}"
    examples = f"{shown.rstrip(chr(10))}\n\n"
    return (f"{instruction}\n---\n{EXAMPLE_INTRO}\n\n{examples}\n---\n\n{YOUR_TURN}\n"
            f"{task}")  # fmt: skip


def head(ctx: Any, keys: tuple[str, ...], examples: str | None) -> str:
    """The first user message: instruction, example (from the set ``examples``), the task."""
    shown = example(ctx, keys, examples)
    authors = authors_instruction(ctx, keys, examples)
    if authors is not None:
        return authors_head(authors, shown, task_text(ctx))
    instruction = "\n\n".join(p for p in (ctx.prompt.manual, format_note(keys)) if p)
    parts = [instruction, "---"]
    if shown:
        parts += [f"{EXAMPLE_INTRO}\n\n{shown.rstrip()}\n", "---"]
    return "\n".join(parts) + f"\n\n{YOUR_TURN}\n{task_text(ctx)}"


class Conversation:
    """An episode's messages in the conversation layout; :meth:`messages` is called at
    every decision, :meth:`said` with every reply."""

    def __init__(self) -> None:
        self.msgs: list[Message] = []
        self.step: int | None = None
        self.base = ""
        self.notes = 0
        self.last = ""
        self.format_error = False

    def messages(
        self, ctx: Any, keys: tuple[str, ...], examples: str | None = None
    ) -> list[Message]:
        """The messages of this decision (the head built at the first one, with the example
        set ``examples``)."""
        view = ctx.prompt.view
        if not self.msgs:
            self.msgs = [{"role": "user", "content": head(ctx, keys, examples)}]
        elif ctx.step != self.step:  # the env answered the last reply
            seen = FORMAT_ERROR_REPLY if self.format_error else ctx.observation.text.strip()
            self.msgs += [
                {"role": "assistant", "content": self.last},
                {"role": "user", "content": f"Observation: {seen}"},
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

    def said(self, reply: str, format_error: bool = False) -> None:
        """The agent's reply to the last messages (the next decision shows it); a reply with
        no action line (``format_error``) is answered with :data:`FORMAT_ERROR_REPLY`."""
        self.last = reply.strip()
        self.format_error = format_error


#: what the authors' envs answer a reply with no ``Action:`` line (skumar-ml/belief-world-models,
#: ``envs/alfworld_env.py`` ``step``): the step is a format error, the env is not asked
FORMAT_ERROR_REPLY = "Error Input. Your input must contains 'Action: '"

_ACTION_LINE = re.compile(r"(?:^|\n)[^\S\n]*action\s*[:：]", re.IGNORECASE)
#: the action line's prefix under constrained choice
PREFIX = "Action: "


async def decide(agent: Any, ctx: Any, llm: LLM) -> Decision:
    """One decision of a StateAct-family ``agent`` in the conversation layout: reasoning and
    action free (parsed onto the admissible actions), or, on a constraining backend, the
    reasoning free and the action chosen among the admissible actions."""
    keys = agent.keys(ctx.observation)
    msgs = agent.conversation.messages(ctx, keys, agent.options.examples)
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
    turn = parse_turn(reply)
    if turn.action is None:  # no action line: a format error (the empty action), as the authors
        agent.conversation.said(reply, format_error=True)
        return Decision("", f"{thinking}\n{reply}" if thinking else reply, got, parsed=False)
    action, parsed = choose_action(reply, turn, actions)
    agent.conversation.said(reply)
    return Decision(action, f"{thinking}\n{reply}" if thinking else reply, got, parsed=parsed)
