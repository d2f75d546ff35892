"""The granularity axis (seed 000, section 3.2): what of the past the prompt carries.

- ``full``: the last k steps verbatim, k = the env's Table 2 history length (Long Form).
- ``window:k``: the last k steps verbatim.
- ``summary``: a rolling summary m_t = psi(m_{t-1}, o_t, a_t, r_t) written by the same model
  after every step, asked for at most 25 tokens; it replaces the history in the prompt.
- ``oracle-summary``: the simulator's true current state (rendered in natural language) and
  the goal, in place of the model's summary (seed 000, section 4.1.4). Reads privileged info.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from statelab.core import LLM, Call, ConfigError, GenParams, Memory, Observation, Registry
from statelab.state.formats import render

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


class WindowMemory(Memory):
    """Long Form: the last ``k`` transitions, each as action, reward and observation."""

    name = "full"

    def __init__(self, render_obs: RenderObs, manual: str, seed: int = 0, k: int = 30) -> None:
        super().__init__(render_obs, manual, seed)
        self.k = k
        self.t = 0
        self.steps: deque[str] = deque(maxlen=k)

    def reset(self, obs: Observation, info: dict[str, Any]) -> None:
        self.t = 0
        self.steps.clear()

    async def update(
        self,
        obs: Observation,
        action: str,
        reward: float,
        info: dict[str, Any],
        llm: LLM | None,
        reply: str = "",
    ) -> list[Call]:
        self.t += 1
        self.steps.append(step_text(self.t, action, reward, self.render_obs(obs), reply))
        return []

    def render(self) -> str:
        if not self.steps:
            return ""
        return "Past trajectory:\n" + "\n".join(self.steps)


SUMMARY_SYSTEM = "You keep a short running summary of an agent's progress in a task."
SUMMARY_INSTRUCTION = (
    "Write the updated summary in at most 25 tokens. Keep only what matters for the next "
    "decision: the current state, progress toward the goal, and what failed. "
    "Reply with the summary only."
)


class SummaryMemory(Memory):
    """Rolling summary written by the acting model itself (one extra call per step)."""

    name = "summary"

    def __init__(
        self,
        render_obs: RenderObs,
        manual: str,
        seed: int = 0,
        params: GenParams | None = None,
    ) -> None:
        super().__init__(render_obs, manual, seed)
        base = params or GenParams()
        self.params = GenParams(
            temperature=base.temperature, top_p=base.top_p, max_tokens=48, stop=("\n\n",)
        )
        self.summary = ""
        self.t = 0
        self.goal = ""

    def reset(self, obs: Observation, info: dict[str, Any]) -> None:
        self.summary, self.t, self.goal = "", 0, obs.goal

    def messages(self, obs: Observation, action: str, reward: float) -> list[dict[str, Any]]:
        previous = self.summary or "(none yet: this is the first step)"
        user = (
            f"Goal: {self.goal}\n\nPrevious summary:\n{previous}\n\n"
            f"Latest step:\nAction: {action}\nReward: {reward:g}\n"
            f"Observation:\n{self.render_obs(obs)}\n\n{SUMMARY_INSTRUCTION}"
        )
        return [{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": user}]

    async def update(
        self,
        obs: Observation,
        action: str,
        reward: float,
        info: dict[str, Any],
        llm: LLM | None,
        reply: str = "",
    ) -> list[Call]:
        if llm is None:
            raise ConfigError("history 'summary' needs a model; the expert agent has none")
        self.t += 1
        msgs = self.messages(obs, action, reward)
        params = replace(self.params, seed=call_seed(self.seed, self.t, "summary"))
        completion = await llm.complete(msgs, params)
        self.summary = " ".join(completion.text.strip().split())
        return [Call("summary", msgs, completion)]

    def render(self) -> str:
        return f"Summary of past actions:\n{self.summary}" if self.summary else ""


class OracleSummaryMemory(Memory):
    """The true current state and goal from the simulator, in natural language."""

    name = "oracle-summary"

    def __init__(self, render_obs: RenderObs, manual: str, seed: int = 0) -> None:
        super().__init__(render_obs, manual, seed)
        self.text = ""

    def _set(self, obs: Observation, info: dict[str, Any]) -> None:
        facts = info["privileged"]["facts"]
        self.text = f"{render('natural', facts)} Goal: {obs.goal}"

    def reset(self, obs: Observation, info: dict[str, Any]) -> None:
        self._set(obs, info)

    async def update(
        self,
        obs: Observation,
        action: str,
        reward: float,
        info: dict[str, Any],
        llm: LLM | None,
        reply: str = "",
    ) -> list[Call]:
        self._set(obs, info)
        return []

    def render(self) -> str:
        return f"Summary of the current state (from the simulator):\n{self.text}"


@dataclass(frozen=True)
class MemoryContext:
    """What every history component is built from."""

    render_obs: RenderObs
    manual: str
    seed: int
    history_len: int
    params: GenParams


def window_size(arg: str | None) -> int:
    """The k of ``window:k`` (a one-line ConfigError when it is not a positive number)."""
    if arg is None or not arg.isdigit() or int(arg) < 1:
        raise ConfigError(
            f"history 'window:{arg or ''}' needs a positive step count, e.g. window:5"
        )
    return int(arg)


HISTORIES.register("full", "full")(
    lambda c, arg: WindowMemory(c.render_obs, c.manual, c.seed, k=c.history_len)
)
HISTORIES.register("window", "window:<k>")(
    lambda c, arg: WindowMemory(c.render_obs, c.manual, c.seed, k=window_size(arg))
)
HISTORIES.register("summary", "summary")(
    lambda c, arg: SummaryMemory(c.render_obs, c.manual, c.seed, params=c.params)
)
HISTORIES.register("oracle-summary", "oracle-summary")(
    lambda c, arg: OracleSummaryMemory(c.render_obs, c.manual, c.seed)
)


def check_history(spelling: str) -> None:
    """Validate a history spelling without building it."""
    name, arg = HISTORIES.split(spelling)
    if name == "window":
        window_size(arg)


def make_memory(
    spelling: str,
    render_obs: RenderObs,
    manual: str,
    seed: int,
    *,
    history_len: int,
    params: GenParams,
) -> Memory:
    name, arg = HISTORIES.split(spelling)
    ctx = MemoryContext(render_obs, manual, seed, history_len, params)
    return HISTORIES.get(name)(ctx, arg)
