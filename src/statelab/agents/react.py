"""``react``: a thought, then the action (Yao et al. 2023, as seed 002 runs it).

ReAct is exactly the StateAct family's ``thought`` row (seed 002, Table 6: "Thought+Act
(ReAct)"), so ``react`` builds the same agent as ``stateact:thought``: one turn

    >thought: <reasoning>
    action: <action>

ReAct's original stop at ``"\\n"`` ends a thought in a two-call loop (thought, then action);
here one call writes both lines, so the reply is cut at the end of the action line instead.
``react:json`` is the ReAct row of Table 7 (``stateact:thought/json``).
``react:original`` is ReAct's own format (``> think: ...`` answered ``OK.``; the anchor's
ReAct baseline), see :class:`OriginalReact`. ``react:jsonreact`` is the anchor's separate JSON
ReAct (its ``jsonreact`` agent, version 1): the same loop with each output one JSON object,
``{"think": ...}`` answered ``OK.`` or ``{"action": ...}``, see :class:`JsonReact`.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from statelab.agents._anchor import (
    ANCHOR_PARAMS,
    PROMPT_PARAMS,
    anchor_options,
    cut,
    strict_action,
)
from statelab.agents._parse import parse_action, split_reasoning
from statelab.agents._prompting import complete_past_reasoning
from statelab.agents._stateact_variants import Variant
from statelab.agents.stateact import StateActAgent
from statelab.core import (
    LLM,
    Args,
    Call,
    ConfigError,
    Decision,
    GenParams,
    Message,
    Param,
    Params,
    StepContext,
    choice,
    loads_json,
)

REACT = Variant(("thought",))


_FORMS = choice("text", "json", "original", "jsonreact")


def _form(value: str) -> str:
    return _FORMS(value or "text")  # ``react:/anchor``: the text form


_form.spelled = _FORMS.spelled  # type: ignore[attr-defined]

#: the parameters of ``react`` (``[<form>][/<option>...]``)
PARAMS = Params(
    (
        Param("form", _form, "text",
              "ReAct's turn: text or json lines, or its original/jsonreact loops",
              positional=True, named=False),
        *ANCHOR_PARAMS,
        *PROMPT_PARAMS,
    ),
    sep="/",
)  # fmt: skip


def make_react(args: Args, params: GenParams) -> StateActAgent:
    """``react`` with its parsed arguments (form, then the options of
    :mod:`statelab.agents._anchor`)."""
    form, options = args["form"], anchor_options(args)
    if form in ("original", "jsonreact"):
        cls = OriginalReact if form == "original" else JsonReact
        agent: StateActAgent = cls(params, REACT, options=replace(options, transcript=True))
        agent.name = "react"
        agent.label = cls.title + (f" [{options.spelling}]" if options.spelling else "")
        return agent
    variant = Variant(("thought",), "json") if form == "json" else REACT
    agent = StateActAgent(params, variant, options=options)
    agent.name = "react"
    agent.label = agent.variant.label  # "Thought+Act (ReAct)", seed 002's row name
    if options.spelling:
        agent.label += f" [{options.spelling}]"
    return agent


class OriginalReact(StateActAgent):
    """ReAct in its original format (Yao et al. 2023; seed 002's ReAct baseline as its authors
    ran it), always as one running transcript: each model output is one line; ``think: ...``
    is answered ``OK.`` and the model is called again, anything else is the action::

        <observation>
        > think: <reasoning>
        OK.
        > <action>
        <observation>

    Every call is recorded (kind ``think`` for thoughts, ``act`` for the action). Without a
    ``calls`` limit at most :data:`MAX_THINKS` thoughts in a row are answered; the next
    output is then sent as the action.
    """

    MAX_THINKS = 10
    example_format = "react"
    title = "ReAct (original format)"
    #: how the transcript joins its blocks, marks a turn, and where an output stops
    joiner = "\n"
    mark = "> "
    stop: tuple[str, ...] = ("\n",)

    def read(self, said: str) -> tuple[str, bool, str]:
        """(the output as the transcript shows it after the mark, whether it is a thought,
        the text the action is read from)."""
        line = said.strip().lstrip(">").strip()
        return line, line.lower().startswith("think:"), line

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        if llm is None:
            raise ConfigError("agent 'react:original' needs a model")
        prompt = ctx.prompt if self.options.listed else replace(ctx.prompt, actions=None)
        head = await self.head(prompt, ("thought", "action"), ctx.env)
        if self._seen_step != ctx.step:
            self._seen_step = ctx.step
            self._blocks.append(ctx.observation.text.strip())
        calls: list[Call] = []
        meta: dict[str, Any] = {}
        thoughts: list[str] = []
        params = replace(self.params, seed=prompt.seed, stop=self.stop)
        line, act, thinking, is_thought = "", "", "", False
        for i in range(self.MAX_THINKS + 1):
            msgs = self._react_messages(head, prompt.goal)
            got = await complete_past_reasoning(llm, msgs, replace(params, seed=prompt.seed + i))
            thinking, said = split_reasoning(got[-1].completion.text)
            line, is_thought, act = self.read(said)
            calls += [*got[:-1], Call("think" if is_thought else "act", msgs, got[-1].completion)]
            stop = self._limits.see(line)
            if stop:
                meta["stop"] = stop
                break
            self._blocks.append(f"{self.mark}{line}")
            if not is_thought or (self.options.calls is None and i == self.MAX_THINKS):
                break
            thoughts.append(line)
            self._blocks.append("OK.")
        if self.options.strict:
            action, parsed = strict_action(act), bool(act) and not is_thought
        else:
            action, parsed = parse_action(f"action: {act}", prompt.actions)
        reply = "\n".join([*thoughts, line])
        if thinking:
            reply = f"{thinking}\n{reply}"
        return Decision(action, reply, calls, meta=meta, parsed=parsed)

    def _react_messages(self, head: str, goal: str) -> list[Message]:
        body = self.joiner.join(self._blocks)
        goal = goal.strip().rstrip(".")
        if goal and goal not in body:
            body = f"Your task is to: {goal}.{self.joiner}{body}"
        return [{"role": "user", "content": cut(f"{head}\n\n{body}", self.options.chars)}]


class JsonReact(OriginalReact):
    """The anchor's JSON ReAct (StateAct's ``jsonreact`` agent, version 1): ReAct's loop with
    each output one JSON object. A thought is ``{"think": "..."}`` and is answered ``OK.``;
    an action is ``{"action": "..."}``. The transcript and the examples (ReAct's, each turn
    rewritten as its object) join blocks with a blank line::

        <observation>

        >{
        "think": "<reasoning>"
        }

        OK.

        >{
        "action": "<action>"
        }

        <observation>

    Reading, as the anchor's: code fences are dropped and a missing closing brace added; an
    output containing ``"think": "`` is a thought; the action is the object's ``action``
    (or, when the output is not valid JSON, the text after ``"action": "`` up to the next
    quote), else the whole output.
    """

    title = "ReAct (JSON, the anchor's jsonreact)"
    joiner = "\n\n"
    mark = ">"
    stop = ("\n\n",)

    def read(self, said: str) -> tuple[str, bool, str]:
        text = said.strip()
        text = text[1:].strip() if text.startswith(">") else text
        text = text.removeprefix("```json").removeprefix("```").removesuffix("```").strip()
        if not text.endswith("}"):
            text += "\n}"
        return text, '"think": "' in text, json_action(text)

    async def head(self, prompt: Any, keys: tuple[str, ...], env: Any) -> str:
        if self._head is None:
            self._head = json_examples(await super().head(prompt, keys, env))
        return self._head


def json_action(text: str, key: str = "action") -> str:
    """The action of a JSON ReAct output, read as the anchor reads it."""
    try:
        data = loads_json(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        value = data.get(key)
        return str(value) if value else text
    for sep in (f'"{key}" : "', f'"{key}": "', f'"{key}":"'):
        if sep in text:
            return text.split(sep, 1)[1].split('"')[0]
    return text


def _json_turn(line: str) -> str:
    body = line[2:]
    if body.startswith("think: "):
        return ">" + json.dumps({"think": body[len("think: ") :]}, indent=0, ensure_ascii=False)
    return ">" + json.dumps({"action": body}, indent=0, ensure_ascii=False)


def json_examples(head: str) -> str:
    """ReAct's original example lines (``> think: ...``, ``OK.``, ``> <action>``) rewritten as
    the anchor's JSON ReAct examples: each turn one object, blocks joined by a blank line."""
    out: list[str] = []
    for line in head.split("\n"):
        if line.startswith("> "):
            out.append(_json_turn(line))
        else:
            out.append(line)
    text = "\n".join(out)
    # blank lines around every turn and every observation after one (the anchor's layout)
    return re.sub(r"\n(?=>\{)|(?<=\})\n(?!\n)", "\n\n", text)
