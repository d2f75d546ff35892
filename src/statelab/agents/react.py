"""``react``: a thought, then the action (Yao et al. 2023, as seed 002 runs it).

ReAct is exactly the StateAct family's ``thought`` row (seed 002, Table 6: "Thought+Act
(ReAct)"), so ``react`` builds the same agent as ``stateact:thought``: one turn

    >thought: <reasoning>
    action: <action>

ReAct's original stop at ``"\\n"`` ends a thought in a two-call loop (thought, then action);
here one call writes both lines, so the reply is cut at the end of the action line instead.
``react:json`` is the ReAct row of Table 7 (``stateact:thought/json``).
``react:original`` is ReAct's own format (``> think: ...`` answered ``OK.``; the anchor's
ReAct baseline), see :class:`OriginalReact`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from statelab.agents._anchor import cut, parse_options, strict_action
from statelab.agents._parse import parse_action, split_reasoning
from statelab.agents._prompting import complete_past_reasoning
from statelab.agents.stateact import StateActAgent, Variant
from statelab.core import LLM, Call, ConfigError, Decision, GenParams, Message, StepContext

REACT = Variant(("thought",))


def react_variant(arg: str | None) -> Variant:
    """``react[:text|json]`` as a StateAct variant."""
    if arg in (None, "", "text", "original"):
        return REACT
    if arg == "json":
        return Variant(("thought",), "json")
    raise ConfigError(
        f"agent 'react:{arg}': allowed: react, react:text, react:json, react:original"
    )


def make_react(arg: str | None, params: GenParams) -> StateActAgent:
    """``react[:text|json|original][/<option>...]`` (options: :mod:`statelab.agents._anchor`)."""
    form, *rest = (arg or "").split("/")
    options = parse_options(rest, f"react:{arg}")
    if form == "original":
        agent: StateActAgent = OriginalReact(
            params, REACT, options=replace(options, transcript=True)
        )
        agent.name = "react"
        agent.label = "ReAct (original format)" + (
            f" [{options.spelling}]" if options.spelling else ""
        )
        return agent
    agent = StateActAgent(params, react_variant(form or None), options=options)
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
        params = replace(self.params, seed=prompt.seed, stop=("\n",))
        line, thinking, is_thought = "", "", False
        for i in range(self.MAX_THINKS + 1):
            msgs = self._react_messages(head, prompt.goal)
            got = await complete_past_reasoning(llm, msgs, replace(params, seed=prompt.seed + i))
            thinking, said = split_reasoning(got[-1].completion.text)
            line = said.strip().lstrip(">").strip()
            is_thought = line.lower().startswith("think:")
            calls += [*got[:-1], Call("think" if is_thought else "act", msgs, got[-1].completion)]
            stop = self._limits.see(line)
            if stop:
                meta["stop"] = stop
                break
            self._blocks.append(f"> {line}")
            if not is_thought or (self.options.calls is None and i == self.MAX_THINKS):
                break
            thoughts.append(line)
            self._blocks.append("OK.")
        if self.options.strict:
            action, parsed = strict_action(line), bool(line) and not is_thought
        else:
            action, parsed = parse_action(f"action: {line}", prompt.actions)
        reply = "\n".join([*thoughts, line])
        if thinking:
            reply = f"{thinking}\n{reply}"
        return Decision(action, reply, calls, meta=meta, parsed=parsed)

    def _react_messages(self, head: str, goal: str) -> list[Message]:
        body = "\n".join(self._blocks)
        goal = goal.strip().rstrip(".")
        if goal and goal not in body:
            body = f"Your task is to: {goal}.\n{body}"
        return [{"role": "user", "content": cut(f"{head}\n\n{body}", self.options.chars)}]
