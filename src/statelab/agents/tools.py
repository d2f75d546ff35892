"""``tools`` and ``plan``: seed 001's orchestrator and its direct-query baseline.

``tools`` picks one tool, by name, from a geometry-derived library (geodesics -> k-medoids ->
primitives added -> described by the model offline: :mod:`statelab.tools.library`); the
env then executes the tool's five actions open-loop. ``plan`` asks the model for the next
``k`` primitive actions itself (the seed's "queried directly on the raw grid observation").

Spellings: the agent's name, then options joined by ``+`` in any order::

    tools                    all tools offered, long descriptions
    tools:cc                 collision check (implies short descriptions)
    tools:cc+think           ... with a written rationale before the choice
    tools:cc+long            collision check with the long descriptions
    tools:cc+json            the anchor's decision: a JSON object with ``chosen_tool`` limited
                             to the safe tools by a JSON schema (structured output)
    tools:short              short descriptions without the collision check
    tools:k=5+n=250+seed=0   the library: K medoids, n geodesics, sampling seed (defaults)
    tools:cars=25            cars of the grid the geodesics are sampled in (default 25)
    tools:visible            geodesics planned with the cars visible from their start only
                             (default: every car, as seed 001's code plans them)
    tools:random             ties between geodesics broken at random (default: frontier
                             order, as seed 001's code: all downs then rights when clear)
    plan:5                   five primitive actions proposed by the model (plan = plan:5)
    plan:5+think             ... with a written rationale first
    plan:5+wait              an unreadable plan waits (time passes), as seed 001's code
    kin                      (tools or plan) the prompt explains closing speeds, as seed
                             001's prompt without the collision check does
    think=N                  thinking with a budget of N generated tokens (default 1024)

- ``cc`` (collision check, appendix A.2): every tool is replayed against the cars visible
  now; only the survivors are offered (with their descriptions). None survives: wait
  (``WWWWW``); exactly one: it is taken without a model call. Such a decision has no calls.
- ``think``: reasoning on. The model first writes a short rationale ("Thought: ..."), then
  the choice; on constrained backends these are two calls (free rationale, then constrained
  choice), elsewhere one. Off: the choice alone (one call).
- On backends with ``llm.constrained`` the choice is constrained to ``Tool: <offered name>``
  (``Plan: <k letters over W,U,D,L,R>``); elsewhere the reply is parsed
  (:func:`parse_tool`, :func:`parse_plan`). An unreadable tool choice is a random offered
  tool with the collision check (never one the check removed: seed 001's code does the same),
  and waits (``WWWWW``) without it; an unreadable plan is passed on as written and the env
  refuses it (nothing moves).
- ``json``: the decision as seed 001's code asks for it: one JSON object (where the target is,
  from the window, from the close-up and both; a justification; ``chosen_tool``) sent with
  its JSON schema as structured output (``GenParams.json_schema``: ``response_format`` on
  OpenAI-compatible servers, a grammar on llama.cpp), ``chosen_tool`` an enum of the offered
  tools. ``think=N`` then only makes room (max_tokens N) for the model's own reasoning mode.

Every decision stores its metadata in the step's ``meta``:
``model_call`` (False for decisions taken by the collision check alone), ``thinking``,
``generated`` (tokens the model generated for it) and ``offered`` (the tools offered).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from typing import Any

from statelab.agents._parse import split_reasoning
from statelab.agents._prompting import complete_past_reasoning
from statelab.agents._tool_options import Options
from statelab.agents._tool_replies import (
    JSON_MIN_TOKENS,
    WAIT,
    decision_schema,
    json_instruction,
    labelled,
    parse_json_choice,
    parse_plan,
    parse_tool,
    safe_fallback,
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
from statelab.envs.traffic_world import PRIMITIVES, TOOL_LEN
from statelab.facts import TrafficFacts as _Facts
from statelab.tools.describe import LIBRARY_HEADER
from statelab.tools.library import LibrarySpec, ToolLibrary, build_library


# -- shared decision machinery ---------------------------------------------------------------
def _meta(**fields: Any) -> dict[str, Any]:
    """What seed 001's Table 1 reads of a decision (stored in the step's ``meta``)."""
    return dict(fields)


def _tags(o: Options, *more: str) -> frozenset[str]:
    flags = (("thinks",) if o.thinking else ()) + (
        ("collision-check",) if o.collision_check else ()
    )
    return frozenset({"needs-model", *more, *flags})


def _messages(system: str, prompt: Prompt, body: str, instruction: str) -> list[Message]:
    text = (
        f"{prompt.view}\n\n{body}\n\n{instruction}" if body else f"{prompt.view}\n\n{instruction}"
    )
    content: Any = [{"type": "text", "text": text}, *prompt.images] if prompt.images else text
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


async def _ask(
    llm: LLM,
    msgs: list[Message],
    params: GenParams,
    label: str,
    choices: tuple[str, ...] | None,
    thinking: bool,
    think_tokens: int,
    kind: str,
    native: bool = False,
) -> tuple[str, list[Call]]:
    """One choice, reasoning first when ``thinking``: constrained to ``label: <choice>``
    when ``choices`` are given and the backend can, free otherwise. Returns the full reply
    (rationale then answer line) and the calls made."""
    prefix = f"{label}: "
    constrained = bool(choices) and llm.constrained
    calls: list[Call] = []
    thought = ""
    if native:  # the model's own reasoning mode: one call, its reasoning comes back as <think>
        room = replace(
            params,
            reasoning=True,
            max_tokens=max(params.max_tokens, think_tokens + 64),
            stop=(),
            choices=None,
        )
        c = await llm.complete(msgs, room)
        return c.text, [Call(kind, msgs, c)]
    if thinking:
        stop = (f"\n{label}:",) if constrained else ()
        think_params = replace(params, max_tokens=think_tokens, stop=stop, choices=None)
        c = await llm.complete(msgs, think_params)
        calls.append(Call(f"{kind}-think" if constrained else kind, msgs, c))
        if not constrained:
            return c.text, calls
        thought = c.text.strip()
        msgs = [
            *msgs,
            {"role": "assistant", "content": thought},
            {"role": "user", "content": f'Now give your final answer: one line "{prefix}...".'},
        ]
    if constrained:
        c = await llm.complete(
            msgs, replace(params, choices=choices, choice_prefix=prefix, stop=())
        )
    else:
        c = await llm.complete(msgs, replace(params, stop=("\n\n",), choices=None))
    calls.append(Call(kind, msgs, c))
    return (f"{thought}\n{c.text}" if thought else c.text), calls


#: how fast cars close in, for prompts without the collision check (our words for what seed
#: 001's prompt explains)
KINEMATICS = (
    "How fast danger closes in: cars move up one row per step. Moving down, you and a car "
    "below you in your column close in by two rows per step; waiting or moving sideways, by "
    "one row per step; moving up, you move with the traffic. So k steps down a column are "
    "threatened by a car up to about 2k rows below where they start, and k steps of waiting "
    "or sideways moves in a cell by a car up to k rows below it."
)


def _with_kinematics(system: str, o: Options) -> str:
    return f"{system}\n\n{KINEMATICS}" if o.kinematics else system


def _think_instruction(what: str, label: str, example: str) -> str:
    return (
        'First think briefly, in a few sentences starting with "Thought:": where is the '
        "target relative to you, which cars are near and where they will be, and which "
        f'{what} is safe and brings you closer. Then finish with one line "{label}: '
        f'{example}".'
    )


class ToolsAgent(Agent):
    """Chooses one tool of the library per decision (``tools[:options]``)."""

    name = "tools"

    def __init__(
        self, params: GenParams, options: Options | None = None, library: ToolLibrary | None = None
    ) -> None:
        self.params = params
        self.options = options or Options("tools")
        self.library = library
        self.tags = _tags(self.options, "uses-tools")

    async def _library(self, facts: Any, llm: LLM | None) -> ToolLibrary:
        if self.library is None:
            if not isinstance(facts, _Facts):
                raise ConfigError(
                    "agent 'tools' needs the moving-car grid (env traffic): its tools are "
                    "geodesics of that grid"
                )
            o = self.options
            spec = LibrarySpec.from_facts(
                facts, o.visible, n_cars=o.cars, n=o.n, k=o.k, seed=o.seed, ties=o.ties
            )
            self.library = await build_library(spec, llm, o.description_form, self.params)
        return self.library

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        prompt = ctx.prompt
        if llm is None:
            raise ConfigError("agent 'tools' needs a model")
        o = self.options
        facts = ctx.observation.facts
        library = await self._library(facts, llm)
        offered = library.safe(facts) if o.collision_check else list(library.names)
        meta = {"thinking": o.thinking, "offered": offered, "library": library.key}
        if o.collision_check and len(offered) <= 1:
            action = offered[0] if offered else WAIT
            why = "only one tool is safe" if offered else "no tool avoids the visible cars"
            reply = f"(collision check: {why}; {action} taken without a model call)"
            return Decision(
                action, reply, [], _meta(model_call=False, generated=0, **meta), parsed=True
            )
        if o.collision_check:
            system = prompt.manual
            body = (
                f"{LIBRARY_HEADER}\n\nA code check has removed every tool that would hit a car "
                "you can see now (cars you cannot see are not checked). The safe tools are:\n\n"
                + library.text(offered).split("Available tools are:\n\n", 1)[1]
            )
        else:
            system, body = f"{_with_kinematics(prompt.manual, o)}\n\n{library.text()}", ""
        if o.json:
            return await self._json_decision(llm, system, prompt, body, offered, meta)
        names = ", ".join(offered)
        instruction = (
            _think_instruction("tool", "Tool", "<tool name>") + f" The tools: {names}."
            if o.thinking and not o.native
            else "Choose the tool that best brings you toward the target without being hit. "
            f'Reply with one line: "Tool: <tool name>", one of: {names}.'
        )
        msgs = _messages(system, prompt, body, instruction)
        params = replace(self.params, seed=prompt.seed)
        reply, calls = await _ask(
            llm, msgs, params, "Tool", tuple(offered), o.thinking, o.think_tokens, "tools", o.native
        )
        choice = parse_tool(split_reasoning(reply)[1] or reply, offered)
        generated = sum(c.completion.usage.output_tokens for c in calls)
        step_meta = _meta(model_call=True, generated=generated, **meta)
        fallback = safe_fallback(offered, prompt.seed) if o.collision_check else WAIT
        return Decision(choice or fallback, reply, calls, step_meta, parsed=choice is not None)

    async def _json_decision(
        self,
        llm: LLM,
        system: str,
        prompt: Prompt,
        body: str,
        offered: list[str],
        meta: dict[str, Any],
    ) -> Decision:
        """The anchor's decision: a JSON object (where the target is, a justification, then
        ``chosen_tool``), its schema sent as structured output with ``chosen_tool`` limited to
        the offered tools. An unreadable or unoffered choice is a random offered tool (with
        the collision check: a random *safe* tool, never an unsafe one)."""
        o = self.options
        msgs = _messages(system, prompt, body, json_instruction(offered))
        params = replace(
            self.params,
            seed=prompt.seed,
            stop=(),
            json_schema=json.dumps(decision_schema(offered)),
            max_tokens=max(
                self.params.max_tokens, JSON_MIN_TOKENS, o.think_tokens if o.thinking else 0
            ),
            reasoning=o.native,
        )
        calls = await complete_past_reasoning(llm, msgs, params, "tools")
        reply = calls[-1].completion.text
        choice = parse_json_choice(reply, offered)
        generated = sum(c.completion.usage.output_tokens for c in calls)
        step_meta = _meta(model_call=True, generated=generated, **meta)
        if choice is None:
            step_meta["fallback"] = "random offered tool"
        action = choice or safe_fallback(offered, prompt.seed)
        return Decision(action, reply, calls, step_meta, parsed=choice is not None)


class PlanAgent(Agent):
    """The model proposes the next ``k`` primitive actions (``plan[:k][+think]``)."""

    name = "plan"
    #: constrained decoding enumerates every plan: only for short plans
    MAX_CONSTRAINED = 5**6

    def __init__(self, params: GenParams, options: Options | None = None) -> None:
        self.params = params
        self.options = options or Options("plan")
        self.tags = _tags(self.options, "plans-moves")

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        prompt = ctx.prompt
        if llm is None:
            raise ConfigError("agent 'plan' needs a model")
        o, k = self.options, self.options.k
        example = "DRDRD"[:k] if k <= 5 else "D" * k
        what = f"{k} letters over W, U, D, L, R"
        instruction = (
            _think_instruction(f"sequence of {k} actions", "Plan", f"<{what}>")
            if o.thinking and not o.native
            else f'Plan your next {k} actions. Reply with one line: "Plan: <{what}>", for '
            f'example "Plan: {example}".'
        )
        msgs = _messages(_with_kinematics(prompt.manual, o), prompt, "", instruction)
        choices = None
        if llm.constrained and len(PRIMITIVES) ** k <= self.MAX_CONSTRAINED:
            choices = tuple("".join(p) for p in itertools.product(PRIMITIVES, repeat=k))
        params = replace(self.params, seed=prompt.seed)
        reply, calls = await _ask(
            llm, msgs, params, "Plan", choices, o.thinking, o.think_tokens, "plan", o.native
        )
        plan = parse_plan(split_reasoning(reply)[1] or reply, k)
        generated = sum(c.completion.usage.output_tokens for c in calls)
        step_meta = _meta(model_call=True, thinking=o.thinking, generated=generated)
        if plan is None and o.wait_invalid:
            step_meta["invalid"] = "waited"
            return Decision(WAIT[:k] if k <= TOOL_LEN else "W" * k, reply, calls, step_meta, False)
        if plan is None:
            raw = labelled(reply)
            return Decision(
                raw if raw is not None else reply.strip(), reply, calls, step_meta, False
            )
        return Decision(plan, reply, calls, step_meta)
