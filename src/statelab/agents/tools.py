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
    tools:short              short descriptions without the collision check
    tools:k=5+n=250+seed=0   the library: K medoids, n geodesics, sampling seed (defaults)
    tools:cars=25            cars of the grid the geodesics are sampled in (default 25)
    plan:5                   five primitive actions proposed by the model (plan = plan:5)
    plan:5+think             ... with a written rationale first
    think=N                  thinking with a budget of N generated tokens (default 1024)

- ``cc`` (collision check, appendix A.2): every tool is replayed against the cars visible
  now; only the survivors are offered (with their descriptions). None survives: wait
  (``WWWWW``); exactly one: it is taken without a model call. Such a decision has no calls.
- ``think``: reasoning on. The model first writes a short rationale ("Thought: ..."), then
  the choice; on constrained backends these are two calls (free rationale, then constrained
  choice), elsewhere one. Off: the choice alone (one call).
- On backends with ``llm.constrained`` the choice is constrained to ``Tool: <offered name>``
  (``Plan: <k letters over W,U,D,L,R>``); elsewhere the reply is parsed
  (:func:`parse_tool`, :func:`parse_plan`). An unreadable tool choice waits (``WWWWW``); an
  unreadable plan is passed on as written and the env refuses it (nothing moves).

Every decision stores its metadata in the step's ``meta``:
``model_call`` (False for decisions taken by the collision check alone), ``thinking``,
``generated`` (tokens the model generated for it) and ``offered`` (the tools offered).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

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
from statelab.facts import TrafficFacts as _Facts
from statelab.tools.describe import LIBRARY_HEADER
from statelab.tools.geodesics import PRIMITIVES, TOOL_LEN
from statelab.tools.library import LibrarySpec, ToolLibrary, build_library

WAIT = "W" * TOOL_LEN
DEFAULT_THINK_TOKENS = 1024
_WORDS = {"wait": "W", "stay": "W", "hold": "W", "up": "U", "down": "D", "left": "L", "right": "R"}
_LABEL = re.compile(
    r"^(?:[^\S\n]|[>*_#-])*(?:final\s+)?(tool|plan|action|answer|choice)\s*[:：]\s*(.*)$",
    re.I | re.M,
)


@dataclass(frozen=True)
class Options:
    """One spelling of ``tools`` or ``plan`` (see the module docstring)."""

    kind: str
    collision_check: bool = False
    form: str | None = None
    thinking: bool = False
    think_tokens: int = DEFAULT_THINK_TOKENS
    k: int = 5
    n: int = 250
    seed: int = 0
    cars: int = 25

    @property
    def description_form(self) -> str:
        return self.form or ("short" if self.collision_check else "long")


def parse_options(kind: str, arg: str | None) -> Options:
    """``tools``/``plan`` options from the part of a spelling after the colon."""
    opts: dict[str, Any] = {"kind": kind}
    flags = {"think"} | ({"cc", "short", "long"} if kind == "tools" else set())
    numbers = {"think", "k", "n", "seed", "cars"} if kind == "tools" else {"think"}
    for i, token in enumerate(t.strip() for t in (arg or "").split("+") if t.strip()):
        name, sep, value = token.partition("=")
        if kind == "plan" and i == 0 and token.isdigit():
            name, sep, value = "k", "=", token
        elif sep and name in numbers:
            if not value.isdigit() or int(value) < (0 if name == "seed" else 1):
                raise ConfigError(f"agent {kind}:{arg}: {name} needs a positive number")
        elif sep or name not in flags:
            allowed = sorted(flags) + [f"{n}=N" for n in sorted(numbers)]
            raise ConfigError(
                f"agent {kind}:{arg}: unknown option {token!r}; allowed: {', '.join(allowed)}"
            )
        if name == "cc":
            opts["collision_check"] = True
        elif name in ("short", "long"):
            opts["form"] = name
        elif name == "think":
            opts["thinking"] = True
            if sep:
                opts["think_tokens"] = int(value)
        else:
            opts[name] = int(value)
    return Options(**opts)


# -- parsing free replies --------------------------------------------------------------------
def _labelled(reply: str) -> str | None:
    found = _LABEL.findall(reply)
    return found[-1][1].strip() if found else None


def parse_tool(reply: str, names: Sequence[str]) -> str | None:
    """The tool a free reply names: the last ``Tool:`` (or ``Action:``/``Answer:``) line's
    name, or its 1-based index, or the only tool name written in that line or, failing that,
    anywhere in the reply; None when no single tool is named."""
    wanted = {n.upper(): n for n in names}
    line = _labelled(reply)
    if line is not None:
        word = re.sub(r"[\"'`*.,;!()\[\]]", " ", line).split()
        if word and word[0].upper() in wanted:
            return wanted[word[0].upper()]
        if word and word[0].isdigit() and 1 <= int(word[0]) <= len(names):
            return names[int(word[0]) - 1]
        tokens = re.findall(r"\b[WUDLR]{5}\b", line, re.I)
        found = {wanted[t.upper()] for t in tokens if t.upper() in wanted}
        if len(found) == 1:
            return found.pop()
    everywhere = {wanted[t] for t in re.findall(r"\b[WUDLR]{5}\b", reply) if t in wanted}
    return everywhere.pop() if len(everywhere) == 1 else None


def _letters(text: str, k: int) -> str | None:
    text = re.sub(r"[\"'`*.!]", " ", text).strip()
    squeezed = re.sub(r"[\s,;\-]+", "", text)
    if re.fullmatch(rf"[WUDLRwudlr]{{{k}}}", squeezed) and len(text.split()) in (1, k):
        return squeezed.upper()
    words = [w for w in re.split(r"[\s,;]+", text.lower()) if w]
    if len(words) == k and all(w in _WORDS for w in words):
        return "".join(_WORDS[w] for w in words)
    return None


def parse_plan(reply: str, k: int = TOOL_LEN) -> str | None:
    """``k`` primitive actions from a free reply: the last ``Plan:``/``Action:`` line as
    ``k`` letters over W,U,D,L,R (``DRDRD``, ``D R D R D``) or ``k`` words (``down right
    ...``); else the first non-empty line so written; else the only such letter group in the
    reply. None when the reply holds no plan (missing or malformed)."""
    line = _labelled(reply)
    first = next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")
    for text in (line, first):
        if text:
            got = _letters(text, k)
            if got:
                return got
    groups = set(re.findall(rf"\b[WUDLR]{{{k}}}\b", reply))
    return groups.pop() if len(groups) == 1 else None


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
) -> tuple[str, list[Call]]:
    """One choice, reasoning first when ``thinking``: constrained to ``label: <choice>``
    when ``choices`` are given and the backend can, free otherwise. Returns the full reply
    (rationale then answer line) and the calls made."""
    prefix = f"{label}: "
    constrained = bool(choices) and llm.constrained
    calls: list[Call] = []
    thought = ""
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
            spec = LibrarySpec.from_facts(facts, n_cars=o.cars, n=o.n, k=o.k, seed=o.seed)
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
            system, body = f"{prompt.manual}\n\n{library.text()}", ""
        names = ", ".join(offered)
        instruction = (
            _think_instruction("tool", "Tool", "<tool name>") + f" The tools: {names}."
            if o.thinking
            else "Choose the tool that best brings you toward the target without being hit. "
            f'Reply with one line: "Tool: <tool name>", one of: {names}.'
        )
        msgs = _messages(system, prompt, body, instruction)
        params = replace(self.params, seed=prompt.seed)
        reply, calls = await _ask(
            llm, msgs, params, "Tool", tuple(offered), o.thinking, o.think_tokens, "tools"
        )
        choice = parse_tool(reply, offered)
        generated = sum(c.completion.usage.output_tokens for c in calls)
        step_meta = _meta(model_call=True, generated=generated, **meta)
        return Decision(choice or WAIT, reply, calls, step_meta, parsed=choice is not None)


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
            if o.thinking
            else f'Plan your next {k} actions. Reply with one line: "Plan: <{what}>", for '
            f'example "Plan: {example}".'
        )
        msgs = _messages(prompt.manual, prompt, "", instruction)
        choices = None
        if llm.constrained and len(PRIMITIVES) ** k <= self.MAX_CONSTRAINED:
            choices = tuple("".join(p) for p in itertools.product(PRIMITIVES, repeat=k))
        params = replace(self.params, seed=prompt.seed)
        reply, calls = await _ask(
            llm, msgs, params, "Plan", choices, o.thinking, o.think_tokens, "plan"
        )
        plan = parse_plan(reply, k)
        generated = sum(c.completion.usage.output_tokens for c in calls)
        step_meta = _meta(model_call=True, thinking=o.thinking, generated=generated)
        if plan is None:
            raw = _labelled(reply)
            return Decision(
                raw if raw is not None else reply.strip(), reply, calls, step_meta, False
            )
        return Decision(plan, reply, calls, step_meta)
