"""The granularity axis (seed 000, section 3.2): what of the past the prompt carries.

- ``full``: the last k steps verbatim, k = the env's Table 2 history length (Long Form).
- ``window:k``: the last k steps verbatim.
- ``none``: no past at all (memoryless, as seed 001's agent).
- ``summary``: a rolling summary m_t = psi(m_{t-1}, o_t, a_t, r_t) written by the same model
  after every step, asked for at most 25 tokens; it replaces the history in the prompt.
- ``oracle-summary``: the simulator's true current state (rendered in the run's format) and
  the goal, in place of the model's summary (seed 000, section 4.1.4). Reads privileged info.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from statelab.core import (
    LLM,
    Args,
    BuildContext,
    Call,
    ConfigError,
    GenParams,
    Memory,
    Observation,
    Param,
    PrivilegedView,
    Registry,
    Transition,
    count,
)
from statelab.facts import render

RenderObs = Callable[[Observation], str]
HISTORIES: Registry[Memory] = Registry("history")


def call_seed(seed: int, step: int, kind: str) -> int:
    """A replayable sampling seed for one model call of an episode."""
    return zlib.crc32(f"{seed}:{step}:{kind}".encode()) & 0x7FFFFFFF


def step_text(t: int, action: str, reward: float, text: str, reply: str = "") -> str:
    """One past step. A reply that says more than the action line (a thought, a state) is
    kept verbatim, so reasoning agents see their own earlier words."""
    said = reply.strip()
    if said and said.lower() not in (f"action: {action}".lower(), action.lower()):
        return f"Step {t}:\n{said}\n(reward {reward:g})\n{text}"
    return f"Step {t}: You took action: {action} (reward {reward:g}).\n{text}"


@dataclass(frozen=True)
class WindowState:
    """The state of ``window:k`` / ``full``: the step count and the last k rendered steps."""

    t: int = 0
    steps: tuple[str, ...] = ()


class WindowMemory(Memory[WindowState]):
    """Long Form: the last ``k`` transitions, each as action, reward and observation."""

    name = "full"

    def __init__(self, render_obs: RenderObs, k: int = 30) -> None:
        self.render_obs = render_obs
        self.k = k

    def init(self, obs: Observation, privileged: PrivilegedView | None) -> WindowState:
        return WindowState()

    async def write(
        self, state: WindowState, transition: Transition, model: LLM | None
    ) -> tuple[WindowState, list[Call]]:
        tr = transition
        t = state.t + 1
        text = step_text(t, tr.action, tr.reward, self.render_obs(tr.observation), tr.reply)
        return WindowState(t, (*state.steps, text)[-self.k :]), []

    def render(self, state: WindowState) -> str:
        if not state.steps:
            return ""
        return "Past trajectory:\n" + "\n".join(state.steps)


SUMMARY_SYSTEM = "You keep a short running summary of an agent's progress in a task."
SUMMARY_INSTRUCTION = (
    "Write the updated summary in at most 25 tokens. Keep only what matters for the next "
    "decision: the current state, progress toward the goal, and what failed. "
    "Reply with the summary only."
)


@dataclass(frozen=True)
class SummaryState:
    """The state of ``summary``: the goal and the model's rolling summary."""

    goal: str
    summary: str = ""
    t: int = 0


class SummaryMemory(Memory[SummaryState]):
    """Rolling summary m_t = psi(m_{t-1}, o_t, a_t, r_t), one writer call per step."""

    name = "summary"
    tags = frozenset({"needs-model"})

    def __init__(self, render_obs: RenderObs, seed: int = 0, params: GenParams | None = None):
        self.render_obs = render_obs
        self.seed = seed
        base = params or GenParams()
        self.params = GenParams(
            temperature=base.temperature, top_p=base.top_p, max_tokens=48, stop=("\n\n",)
        )

    def init(self, obs: Observation, privileged: PrivilegedView | None) -> SummaryState:
        return SummaryState(goal=obs.goal)

    def messages(
        self, state: SummaryState, obs: Observation, action: str, reward: float
    ) -> list[dict[str, Any]]:
        previous = state.summary or "(none yet: this is the first step)"
        user = (
            f"Goal: {state.goal}\n\nPrevious summary:\n{previous}\n\n"
            f"Latest step:\nAction: {action}\nReward: {reward:g}\n"
            f"Observation:\n{self.render_obs(obs)}\n\n{SUMMARY_INSTRUCTION}"
        )
        return [{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": user}]

    async def write(
        self, state: SummaryState, transition: Transition, model: LLM | None
    ) -> tuple[SummaryState, list[Call]]:
        if model is None:
            raise ConfigError("history 'summary' needs a model; the expert agent has none")
        t = state.t + 1
        msgs = self.messages(state, transition.observation, transition.action, transition.reward)
        params = replace(self.params, seed=call_seed(self.seed, t, "summary"))
        completion = await model.complete(msgs, params)
        summary = " ".join(completion.text.strip().split())
        return replace(state, summary=summary, t=t), [Call("summary", msgs, completion)]

    def render(self, state: SummaryState) -> str:
        return f"Summary of past actions:\n{state.summary}" if state.summary else ""


class OracleSummaryMemory(Memory[str]):
    """The true current state and goal from the simulator, rendered in the run's format
    (so ``dict-list x oracle-summary`` shows one structure, not two)."""

    name = "oracle-summary"
    tags = frozenset({"reads-privileged"})

    def __init__(self, fmt: str = "natural") -> None:
        self.format = fmt

    def _text(self, goal: str, privileged: PrivilegedView | None) -> str:
        if privileged is None:
            raise ConfigError("history 'oracle-summary' needs the privileged view")
        return f"{render(self.format, privileged.facts)} Goal: {goal}"

    def init(self, obs: Observation, privileged: PrivilegedView | None) -> str:
        return self._text(obs.goal, privileged)

    async def write(
        self, state: str, transition: Transition, model: LLM | None
    ) -> tuple[str, list[Call]]:
        return self._text(transition.observation.goal, transition.privileged), []

    def render(self, state: str) -> str:
        return f"Summary of the current state (from the simulator):\n{state}"


@HISTORIES.register("full", "full")
def _full(arg: None, c: BuildContext) -> Memory:
    return WindowMemory(c.render_obs, k=c.history_len)


class NoMemory(Memory[None]):
    """Memoryless: the prompt carries no past (seed 001's agent decides from the current
    observation alone)."""

    name = "none"

    def init(self, obs: Observation, privileged: PrivilegedView | None) -> None:
        return None

    async def write(
        self, state: None, transition: Transition, model: LLM | None
    ) -> tuple[None, list[Call]]:
        return None, []

    def render(self, state: None) -> str:
        return ""


@HISTORIES.register("none", "none")
def _none(arg: None, c: BuildContext) -> Memory:
    return NoMemory()


@HISTORIES.register(
    "window",
    "window:<k>",
    params=(Param("k", count(1), help="the past steps the prompt keeps", positional=True),),
)
def _window(args: Args, c: BuildContext) -> Memory:
    return WindowMemory(c.render_obs, k=args.k)


@HISTORIES.register("summary", "summary", tags=("needs-model",))
def _summary(arg: None, c: BuildContext) -> Memory:
    return SummaryMemory(c.render_obs, c.seed, params=c.params)


@HISTORIES.register("oracle-summary", "oracle-summary", tags=("reads-privileged",))
def _oracle(arg: None, c: BuildContext) -> Memory:
    return OracleSummaryMemory(c.format)
