"""What one episode is built from: its components (from the run's spelling on each axis),
the model timed apart from statelab's own work, the env's scripted prelude as transitions,
and a run's description as the store keeps it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from statelab.agents import AGENTS
from statelab.core import (
    MODEL_AXES,
    MODEL_FREE,
    Agent,
    Component,
    Env,
    GenParams,
    Memory,
    Transition,
    WorldModel,
    describe,
)
from statelab.envs import ENVS, make_env
from statelab.llm import TimedLLM as TimedLLM  # moved to statelab.llm; re-exported
from statelab.run.axes import env_context
from statelab.run.config import RunSpec
from statelab.state import HISTORIES
from statelab.state.grounding import GROUNDINGS, Grounding
from statelab.worldmodels import WORLDMODELS


def reads_privileged(component: Any) -> bool:
    return "reads-privileged" in getattr(component, "tags", ())


@dataclass
class Components:
    """The components of one episode, built from the run's spellings."""

    env: Env
    agent: Agent
    memory: Memory
    grounding: Grounding
    world: WorldModel
    render_obs: Any

    @classmethod
    def build(cls, spec: RunSpec, seed: int) -> Components:
        env = make_env(spec.env, max_steps=spec.max_steps)
        params = GenParams(**spec.params) if spec.params else GenParams()
        ctx = replace(
            env_context(
                spec.env, params, fmt=spec.format, seed=seed, max_steps=spec.max_steps, dry=False
            ),
            manual=env.manual,
        )
        render_obs = ctx.render_obs
        grounding = GROUNDINGS.build(spec.grounding, ctx)
        env.want_image = grounding.needs_vision
        return cls(
            env=env,
            agent=AGENTS.build(spec.agent, ctx),
            memory=HISTORIES.build(spec.history, ctx),
            grounding=grounding,
            world=WORLDMODELS.build(spec.worldmodel, ctx),
            render_obs=render_obs,
        )

    def hooked(self) -> list[Component]:
        """Every component with hooks, in the order the loop calls them."""
        return [self.memory, self.grounding, self.world, self.agent]

    def describe(self) -> dict[str, Any]:
        return {
            "agent": describe(self.agent),
            "history": describe(self.memory),
            "grounding": describe(self.grounding),
            "worldmodel": describe(self.world),
        }


def prelude_transitions(info: dict[str, Any]) -> list[Transition]:
    """An env's scripted steps before the agent acts (``info["prelude"]``: ``(action,
    Observation)`` pairs, e.g. the cooking env's Phase A), as transitions for the memory."""
    return [
        Transition(t=0, action=a, reply=a, reward=0.0, observation=o, terminated=False,
                   truncated=False)
        for a, o in info.get("prelude", ())
    ]  # fmt: skip


def describe_run(spec: RunSpec) -> dict[str, Any]:
    """The descriptions (spelling, label, tags, args) of a run's components, built dry: what the
    store keeps with the run, and what reports select rows by."""
    params = GenParams(**spec.params) if spec.params else GenParams()
    ctx = env_context(spec.env, params, fmt=spec.format)
    out = {"env": ENVS.description(spec.env), "agent": describe(AGENTS.build(spec.agent, ctx))}
    if spec.uses_model:
        out["history"] = describe(HISTORIES.build(spec.history, ctx))
        out["grounding"] = describe(GROUNDINGS.build(spec.grounding, ctx))
        out["worldmodel"] = describe(WORLDMODELS.build(spec.worldmodel, ctx))
    return out


def spec_dict(spec: RunSpec) -> dict[str, Any]:
    """A run spec as JSON-able data (stored with the run; model specs without credentials)."""
    values = {
        **spec.axes_values,
        **{k: v for k, v in spec.axes().items() if k in MODEL_AXES},
    }
    if not spec.uses_model:
        values["model"] = MODEL_FREE
    return {**values, "params": spec.params, "max_steps": spec.max_steps}
