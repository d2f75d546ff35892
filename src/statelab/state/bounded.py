"""Bounded histories (seed 003, section 3 and Appendix C): a state of at most B tokens.

- ``last-k:B``: the recent raw steps that fit in B tokens, newest kept first, plus the last
  action (the seed's LASTK context). No model.
- ``bounded:<form>:B`` with form ``summary | guide | belief | slots``: a *writer* rewrites the
  state every step from (goal, previous state, last action, new observation), asked for at
  most B tokens; the four forms differ only in the retention instruction (Appendix C):
  SUMMARY an updated account, GUIDE a hand-written retention guideline (the recipe verbatim,
  locations and room connections, progress), BELIEF confidence-tagged claims, SLOTS three
  labelled slots. A reply over B tokens is cut to its longest word prefix within B and the
  state records it (``overflowed``, and ``overflows`` over the episode).
- ``oracle-bounded:B``: the env's privileged facts (``privileged.facts``: for ``cooking`` the
  recipe, where each needed ingredient and tool is, the player's room) rendered and cut to B
  tokens. Tagged ``reads-privileged``; it calls no model, so no writer ever sees it.

Budgets are counted with the tokenizer of the model the loop passes to ``write`` (the writer
model: the acting model's unless the ``writer`` axis names another; in seed 003 both share a
tokenizer), via ``LLM.count_tokens``. Where no model is at hand (``init``, the expert row) a
conservative estimate is used: one token per 3 characters, rounded up, which over-counts
English for the tokenizers tried (SmolLM2: about 4 characters a token). A state's text never
exceeds B by the count it was cut with.

States are frozen dataclasses: writing returns a new one, so forking a state (K candidate
rewrites) is a copy of a reference. The budget B is part of the spelling; the state's text is
what the reader sees (``render`` adds a one-line header, not counted in B).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from statelab.core import (
    LLM,
    BuildContext,
    Call,
    ConfigError,
    GenParams,
    Memory,
    Observation,
    PrivilegedView,
    Transition,
)
from statelab.state.formats import render
from statelab.state.history import HISTORIES, RenderObs, call_seed

#: the budgets of the seed (any whole number in [MIN_B, MAX_B] is accepted)
BUDGETS = (64, 128, 256)
MIN_B, MAX_B = 8, 4096
Count = Callable[[str], int]


def estimate(text: str) -> int:
    """A conservative token count where no tokenizer is at hand: 1 token per 3 characters."""
    return math.ceil(len(text) / 3)


def counter(model: LLM | None) -> Count:
    return model.count_tokens if model is not None else estimate


def fit(text: str, budget: int, count: Count) -> tuple[str, bool]:
    """``text`` cut to its longest word prefix of at most ``budget`` tokens, and whether it
    had to be cut."""
    text = " ".join(text.split()) if count(text) > budget else text
    if count(text) <= budget:
        return text, False
    words = text.split(" ")
    lo, hi = 0, len(words)  # the longest prefix of lo words fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(" ".join(words[:mid])) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]), True


def parse_budget(name: str, arg: str | None) -> int:
    if arg is None or not arg.isdigit() or not MIN_B <= int(arg) <= MAX_B:
        raise ConfigError(
            f"history '{name}:{arg or ''}' needs a token budget B from {MIN_B} to {MAX_B}, "
            f"e.g. {name}:128"
        )
    return int(arg)


# -- last-k ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class LastKState:
    #: every step so far (action, observation text), oldest first, at most B of them
    steps: tuple[tuple[str, str], ...] = ()
    #: the rendered context: the recent steps that fit in B tokens, plus the last action
    text: str = ""
    t: int = 0


class LastKMemory(Memory):
    """The recent raw steps that fit in B tokens, plus the last action (seed 003's LASTK)."""

    name = "last-k"

    def __init__(self, render_obs: RenderObs, budget: int) -> None:
        self.render_obs = render_obs
        self.budget = budget

    def init(self, obs: Observation, privileged: PrivilegedView | None) -> LastKState:
        return LastKState()

    async def write(
        self, state: LastKState, transition: Transition, model: LLM | None
    ) -> tuple[LastKState, list[Call]]:
        count = counter(model)
        step = (transition.action, self.render_obs(transition.observation))
        steps = (*state.steps, step)[-self.budget :]
        head = f"Last action: {transition.action}"
        kept: list[str] = []
        for action, text in reversed(steps):
            candidate = "\n".join([head, *reversed([*kept, f"> {action}\n{text}"])])
            if count(candidate) > self.budget:
                break
            kept.append(f"> {action}\n{text}")
        body = "\n".join([head, *reversed(kept)])
        text, _ = fit(body, self.budget, count)  # the last action alone may not fit
        return LastKState(steps, text, state.t + 1), []

    def render(self, state: LastKState) -> str:
        return f"Recent steps (within {self.budget} tokens):\n{state.text}" if state.text else ""


# -- prompted writers -----------------------------------------------------------------------
WRITER_SYSTEM = (
    "You maintain the written state of an agent playing a text game. The agent will not see "
    "the history again: only your state and its next observation."
)
#: the retention instruction of each form (Appendix C)
FORMS: dict[str, str] = {
    "summary": (
        "Rewrite the state as an updated account of the task so far: what the agent knows, "
        "what it has done and what remains."
    ),
    "guide": (
        "Rewrite the state following these rules, in this priority: (1) keep the recipe (its "
        "ingredients and every direction) word for word once it is known; (2) keep where each "
        "ingredient and tool was seen, and how the rooms connect (which exit leads where); "
        "(3) keep what has been done (taken, cut, cooked) and what remains. Drop everything "
        "else."
    ),
    "belief": (
        "Rewrite the state as a list of claims about the world, one per line, each tagged with "
        "your confidence: '- [high] ...', '- [medium] ...' or '- [low] ...'. Revise claims "
        "that the new observation confirms or contradicts."
    ),
    "slots": (
        "Rewrite the state as exactly three labelled slots, each on its own line:\n"
        "TASK: what the task requires (e.g. the recipe)\n"
        "WORLD: where things are and how places connect\n"
        "PROGRESS: what is done and what remains"
    ),
}


@dataclass(frozen=True)
class WrittenState:
    goal: str
    text: str = ""
    t: int = 0
    #: whether the last write overflowed B (and was cut), and how many writes did so far
    overflowed: bool = False
    overflows: int = 0


class BoundedWriter(Memory):
    """A writer that rewrites a state of at most B tokens each step (seed 003's W)."""

    name = "bounded"
    tags = frozenset({"needs-model"})

    def __init__(
        self,
        render_obs: RenderObs,
        form: str,
        budget: int,
        seed: int = 0,
        params: GenParams | None = None,
    ) -> None:
        self.render_obs = render_obs
        self.form = form
        self.budget = budget
        self.seed = seed
        base = params or GenParams()
        # room to overflow, so a writer ignoring the budget is cut and recorded
        self.params = GenParams(
            temperature=base.temperature, top_p=base.top_p, max_tokens=budget + 32
        )

    def init(self, obs: Observation, privileged: PrivilegedView | None) -> WrittenState:
        return WrittenState(goal=obs.goal)

    def messages(self, state: WrittenState, transition: Transition) -> list[dict[str, Any]]:
        """The writer's prompt: goal, previous state, last action, new observation, budget."""
        previous = state.text or "(empty: nothing written yet)"
        user = (
            f"Goal: {state.goal}\n\nPrevious state:\n{previous}\n\n"
            f"Last action: {transition.action}\n\n"
            f"New observation:\n{self.render_obs(transition.observation)}\n\n"
            f"{FORMS[self.form]}\nThe state must be at most {self.budget} tokens. "
            "Reply with the new state only."
        )
        return [{"role": "system", "content": WRITER_SYSTEM}, {"role": "user", "content": user}]

    async def write(
        self, state: WrittenState, transition: Transition, model: LLM | None
    ) -> tuple[WrittenState, list[Call]]:
        if model is None:
            raise ConfigError(f"history {self.spelling!r} needs a writer model")
        t = state.t + 1
        msgs = self.messages(state, transition)
        params = replace(self.params, seed=call_seed(self.seed, t, f"write-{self.form}"))
        completion = await model.complete(msgs, params)
        text, cut = fit(completion.text.strip(), self.budget, model.count_tokens)
        new = WrittenState(state.goal, text, t, cut, state.overflows + int(cut))
        return new, [Call(f"write-{self.form}", msgs, completion)]

    def render(self, state: WrittenState) -> str:
        return f"Your state (at most {self.budget} tokens):\n{state.text}" if state.text else ""


# -- the privileged oracle ------------------------------------------------------------------
@dataclass(frozen=True)
class OracleState:
    text: str
    #: whether the truth had to be cut to fit B
    cut: bool = False


class OracleBounded(Memory):
    """The env's privileged facts rendered within B tokens (seed 003's ORACLE-B)."""

    name = "oracle-bounded"
    tags = frozenset({"reads-privileged"})

    def __init__(self, budget: int, fmt: str = "natural") -> None:
        self.budget = budget
        self.format = fmt

    def _state(self, privileged: PrivilegedView | None, count: Count) -> OracleState:
        if privileged is None or privileged.facts is None:
            raise ConfigError(f"history '{self.spelling}' needs the env's privileged facts")
        text, cut = fit(render(self.format, privileged.facts), self.budget, count)
        return OracleState(text, cut)

    def init(self, obs: Observation, privileged: PrivilegedView | None) -> OracleState:
        return self._state(privileged, estimate)

    async def write(
        self, state: OracleState, transition: Transition, model: LLM | None
    ) -> tuple[OracleState, list[Call]]:
        return self._state(transition.privileged, counter(model)), []

    def render(self, state: OracleState) -> str:
        return f"The true state (at most {self.budget} tokens):\n{state.text}"


# -- registration ---------------------------------------------------------------------------
@HISTORIES.register("last-k", "last-k:<B>")
def _last_k(arg: str | None, c: BuildContext) -> Memory:
    return LastKMemory(c.render_obs, parse_budget("last-k", arg))


@HISTORIES.register("bounded", "bounded:summary|guide|belief|slots:<B>", tags=("needs-model",))
def _bounded(arg: str | None, c: BuildContext) -> Memory:
    form, _, budget = (arg or "").partition(":")
    if form not in FORMS:
        raise ConfigError(
            f"history 'bounded:{arg or ''}' needs a form ({'|'.join(FORMS)}) and a budget, "
            "e.g. bounded:summary:128"
        )
    return BoundedWriter(
        c.render_obs, form, parse_budget(f"bounded:{form}", budget or None), c.seed, c.params
    )


@HISTORIES.register("oracle-bounded", "oracle-bounded:<B>", tags=("reads-privileged",))
def _oracle_bounded(arg: str | None, c: BuildContext) -> Memory:
    return OracleBounded(parse_budget("oracle-bounded", arg), c.format)
