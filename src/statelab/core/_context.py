"""The typed, read-only views the episode loop hands to components.

Agents, groundings and world models never receive the env's ``info``: they get a
:class:`StepContext`. Its ``privileged`` field is ``None`` unless the component is tagged
``reads-privileged`` (oracle-*, experts); nothing else in the context leads to the env but
``oracle``, the env's validity check that the *validate* stage hands to the components.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from statelab.core._env import Observation, Policy
from statelab.core._prompt import Prompt


def frozen_view(d: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only view of a mapping (its values are the env's; treat them as read-only)."""
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class PrivilegedView:
    """The env's privileged truth of this step (hidden objects, full map, walkthrough) and
    its expert policy. Only components tagged ``reads-privileged`` are given one."""

    info: Mapping[str, Any]
    expert: Policy | None = None

    @property
    def facts(self) -> Any:
        return self.info.get("privileged", {}).get("facts")

    def get(self, key: str, default: Any = None) -> Any:
        return self.info.get("privileged", {}).get(key, default)


class WorldHandle:
    """How an agent asks the run's world model questions during *decide*.

    Each question is answered at once (no env step), recorded with its answer, and counted:
    past ``limit`` questions in one step, the answer says so and no component is asked.

    The handle holds only the components that answer questions, each with the context it
    may read: nothing else of the episode is reachable through it. A component that reads
    the privileged view (an oracle world model) answers from the truth; that is what it is.
    """

    def __init__(self, answerers: Sequence[tuple[Any, StepContext]] = (), limit: int = 10):
        self._answerers = tuple(answerers)
        self.limit = limit
        self.asked: list[dict[str, Any]] = []

    @property
    def available(self) -> bool:
        return bool(self._answerers)

    def example(self) -> str | None:
        """The in-context example the run's world model offers the agent (e.g. a solved
        episode that opens with a query), from the first answering component with an
        ``in_context_example(ctx)`` method; None when none offers one."""
        for component, ctx in self._answerers:
            offer = getattr(component, "in_context_example", None)
            text = offer(ctx) if offer is not None else None
            if text is not None:
                return str(text)
        return None

    def variant(self) -> str:
        """The run's world-model variant as its spelling names it (``memory``, ``belief``,
        ``walle`` ...: the first answering component's ``variant``), ``none`` without one."""
        for component, _ in self._answerers:
            name = getattr(component, "variant", None)
            if isinstance(name, str) and name:
                return name
        return "none"

    async def ask(self, query: str) -> str:
        if len(self.asked) >= self.limit:
            answer = f"(no answer: at most {self.limit} questions per step)"
        elif not self._answerers:
            answer = "(no answer: this run has no world model)"
        else:
            got: str | None = None
            for component, ctx in self._answerers:
                reply = component.answer(query, ctx)
                if isinstance(reply, Awaitable):
                    reply = await reply
                if reply is not None:
                    got = str(reply)
                    break
            answer = got if got is not None else "(no answer: no component knows)"
        self.asked.append({"query": query, "answer": answer})
        return answer


@dataclass(frozen=True)
class StepContext:
    """Everything a component may read when the agent decides one step."""

    observation: Observation
    prompt: Prompt
    #: env steps taken so far in this episode
    step: int
    #: the episode's config seed (statistics pair on it); the stream a component draws
    #: from is :attr:`sampling_seed`
    seed: int
    #: the env's config spelling: a few-shot source reads its train split (nothing branches
    #: on it; the task is :attr:`task_family` and :attr:`task`)
    env: str = ""
    #: whether the env accepted the previous action
    last_valid: bool = True
    #: feedback of proposals rejected earlier in this step (validate stage), oldest first
    rejected: tuple[str, ...] = ()
    world: WorldHandle = field(default_factory=WorldHandle)
    #: ``None`` unless the component reads privileged data
    privileged: PrivilegedView | None = None
    #: the env's validity oracle (``env.would_accept(action) -> bool``: would the env accept
    #: the action, asked without stepping it; seed 004's oracle WALL-E on ScienceWorld); set
    #: in the *validate* stage only, and only when the env has one
    oracle: Callable[[str], bool] | None = None
    #: the episode's sampling seed, rollout included (:mod:`statelab.run.seeding`); None
    #: outside an episode, where it is ``seed``
    sampling: int | None = None
    #: the env's task family and the episode's task in it (``Env.task_family``,
    #: ``Env.current_task``; "" and None outside an episode or on an env that names none):
    #: what few-shot example sets are keyed by, so no component reads the env's spelling
    task_family: str = ""
    task: str | None = None

    @property
    def sampling_seed(self) -> int:
        """The seed of the episode's own sampling stream (every (seed, rollout) pair of a
        run has one of its own; never the clock)."""
        return self.seed if self.sampling is None else self.sampling

    @classmethod
    def for_prompt(
        cls,
        prompt: Prompt,
        observation: Observation | None = None,
        *,
        env: str = "",
        last_valid: bool = True,
        privileged: PrivilegedView | None = None,
        step: int = 0,
        seed: int = 0,
    ) -> StepContext:
        """A context outside an episode (notebooks, tests): the observation defaults to the
        prompt's view."""
        obs = observation or Observation(prompt.view, None, prompt.actions, prompt.goal)
        return cls(obs, prompt, step, seed, env, last_valid=last_valid, privileged=privileged)

    @property
    def admissible(self) -> tuple[str, ...] | None:
        return self.prompt.actions

    @property
    def goal(self) -> str:
        return self.observation.goal


@dataclass(frozen=True)
class Transition:
    """One env step as the *update* stage sees it."""

    t: int
    action: str
    reply: str
    reward: float
    observation: Observation
    terminated: bool
    truncated: bool
    valid: bool = True
    #: ``None`` unless the receiving component reads privileged data
    privileged: PrivilegedView | None = None
