"""What one episode is built from: its components (from the run's spelling on each axis),
the model timed apart from statelab's own work, the env's scripted prelude as transitions,
and a run's description as the store keeps it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, cast

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
    prelude_of,
)
from statelab.envs import ENVS, make_env
from statelab.run.axes import COMPONENT_AXES, env_context
from statelab.run.spec import RunSpec
from statelab.state.grounding import Grounding


def reads_privileged(component: Any) -> bool:
    return "reads-privileged" in getattr(component, "tags", ())


@dataclass
class Components:
    """The components of one episode, built from the run's spellings: the env, and one
    component for every axis of the table that builds one per episode
    (:attr:`~statelab.run.axes.Axis.hooks`), by axis name. The spine's roles (``agent``,
    ``memory``, ``grounding``, ``world``) are typed views of those parts; an added axis needs
    no change here."""

    env: Env
    #: axis name -> its built component, in the table's order
    parts: dict[str, Component]
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
        values = spec.axes_values
        parts = {a.name: a.registry.build(values[a.name], ctx) for a in COMPONENT_AXES}
        c = cls(env=env, parts=parts, render_obs=ctx.render_obs)
        env.want_image = c.grounding.needs_vision
        return c

    @property
    def agent(self) -> Agent:
        return cast(Agent, self.parts["agent"])

    @property
    def memory(self) -> Memory:
        return cast(Memory, self.parts["history"])

    @property
    def grounding(self) -> Grounding:
        return cast(Grounding, self.parts["grounding"])

    @property
    def world(self) -> WorldModel:
        return cast(WorldModel, self.parts["worldmodel"])

    def hooked(self) -> list[Component]:
        """Every component with hooks, in the order the loop calls them (``Axis.hooks``)."""
        return [self.parts[a.name] for a in sorted(COMPONENT_AXES, key=lambda a: a.hooks or 0)]

    def describe(self) -> dict[str, Any]:
        return {name: describe(part) for name, part in self.parts.items()}


def prelude_transitions(info: dict[str, Any]) -> list[Transition]:
    """An env's scripted steps before the agent acts (``info["prelude"]``: ``(action,
    Observation)`` pairs, e.g. the cooking env's Phase A), as transitions for the memory."""
    return [
        Transition(t=0, action=a, reply=a, reward=0.0, observation=o, terminated=False,
                   truncated=False)
        for a, o in prelude_of(info)
    ]  # fmt: skip


def describe_run(spec: RunSpec) -> dict[str, Any]:
    """The descriptions (spelling, label, tags, args) of a run's components, built dry: what the
    store keeps with the run, and what reports select rows by."""
    params = GenParams(**spec.params) if spec.params else GenParams()
    ctx = env_context(spec.env, params, fmt=spec.format)
    values = spec.axes_values
    out: dict[str, Any] = {"env": ENVS.description(spec.env)}
    out.update(
        (a.name, describe(a.registry.build(values[a.name], ctx)))
        for a in COMPONENT_AXES
        if a.model_free or spec.uses_model
    )
    return out


def spec_dict(spec: RunSpec) -> dict[str, Any]:
    """A run spec as JSON-able data (stored with the run; model specs without credentials)."""
    values = {
        **spec.axes_values,
        **{k: v for k, v in spec.axes().items() if k in MODEL_AXES},
    }
    if not spec.uses_model:
        values["model"] = MODEL_FREE
    out = {**values, "params": spec.params, "max_steps": spec.max_steps}
    if spec.replay:
        out["replay"] = True
    return {**out, "limits": spec.limits} if spec.limits else out
