"""``stateact`` and its ablations (seed 002): one agent, the fields it writes are a config value.

Every turn the model writes one ``key: value`` line per selected field, in the seed's order
(goal, locations visited, current location, current inventory, thought, action), the first
line starting with ``>``; an empty value is written ``None``. The action line ends the turn.

Spelling (the ``agent`` axis)::

    stateact[:<fields>][/<format>]
    <fields> ::= "all" | "none" | "" | <field> ("+" <field>)*     order-free, no repeats
    <field>  ::= "goal" | "state" | "thought"
    <format> ::= "text" | "json"                                   default text

``stateact`` alone means ``goal+state+thought``. The eight rows of seed 002's Table 6/8
(Appendix L/N) are one value each: ``stateact:none`` (Act), ``stateact:thought`` (ReAct,
also spelled ``react``), ``stateact:state``, ``stateact:state+thought``, ``stateact:goal``,
``stateact:goal+thought``, ``stateact:goal+state``, ``stateact`` (full). ``/json`` writes the
turn as one JSON object instead (Table 7, Appendix I.1), e.g. ``stateact:goal+state+thought/json``.

``state`` expands to what the observation's facts can tell: :class:`TextFacts` whose first
observation has a location give ``locations visited``, ``current location`` and ``current
inventory``; TextFacts without a location (an env with no places, e.g. Textcraft) give
``current inventory``; any other facts kind gives one generic ``current state`` line.

Decoding: on backends with ``llm.constrained`` and an admissible list, the reasoning lines are
generated freely (stopping before the action line), then the action is chosen by constrained
choice among the admissible actions; both calls are recorded (kinds ``reason`` and ``act``).
Elsewhere one call writes the whole turn (stop ``"\\n\\n"``, ``"\\n"`` for the action alone)
and the action line is parsed: a malformed action goes to the env as its raw text, a reply with
fields but no action line sends its last line; nothing ever raises.

The variants (fields, format, the spelling's parameters, the turn's description) are
:mod:`statelab.agents._stateact_variants`.

Few-shot examples (:mod:`statelab.agents.fewshot`) join the static head after the manual when
the step context names the env (``ctx.env``, e.g. ``"household"``): the examples come from its
train split.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from typing import Any

from statelab.agents._anchor import Limits, Options, cut, strict_action
from statelab.agents._conversation import Conversation
from statelab.agents._conversation import decide as conversation_decide
from statelab.agents._parse import parse_action, split_reasoning
from statelab.agents._prompting import complete_past_reasoning
from statelab.agents._stateact_variants import (
    Variant,
    format_spec,
    instruction,
    state_keys_for,
)
from statelab.agents._turn import (
    choose_action,
    parse_json_turn,
    parse_turn,
    truncate,
)
from statelab.core import (
    LLM,
    Agent,
    Call,
    ConfigError,
    Decision,
    GenParams,
    Message,
    Prompt,
    StepContext,
)
from statelab.state.prompt import messages

#: reasoning turns need room: a floor on max_tokens when a field precedes the action
REASONING_MIN_TOKENS = 320


class StateActAgent(Agent):
    """The seed-002 family (Act, ReAct, StateAct and its ablations) as one configurable agent.

    ``shots`` caps the few-shot examples put in the prompt's head (0: none).
    """

    name = "stateact"
    #: the few-shot examples' format when it is not the turn's own (ReAct's original lines)
    example_format: str | None = None

    def __init__(
        self,
        params: GenParams,
        variant: Variant | None = None,
        shots: int = 2,
        options: Options | None = None,
    ) -> None:
        self.params = params
        self.variant = variant or Variant()
        self.shots = shots
        self.options = options or Options()
        self.label = self.variant.label + (
            f" [{self.options.spelling}]" if self.options != Options() else ""
        )
        fields = set(self.variant.fields)
        self.tags = frozenset(
            {"needs-model", "structured-turns"}
            | ({"states-goal"} if "goal" in fields else set())
            | ({"tracks-state"} if "state" in fields else set())
            | ({"thinks"} if "thought" in fields else set())
            | ({"json-turns"} if self.variant.state_format == "json" else set())
        )
        self.reset()

    def reset(self, ctx: Any = None) -> None:
        self._state_keys: tuple[str, ...] | None = None
        self._head: str | None = None
        #: the running transcript (layout ``transcript``): observation and turn blocks
        self._blocks: list[str] = []
        self._seen_step: int | None = None
        self._limits = Limits(self.options)
        #: the conversation layout's messages (option ``prompt=conversation``)
        self.conversation = Conversation()

    def keys(self, obs: Any = None) -> tuple[str, ...]:
        """This episode's output keys (fixed at the first observation seen)."""
        if self._state_keys is None:
            self._state_keys = state_keys_for(getattr(obs, "facts", None))
        return self.variant.keys(self._state_keys)

    async def head(self, prompt: Prompt, keys: tuple[str, ...], env: Any) -> str:
        """The static head: manual, the turn format, then the few-shot examples.

        In the transcript layout the examples show the format (as the anchor's prompt does:
        manual, "Here are N examples:", the examples, "Here is the task."); the format is
        described only when there are no examples."""
        if self._head is None:
            fmt = self.variant.state_format
            listed = prompt.actions is not None and self.options.listed
            spec = format_spec(keys, fmt, listed)
            block = ""
            if self.shots > 0 and env:
                from statelab.agents.fewshot import examples_block

                block = await asyncio.to_thread(
                    examples_block, env, prompt.goal, keys, self.example_format or fmt, self.shots
                )
            if self.options.transcript:
                parts = [prompt.manual, block or spec]
            else:
                parts = [prompt.manual, spec, block]
            self._head = "\n\n".join(p for p in parts if p)
        return self._head

    def _transcript_messages(self, ctx: StepContext, head: str) -> list[Message]:
        """The running transcript as one user message, cut to its last ``chars`` characters."""
        obs = ctx.observation
        if self._seen_step != ctx.step:  # a new observation (not a re-decision of a step)
            self._seen_step = ctx.step
            self._blocks.append(obs.text.strip())
        body = "\n\n".join(self._blocks)
        goal = ctx.prompt.goal.strip().rstrip(".")
        if goal and goal not in body:  # an env whose first observation does not say it
            body = f"Your task is to: {goal}.\n\n{body}"
        return [{"role": "user", "content": cut(f"{head}\n\n{body}", self.options.chars)}]

    def _stop(self, output: str) -> str | None:
        return self._limits.see(output)

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        prompt = ctx.prompt
        if llm is None:
            raise ConfigError(f"agent '{self.spelling or self.variant.spelling}' needs a model")
        if self.options.conversation:
            return await conversation_decide(self, ctx, llm)
        if not self.options.listed:
            prompt = replace(prompt, actions=None)
        keys = self.keys(ctx.observation)
        fmt = self.variant.state_format
        head = await self.head(prompt, keys, ctx.env)
        if self.options.transcript:
            msgs = self._transcript_messages(ctx, head)
        else:
            msgs = messages(replace(prompt, manual=head), instruction(keys, fmt))
        reasoning = len(keys) > 1
        params = replace(self.params, seed=prompt.seed)
        if reasoning:
            params = replace(params, max_tokens=max(params.max_tokens, REASONING_MIN_TOKENS))
        if llm.constrained and prompt.actions and not self.options.strict:
            return await self._constrained(msgs, prompt.actions, params, llm, reasoning)
        params = replace(params, stop=("\n\n",) if reasoning else ("\n",))
        calls = await complete_past_reasoning(llm, msgs, params)
        thinking, said = split_reasoning(calls[-1].completion.text)
        reply = truncate(said, fmt)
        if self.options.strict:
            action, parsed = self._strict(reply, fmt)
        else:
            turn = parse_turn(reply, fmt)
            action, parsed = choose_action(reply, turn, prompt.actions)
        stored = f"{thinking}\n{reply}" if thinking else reply
        meta: dict[str, Any] = {}
        stop = self._stop(reply)
        if stop:
            meta["stop"] = stop
        if self.options.transcript:
            self._blocks.append(">" + reply.strip().lstrip(">").strip())
        return Decision(action, stored, calls, meta=meta, parsed=parsed)

    @staticmethod
    def _strict(reply: str, fmt: str) -> tuple[str, bool]:
        """The anchor's parse: JSON's ``action`` value (or text after the last
        ``action: ``), the ``put X in/on Y`` rewrite, nothing else."""
        if fmt == "json":
            turn = parse_json_turn(reply)
            if turn is not None and turn.action:
                return strict_action(turn.action), True
        action = strict_action(reply)
        return action, "action: " in reply

    async def _constrained(
        self,
        msgs: list[Message],
        actions: tuple[str, ...],
        params: GenParams,
        llm: LLM,
        reasoning: bool,
    ) -> Decision:
        """Reasoning lines free, then the action by constrained choice (two recorded calls)."""
        json_fmt = self.variant.state_format == "json"
        prefix = '"action": "' if json_fmt else "action: "
        calls: list[Call] = []
        lead = ">{" if json_fmt else ">"
        act_msgs = msgs
        if reasoning:
            stop = ('"action"', "\n\n") if json_fmt else ("\naction:", "\nAction:", "\n\n")
            first = await llm.complete(msgs, replace(params, stop=stop))
            calls.append(Call("reason", msgs, first))
            lead = _cut_before_action(first.text).rstrip().rstrip(",")
            act_msgs = [
                *msgs,
                {"role": "assistant", "content": lead},
                {"role": "user", "content": "Now write the action line."},
            ]
        choice = replace(params, stop=(), choices=actions, choice_prefix=prefix)
        second = await llm.complete(act_msgs, choice)
        calls.append(Call("act", act_msgs, second))
        text = second.text[len(prefix) :] if second.text.startswith(prefix) else second.text
        action, parsed = parse_action(f"action: {text.strip()}", actions)
        if json_fmt:
            sep = ",\n" if reasoning and not lead.endswith("{") else ""
            reply = f"{lead}{sep}{json.dumps('action')}: {json.dumps(action)}\n}}"
        else:
            reply = f"{lead}\naction: {action}" if reasoning else f">action: {action}"
        return Decision(action, reply, calls, parsed=parsed)


def _cut_before_action(text: str) -> str:
    m = re.search(r'(?:^|\n)[^\S\n]*(?:action\s*[:：]|"action"\s*:)', text, re.IGNORECASE)
    return text[: m.start()] if m else text


__all__ = ["StateActAgent"]
